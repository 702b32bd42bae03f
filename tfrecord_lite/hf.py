"""Hugging Face `datasets` adapter (extra [hf]; `import tfrecord_lite` never imports this module):
TFRecord files as a datasets.Dataset (Arrow-backed, memory-mapped from the datasets cache) or an
IterableDataset whose shards are the files, with no TensorFlow.

Strategy: an ArrowBasedBuilder — the builder `datasets` itself uses for Arrow and Parquet files —
whose tables are the record batches of iter_arrow_batches (no per-row Python generator), cast to
HF Features derived from the spec (inferred from the first file when none is given). Building
with num_proc, streaming, split_dataset_by_node and DataLoader workers then divide the files as
`datasets` divides any sharded builder's. The TF image layout (image/encoded) becomes an Image()
column: its bytes wrapped in the struct<bytes, path> that Image() stores, decoded to PIL on access.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tfrecord_lite._datasets.pieces import Piece, PieceOptions, input_files, piece_batches
from tfrecord_lite._datasets.schema import infer_sequence_features
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._example.spec import FeatureSpec, FixedLenFeature
from tfrecord_lite._example.validate import check_int, feature_specs
from tfrecord_lite._images.records import ENCODED
from tfrecord_lite._records.reader import iter_records
from tfrecord_lite._storage.locations import is_url, split_options
from tfrecord_lite._storage.remote import RemoteObject
from tfrecord_lite._storage.sources import Sources
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

try:
    import datasets
    import pyarrow as pa
except ImportError as exc:  # pragma: no cover - exercised where datasets is missing
    raise ImportError(f"tfrecord_lite.hf needs Hugging Face datasets ({exc}): pip install 'tfrlite[hf]'") from exc

from tfrecord_lite._arrow.batches import arrow_type, sequence_arrow_type

__all__ = ["hf_features", "to_hf_dataset"]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


_IMAGE_STORAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def _plain(kind: pa.DataType) -> pa.DataType:
    """An Arrow type of decode_arrow in the 32-bit offsets that HF's List and Value("binary") use."""
    if pa.types.is_large_binary(kind):
        return pa.binary()
    if pa.types.is_large_list(kind) or pa.types.is_list(kind):
        return pa.list_(_plain(kind.value_type))
    if pa.types.is_fixed_size_list(kind):
        return pa.list_(_plain(kind.value_type), kind.list_size)
    return kind


def _image_columns(specs: Mapping[str, FeatureSpec], image_keys: Any) -> dict[str, str]:
    """{bytes key: image column name}: "auto" takes image/encoded as "image" when the spec has it."""
    if image_keys is None:
        return {}
    if image_keys == "auto":
        spec = specs.get(ENCODED)
        one_image = isinstance(spec, FixedLenFeature) and spec.shape == () and spec.dtype == "bytes"
        return {ENCODED: "image"} if one_image else {}
    if isinstance(image_keys, str):
        image_keys = [image_keys]
    columns = dict(image_keys) if isinstance(image_keys, Mapping) else {key: key for key in image_keys}
    for key in columns:
        spec = specs.get(key)
        if not (isinstance(spec, FixedLenFeature) and spec.shape == () and spec.dtype == "bytes"):
            raise ValueError(f"image key {key!r} must be FixedLenFeature([], 'bytes') in the spec, not {spec!r}")
    return columns


def hf_features(
    features: Mapping[str, Any], image_keys: Any = "auto", sequence_features: Mapping[str, Any] | None = None
) -> datasets.Features:
    """The HF Features of the columns `to_hf_dataset` makes for the spec `features`: Value("int64"),
    Value("float32"), Value("binary"), List(...) (with a length for fixed shapes), Image(); then a
    List(List(...)) of steps per feature list of `sequence_features`."""
    specs = feature_specs(features) or {}
    images = _image_columns(specs, image_keys)
    fields = [(images.get(key, key), _plain(arrow_type(spec))) for key, spec in specs.items()]
    lists = feature_specs(sequence_features, "sequence_features") or {}
    fields += [(key, _plain(sequence_arrow_type(spec))) for key, spec in lists.items()]
    hf = datasets.Features.from_arrow_schema(pa.schema(fields))
    for name in images.values():
        hf[name] = datasets.Image()
    return hf


def _image_array(column: pa.ChunkedArray) -> pa.Array:
    data = column.combine_chunks().cast(pa.binary())
    return pa.StructArray.from_arrays([data, pa.nulls(len(data), pa.string())], fields=list(_IMAGE_STORAGE))


@dataclass
class TFRecordConfig(datasets.BuilderConfig):  # type: ignore[misc]
    features: datasets.Features | None = None


