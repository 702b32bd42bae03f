"""Examples as Apache Arrow record batches, and Arrow data as Examples (encoded by
encode.py, re-exported here): the code behind tfrecord_lite.arrow, which the engine
adapters (Ray, Dask, HF, Spark), the engine pieces and the CLI's `convert` use from here.
pyarrow is imported at its first use (lazy.py), so importing this module imports nothing heavy.

Strategy: the batch decoder (_batches/flat.py) hands back flat columns (a flat run of values,
offsets, presence); here those buffers are only wrapped in Arrow arrays of the types the spec
asks for (tfx-bsl's types without one), whose layout they already have. Writing a file
(write_arrow) streams encode.py's records through the writer, published whole.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from tfrecord_lite._arrow.encode import encode_arrow, iter_encoded, iter_framed_buffers
from tfrecord_lite._arrow.feature_lists import feature_list_field
from tfrecord_lite._arrow.lazy import lazy
from tfrecord_lite._arrow.union import concat_batches
from tfrecord_lite._batches.columnar import Spans, placing, without
from tfrecord_lite._batches.flat import (
    Binary,
    Flat,
    Nested,
    decode_flat,
    decode_sequence_flat,
    spans_of,
)
from tfrecord_lite._batches.sequence_probe import CLASH, feature_list_rows
from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._errors import FeatureError, TFRecordError
from tfrecord_lite._example.ragged_build import FlatRagged
from tfrecord_lite._example.ragged_spec import RaggedFeature
from tfrecord_lite._example.spec import FeatureSpec, FixedLenSequenceFeature, SparseFeature, VarLenFeature
from tfrecord_lite._example.validate import check_int, feature_specs
from tfrecord_lite._example.wire import parse_sequence_example
from tfrecord_lite._records.example_batches import record_spans
from tfrecord_lite._records.indexed_spans import file_spans
from tfrecord_lite._records.reader import sources_of
from tfrecord_lite._records.writer import TFRecordWriter
from tfrecord_lite._storage.files import is_file_object
from tfrecord_lite._storage.publish import open_publication
from tfrecord_lite._stream.damage import DamagePolicy, as_policy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

__all__ = [
    "arrow_schema",
    "arrow_type",
    "columns_batch",
    "decode_arrow",
    "decode_arrow_columns",
    "decode_sequence_arrow",
    "encode_arrow",
    "file_arrow_batches",
    "iter_arrow_batches",
    "iter_encoded",
    "iter_framed_buffers",
    "read_arrow",
    "sequence_arrow_type",
    "write_arrow",
]

if TYPE_CHECKING:
    import pyarrow as pa
else:  # imported at first use (lazy.py)
    pa = lazy("pyarrow", globals(), "pa")

_ARROW_DTYPE: dict[str, pa.DataType] = {}  # dtype -> Arrow type, filled at first use (pyarrow is imported then)


def _arrow_type(dtype: str) -> pa.DataType:
    if not _ARROW_DTYPE:
        _ARROW_DTYPE.update(int64=pa.int64(), float32=pa.float32(), bytes=pa.large_binary())
    if dtype not in _ARROW_DTYPE:  # a RawFeature's numbers: numpy's dtype as Arrow names it
        _ARROW_DTYPE[dtype] = pa.from_numpy_dtype(np.dtype(dtype))
    return _ARROW_DTYPE[dtype]


# --------------------------------------------------------------------------- decoding


def _shaped_type(dtype: str, shape: tuple[int, ...]) -> pa.DataType:
    value_type = _arrow_type(dtype)
    for size in reversed(shape):  # Arrow has no fixed_size_list of 0: an (always empty) large_list
        value_type = pa.list_(value_type, size) if size else pa.large_list(value_type)
    return value_type


def arrow_type(spec: FeatureSpec) -> pa.DataType:
    """The Arrow type of a feature decoded with `spec`: FixedLenFeature([]) → the value type,
    [k] → fixed_size_list<k> (nested for more dimensions), VarLenFeature → large_list,
    FixedLenSequenceFeature → large_list of the step's type, RaggedFeature → large_list nested
    once more per partition, RawFeature → fixed_size_list of its dtype nested as its shape (the
    value type itself for shape []). A SparseFeature has none. A FixedLenSequenceFeature whose
    shape holds a 0 is a ValueError: its steps hold no values, so a column would lose their
    number (a VarLenFeature keeps it)."""
    if isinstance(spec, SparseFeature):
        raise TypeError(f"{spec!r} decodes to a Sparse, which Arrow columns have no layout for")
    if isinstance(spec, RaggedFeature):
        out = pa.large_list(_arrow_type(spec.dtype))
        for _ in spec.partitions:
            out = pa.large_list(out)
        return out
    if isinstance(spec, VarLenFeature):
        return pa.large_list(_arrow_type(spec.dtype))
    if isinstance(spec, FixedLenSequenceFeature):
        if 0 in spec.shape:
            raise ValueError(f"{spec!r}: steps of no values cannot be counted in an Arrow column; use VarLenFeature")
        return pa.large_list(_shaped_type(spec.dtype, spec.shape))
    return _shaped_type(spec.dtype, spec.shape)


def sequence_arrow_type(spec: FeatureSpec) -> pa.DataType:
    """The Arrow type of a feature list decoded with `spec`: a large_list of steps, each a
    large_list of values (VarLenFeature) or of the spec's shape (FixedLenSequenceFeature)."""
    return arrow_type(spec) if isinstance(spec, FixedLenSequenceFeature) else pa.large_list(arrow_type(spec))


def arrow_schema(
    specs: Mapping[str, FeatureSpec] | None, sequence_specs: Mapping[str, FeatureSpec] | None = None
) -> pa.Schema:
    """The Arrow schema of the record batches decoded with `specs`: a field of arrow_type per key;
    then, with `sequence_specs`, a feature-list field (marked: feature_lists.FEATURE_LIST) per key."""
    fields = [pa.field(key, arrow_type(spec)) for key, spec in (specs or {}).items()]
    lists = [feature_list_field(key, sequence_arrow_type(spec)) for key, spec in (sequence_specs or {}).items()]
    return pa.schema(fields + lists)


def _values(flat: Flat, dtype: str) -> pa.Array:
    values = flat.values
    if isinstance(values, Binary):  # Arrow's own layout: the buffers are taken as they are
        buffers = [None, pa.py_buffer(values.offsets), pa.py_buffer(values.data)]
        return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(values), buffers)
    if isinstance(values, np.ndarray) and values.dtype != np.bool_:  # numbers: their buffer taken as it is
        values = np.ascontiguousarray(values, dtype=dtype)
        return pa.Array.from_buffers(_arrow_type(dtype), len(values), [None, pa.py_buffer(values)])
    return pa.array(values, type=_arrow_type(dtype))


def _mask(valid: np.ndarray | None) -> pa.Array | None:
    return None if valid is None or valid.all() else pa.array(~valid)


def _list(offsets: np.ndarray, values: pa.Array, valid: np.ndarray | None) -> pa.Array:
    return pa.LargeListArray.from_arrays(pa.array(offsets), values, mask=_mask(valid))


def _fixed(values: pa.Array, shape: tuple[int, ...], rows: int) -> pa.Array:
    """`rows` values of `shape` from their flat values (see _shaped_type)."""
    for depth in range(len(shape) - 1, -1, -1):
        size = shape[depth]
        if size:
            values = pa.FixedSizeListArray.from_arrays(values, size)
        else:
            length = rows * int(np.prod(shape[:depth]))
            values = pa.LargeListArray.from_arrays(pa.array(np.zeros(length + 1, np.int64)), values)
    return values