class TFRecordBuilder(datasets.ArrowBasedBuilder):  # type: ignore[misc]
    """Builds a dataset of the Examples of `files`, decoded by `specs`, split "train"."""

    BUILDER_CONFIG_CLASS = TFRecordConfig

    def __init__(
        self,
        files: list[str],
        specs: dict[str, FeatureSpec],
        images: dict[str, str],
        batch_size: int,
        options: PieceOptions,
        lists: dict[str, FeatureSpec] | None = None,
        **kwargs: Any,
    ) -> None:
        self._files, self._specs, self._images, self._batch_size = files, specs, images, batch_size
        self._options, self._lists = options, lists
        features = hf_features(specs, images, lists)
        super().__init__(dataset_name="tfrecord_lite", features=features, hash=self._fingerprint(), **kwargs)

    def _fingerprint(self) -> str:
        """Names the cache: a change to a file (size, mtime; an object's ETag), the spec or the options
        rebuilds it."""
        stats = [(p, *self._version(p)) for p in self._files]
        lists = sorted((self._lists or {}).items())
        options = self._options
        on_error = options.on_error
        on_error = on_error if isinstance(on_error, str) else getattr(on_error, "__qualname__", "a callable")
        reading = (options.compression, options.verify, on_error, options.max_skipped, options.max_record_bytes)
        identity = repr(
            (stats, sorted(self._specs.items()), lists, sorted(self._images.items()), self._batch_size, reading)
        )
        return hashlib.sha256(identity.encode()).hexdigest()[:16]

    def _version(self, path: str) -> tuple[Any, ...]:
        if not is_url(path):
            return os.stat(path).st_size, os.stat(path).st_mtime_ns
        options, fs = split_options(self._options.storage_options)
        return (RemoteObject(path, options, fs).version(),)

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(features=self.config.features)

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        return [datasets.SplitGenerator(name=datasets.Split.TRAIN, gen_kwargs={"files": self._files})]

    def _generate_shards(self, files: list[str]) -> Iterator[str]:
        yield from files

    def _generate_tables(self, files: list[str]) -> Iterator[tuple[Any, pa.Table]]:
        schema = self.config.features.arrow_schema
        for file_number, path in enumerate(files):
            piece = Piece(path, 0)
            batches = piece_batches(piece, self._specs, self._batch_size, self._options, self._lists)
            for batch_number, batch in enumerate(batches):
                yield datasets.builder.Key(file_number, batch_number), self._table(batch, schema)

    def _table(self, batch: pa.RecordBatch, schema: pa.Schema) -> pa.Table:
        table = pa.Table.from_batches([batch])
        for key, name in self._images.items():
            i = table.schema.get_field_index(key)
            table = table.set_column(i, name, _image_array(table.column(i)))
        return table.cast(schema)


def to_hf_dataset(
    source: Sources,
    *,
    features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
    streaming: bool = False,
    num_proc: int | None = None,
    image_keys: Any = "auto",
    batch_size: int = 2048,
    cache_dir: str | os.PathLike[str] | None = None,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> datasets.Dataset | datasets.IterableDataset:
    """The Examples of `source` (files, folders, globs, URLs, or a list of those) as a Hugging Face
    `datasets.Dataset` — written once to the datasets cache (`cache_dir`, else the default) in
    Arrow, by `num_proc` processes — or, with `streaming=True`, an `IterableDataset` whose shards
    are the files. Columns follow `features` (a spec; without one it is inferred from the first
    file) with HF Features from `hf_features`. `image_keys`: "auto" turns image/encoded into an
    Image() column "image", whose values are PIL images; a list of bytes keys, or a mapping
    {key: column name}, names others; None keeps the bytes. SequenceExamples: each feature list
    is a List(List(...)) column of steps beside the context's, typed by `sequence_features` (then
    `features` is the context's spec), inferred with the context when neither spec is given.

    The reader options are iter_records' (a change to one of them builds the cache anew);
    `max_skipped` counts the damaged spans of each file, which `datasets` may read in another
    process. `storage_options` open URLs (s3://, gs://, ...): fsspec's options, or an fsspec
    filesystem."""
    check_int("batch_size", batch_size, 1)
    options = PieceOptions(compression, verify, on_error, max_skipped, storage_options, max_record_bytes)
    files = input_files(source, storage_options)
    specs = feature_specs(features)
    lists = feature_specs(sequence_features, "sequence_features")
    if specs is None and lists is None:
        first = iter_records(
            files[0],
            compression=options.compression or "",
            verify=verify,
            on_error=on_error,
            max_skipped=max_skipped,
            storage_options=storage_options,
            max_record_bytes=max_record_bytes,
        )
        specs, lists = infer_sequence_features(first)
    specs = specs or {}
    builder = TFRecordBuilder(
        files,
        specs,
        _image_columns(specs, image_keys),
        batch_size,
        options,
        lists or None,
        cache_dir=None if cache_dir is None else os.fspath(cache_dir),
    )
    if streaming:
        return builder.as_streaming_dataset(split=datasets.Split.TRAIN)
    failed: TFRecordError | None = None
    try:
        builder.download_and_prepare(num_proc=num_proc)
    except datasets.exceptions.DatasetGenerationError as err:
        if not isinstance(err.__cause__, TFRecordError):
            raise
        failed = err.__cause__  # the reader's error (its file, record and offset), not datasets' wrapper
    if failed is not None:
        raise failed  # outside the handler: no context chain back to the wrapper, which holds it
    return builder.as_dataset(split=datasets.Split.TRAIN)