def _column(flat: Flat | FlatRagged | None, spec: FeatureSpec | None, n: int) -> pa.Array:
    """The Arrow column of one flat feature (spec None: a large_list of the values' kind)."""
    if flat is None:
        return pa.nulls(n)
    if isinstance(flat, FlatRagged):  # a RaggedFeature's
        values = _values(flat.values, flat.values.values.dtype.name if spec is None else spec.dtype)
        for splits in reversed(flat.nested_splits):
            values = _list(splits, values, None)
        return values
    if spec is None:
        dtype = "bytes" if isinstance(flat.values, (list, Binary)) else str(flat.values.dtype)
        return _list(flat.offsets, _values(flat, dtype), flat.valid)
    if isinstance(spec, (RaggedFeature, SparseFeature)):
        raise TypeError(f"{spec!r} has no flat column: it is built from the columns of the keys it reads")
    values = _values(flat, spec.dtype)
    if isinstance(spec, VarLenFeature):
        return _list(flat.offsets, values, flat.valid)
    if isinstance(spec, FixedLenSequenceFeature):
        size = int(np.prod(spec.shape))
        steps = flat.offsets // size if size else np.zeros_like(flat.offsets)
        return _list(steps, _fixed(values, spec.shape, int(steps[-1])), None)
    return _fixed(values, spec.shape, n)


def _batch(columns: Mapping[str, pa.Array], n: int) -> pa.RecordBatch:
    if not columns:  # no features: still one row per record, as tfx-bsl gives
        return pa.RecordBatch.from_struct_array(pa.array([{}] * n, type=pa.struct([])))
    return pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))


def _record_batch(flats: Mapping[str, Flat | None], specs: Mapping[str, FeatureSpec] | None, n: int) -> pa.RecordBatch:
    if specs is not None and not flats:
        return pa.RecordBatch.from_arrays(
            [pa.array([], type=arrow_type(spec)) for spec in specs.values()], names=list(specs)
        )
    return _batch({key: _column(flat, specs[key] if specs else None, n) for key, flat in flats.items()}, n)


def decode_arrow(
    source: Sequence[Any],
    features: Mapping[str, Any] | None = None,
    *,
    sequence_features: Mapping[str, Any] | None = None,
) -> pa.RecordBatch:
    """Decode a batch of serialized Examples (or SequenceExamples), `source`, into an Arrow record
    batch.

    Without `features`: one large_list column per key (int64, float32 or large_binary), in
    order of their keys (as tfx-bsl); null where a record lacks the feature or it has no kind; a
    column of type null for a key that never has a kind — what tfx-bsl's schema-less
    ExamplesToRecordBatchDecoder gives. With a spec: TensorFlow's semantics (as
    decode_examples) in the types of `arrow_type`. Errors name the record of the batch.

    SequenceExamples: without any spec, a batch whose records carry feature lists decodes as
    decode_sequence_arrow does (the context columns, then a list<list<T>> column per feature
    list); `sequence_features` reads the records as SequenceExamples with that spec for the
    feature lists and `features` for the context. A key of `features` that is a feature list
    of some record is an error (it would decode as missing).
    """
    records = source if isinstance(source, (list, tuple)) else list(source)
    if sequence_features is not None:
        return decode_sequence_arrow(records, features, sequence_features)
    specs = feature_specs(features)
    arrow_schema(specs)  # a spec no column can hold fails before decoding
    spans = spans_of(records)
    sequences = feature_list_rows(*spans[:3])
    if sequences.any():
        if specs is None:
            return decode_sequence_arrow(records)
        _check_no_feature_lists(spans, sequences, specs)
    return _record_batch(decode_flat(spans, specs), specs, len(records))


def _check_no_feature_lists(spans: Spans, sequences: np.ndarray, specs: Mapping[str, FeatureSpec]) -> None:
    """A FeatureError where a key of the Example spec `specs` is a feature list of a record."""
    for k in np.flatnonzero(sequences).tolist():
        lists = parse_sequence_example(spans.record(k))[2]
        for key in specs:
            if key in lists:
                raise FeatureError(
                    key,
                    f"is a feature list in record {k} of the batch (a SequenceExample), not a feature: "
                    "give its spec in sequence_features",
                )


def _nested_column(nested: Nested | Flat | FlatRagged | None, spec: FeatureSpec | None, n: int) -> pa.Array:
    if not isinstance(nested, Nested):
        return _column(nested, spec, n)
    if spec is None and nested.inner.valid is not None and not nested.inner.valid.any():  # steps never have a kind
        return _list(nested.steps, pa.nulls(len(nested.inner.valid)), nested.valid)
    dtype = spec.dtype if spec is not None else ("bytes" if isinstance(nested.inner.values, list) else "")
    inner = _column(nested.inner, VarLenFeature(dtype or str(nested.inner.values.dtype)), 0)
    return _list(nested.steps, inner, nested.valid)


def decode_sequence_arrow(
    source: Sequence[Any],
    context_features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
) -> pa.RecordBatch:
    """Decode a batch of serialized SequenceExamples, `source`, into one record batch: the context
    features as decode_arrow gives them, then each feature list as a large_list of steps
    (without a spec or for a VarLenFeature, each step a large_list of values; for a
    FixedLenSequenceFeature, each step the spec's shape; without a spec, a feature list
    whose steps never have a kind holds null steps). The feature-list fields carry the
    feature_lists.FEATURE_LIST mark in the schema, which write_arrow reads back. A key that
    is both a context feature and a feature list is an error."""
    records = source if isinstance(source, (list, tuple)) else list(source)
    context_specs = feature_specs(context_features, "context_features")
    list_specs = feature_specs(sequence_features, "sequence_features")
    arrow_schema(context_specs, list_specs)  # a spec no column can hold fails before decoding
    context, lists = decode_sequence_flat(records, context_specs, list_specs)
    n = len(records)
    columns = {key: _column(flat, context_specs[key] if context_specs else None, n) for key, flat in context.items()}
    for key in lists.keys() & columns.keys():
        raise FeatureError(key, "is both a context feature and a feature list of this batch: " + CLASH)
    fields = [pa.field(key, column.type) for key, column in columns.items()]
    for key, nested in lists.items():
        columns[key] = _nested_column(nested, list_specs[key] if list_specs else None, n)
        fields.append(feature_list_field(key, columns[key].type))
    if not columns:
        return _batch(columns, n)
    return pa.RecordBatch.from_arrays(list(columns.values()), schema=pa.schema(fields))


def iter_arrow_batches(
    source: Any,
    *,
    features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
    columns: Sequence[str] | None = None,
    batch_size: int = 2048,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[pa.RecordBatch]:
    """Record batches of `batch_size` Examples (the last one may be smaller) from a path, a
    URL, a glob or a list of those (shards in order), decoded as decode_arrow does with
    `features`; memory stays flat whatever the size of the files. Without a spec each batch has
    the columns of its own records (a batch whose records carry feature lists:
    decode_sequence_arrow's). `sequence_features` reads SequenceExamples, `features` then being
    the context's spec. `columns` keeps those (in that order), and only those are decoded: what
    the other features hold does not matter; without a spec, a named key that no record of
    a batch has is a column of nulls there. The reader options are iter_records' (with
    on_error="skip", the batch before a damaged record may be smaller)."""
    return policy_arrow_batches(
        source,
        Reading(features, sequence_features, columns, batch_size),
        compression=compression,
        verify=verify,
        policy=as_policy(on_error, max_skipped),
        storage_options=storage_options,
        max_record_bytes=max_record_bytes,
    )


class Reading(NamedTuple):
    """What iter_arrow_batches decodes, apart from the reader options."""

    features: Mapping[str, Any] | None = None
    sequence_features: Mapping[str, Any] | None = None
    columns: Sequence[str] | None = None
    batch_size: int = 2048


def policy_arrow_batches(
    source: Any,
    reading: Reading,
    *,
    compression: Compression,
    verify: bool,
    policy: DamagePolicy,
    storage_options: StorageOptions,
    max_record_bytes: int,
) -> Iterator[pa.RecordBatch]:
    """iter_arrow_batches with its damage policy made (one policy may span several readers, as a
    command's does)."""
    features, sequence_features, columns, batch_size = reading
    specs = _checked_specs(features, sequence_features, columns, batch_size, compression)
    files = sources_of(source, storage_options)  # inputs that name no file fail here, not at the first batch
    spans = record_spans(files, batch_size, compression, verify, policy, storage_options, max_record_bytes)
    return _arrow_batches(spans, specs, columns, None if policy.raises else policy)


def _checked_specs(
    features: Mapping[str, Any] | None,
    sequence_features: Mapping[str, Any] | None,
    columns: Sequence[str] | None,
    batch_size: int,
    compression: Compression,
) -> Specs:
    check_int("batch_size", batch_size, 1)
    normalize_compression(compression, allow_auto=True)
    specs = Specs(feature_specs(features), feature_specs(sequence_features, "sequence_features"))
    arrow_schema(specs.context, specs.lists)  # a spec no column can hold fails here, as does
    specs.selected(columns)  # a column no spec names
    return specs


def file_arrow_batches(
    path: str,
    reading: Reading,
    *,
    compression: Compression = "auto",
    verify: bool = True,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[pa.RecordBatch]:
    """iter_arrow_batches of one local file, damage raised: the same batches and errors, the
    records framed by the file's fresh index sidecar where it has one (_records/indexed_spans.py)."""
    features, sequence_features, columns, batch_size = reading
    specs = _checked_specs(features, sequence_features, columns, batch_size, compression)
    return _arrow_batches(file_spans(path, batch_size, compression, verify, max_record_bytes), specs, columns)


class Specs(NamedTuple):
    """What a reader decodes: the Examples' (or the context's) spec, and the feature lists' (None: the
    records are read as Examples, or as SequenceExamples where they carry feature lists)."""

    context: dict[str, FeatureSpec] | None
    lists: dict[str, FeatureSpec] | None

    def selected(self, columns: Sequence[str] | None) -> Specs:
        """The specs of `columns` only (all of them when columns is None)."""
        if columns is None or (self.context is None and self.lists is None):
            return self
        known = {**(self.context or {}), **(self.lists or {})}
        missing = [key for key in columns if key not in known]
        if missing:
            raise KeyError(f"columns {missing} are not in the spec (keys: {sorted(known)})")
        pick = [key for key in columns if key not in (self.lists or ())]
        if self.lists is None:
            return Specs({key: known[key] for key in pick}, None)
        lists = {key: self.lists[key] for key in columns if key in self.lists}
        return Specs({key: known[key] for key in pick}, lists)

    def schema(self, columns: Sequence[str] | None = None) -> pa.Schema | None:
        """The schema of every batch (its fields in the order of `columns`, when given); None
        without a context spec (each batch has its records' columns)."""
        if self.context is None:
            return None
        schema = arrow_schema(self.context, self.lists)
        return schema if columns is None else pa.schema([schema.field(key) for key in columns])


def _arrow_batches(
    spans: Iterable[Spans], specs: Specs, columns: Sequence[str] | None, skipping: DamagePolicy | None = None
) -> Iterator[pa.RecordBatch]:
    """iter_arrow_batches' batches of the records of `spans`; without a spec, only the keys of
    `columns` (None: all) are decoded, in that order (a key no record has: a null column). With
    `skipping`, a record that does not fit the spec (an error placed in its file) is skipped as
    damage is: reported to the policy, and the batch decoded without it."""
    wanted = None if columns is None else frozenset(columns)
    specs = specs.selected(columns)
    for batch in spans:
        while True:
            try:
                with placing(batch.where):
                    decoded = _spans_batch(batch, specs, columns, wanted)
                break
            except TFRecordError as err:
                k = getattr(err, "batch_record", None)
                if skipping is None or err.record is None or k is None:
                    raise
                skipping.skip(err)
                batch = without(batch, k)
        yield decoded


def _spans_batch(
    spans: Spans, specs: Specs, columns: Sequence[str] | None, wanted: frozenset[str] | None
) -> pa.RecordBatch:
    n = len(spans.starts)
    if specs.lists is not None:
        batch = decode_sequence_arrow([spans.record(i) for i in range(n)], specs.context, specs.lists)
        return batch if columns is None else batch.select(list(columns))
    sequences = feature_list_rows(*spans[:3]) if n else np.zeros(0, dtype=bool)
    if sequences.any():
        if specs.context is not None:
            _check_no_feature_lists(spans, sequences, specs.context)
        else:
            return _columns_of(decode_sequence_arrow([spans.record(i) for i in range(n)]), columns)
    flats = decode_flat(spans, specs.context, wanted)
    if columns is not None and specs.context is None:
        flats = {key: flats.get(key) for key in columns}
    return _record_batch(flats, specs.context, n)


def columns_batch(spans: Spans, columns: Sequence[str]) -> pa.RecordBatch:
    """decode_arrow_columns of the records of `spans`."""
    return _spans_batch(spans, Specs(None, None), columns, frozenset(columns))


def decode_arrow_columns(source: Sequence[Any], columns: Sequence[str]) -> pa.RecordBatch:
    """A batch of serialized Examples (or SequenceExamples) decoded without a spec, only the
    keys of `columns` (in that order; a key no record has: nulls): a feature a record lacks is
    null there, as iter_arrow_batches(columns=...) gives it."""
    records = source if isinstance(source, (list, tuple)) else list(source)
    return columns_batch(spans_of(records), columns)


def _columns_of(batch: pa.RecordBatch, columns: Sequence[str] | None) -> pa.RecordBatch:
    """`columns` of a batch decoded without a spec, in that order (a key it lacks: nulls)."""
    if columns is None:
        return batch
    fields = [batch.schema.field(key) if key in batch.schema.names else pa.field(key, pa.null()) for key in columns]
    arrays = [batch.column(key) if key in batch.schema.names else pa.nulls(batch.num_rows) for key in columns]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def read_arrow(
    source: Any,
    *,
    features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
    columns: Sequence[str] | None = None,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> pa.Table:
    """All the Examples (or SequenceExamples) of `source` (as iter_arrow_batches takes it) as one
    Arrow table; `features`, `sequence_features` and `columns` as iter_arrow_batches takes them.
    Without a spec, batches that lack a key get nulls there; a key whose type differs between
    batches is an error naming it. The reader options are iter_records'."""
    batches = list(
        iter_arrow_batches(
            source,
            features=features,
            sequence_features=sequence_features,
            columns=columns,
            compression=compression,
            verify=verify,
            on_error=on_error,
            max_skipped=max_skipped,
            storage_options=storage_options,
            max_record_bytes=max_record_bytes,
        )
    )
    schema = Specs(feature_specs(features), feature_specs(sequence_features, "sequence_features"))
    schema_of = schema.selected(columns).schema(columns)
    if schema_of is not None:
        return pa.Table.from_batches(batches, schema=schema_of)
    if not batches:
        return pa.table({key: pa.nulls(0) for key in columns or ()})
    return concat_batches(batches)


# --------------------------------------------------------------------------- encoding


def write_arrow(
    data: Any,
    destination: Any,
    *,
    compression: Compression = None,
    strict: bool = False,
    feature_lists: Collection[str] | None = None,
    storage_options: StorageOptions = None,
) -> int:
    """Write the rows of `data` (as encode_arrow takes it) as Examples to the TFRecord file
    `destination` (a path, a URL or a file object), batch by batch; returns the number of records
    written. A path or URL is written under a temporary name and published whole once done
    (as every command's output): a failure or a kill leaves the old file, never part of one.
    `feature_lists` as encode_arrow takes it (marked feature-list columns become
    SequenceExamples without it). `storage_options` are fsspec's, for a URL (or an fsspec
    filesystem object)."""
    records = iter_framed_buffers(data, strict, feature_lists)
    if is_file_object(destination):
        return _write(records, destination, compression, None)
    with open_publication(os.fspath(destination), storage_options) as publication:
        temp = publication.file(os.fspath(destination))
        return _write(records, temp, compression, storage_options)


def _write(
    records: Iterable[tuple[Any, np.ndarray]],
    destination: Any,
    compression: Compression,
    storage_options: StorageOptions,
) -> int:
    with TFRecordWriter(destination, compression=compression, storage_options=storage_options) as writer:
        for framed, lengths in records:
            writer.write_framed(framed, lengths)
        return writer.records_written
