"""Ray Data adapter (extra [ray]; `import tfrecord_lite` never imports this module): TFRecord files
read into a ray.data.Dataset and a Dataset written out as TFRecord shards, with no TensorFlow.

Strategy: reading is a ray.data.Datasource, Ray's public (PublicAPI) interface for custom sources,
not FileBasedDatasource: that one is a developer API whose hooks have changed between releases,
and it splits by whole files, where large files here are split by record ranges (pieces), and
more files than the tasks Ray asks for are grouped into that many runs of neighbouring files. Each
read task yields decode_arrow's record batches as its blocks. Writing is a Datasink: each write
task writes its rows (encode_arrow) to files under temporary names of this write and returns their
names; on_write_complete, on the driver once every task has succeeded, renames them to TensorFlow's
shard names and removes what failed attempts left, so a reader never meets a torn shard.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from tfrecord_lite._datasets.pieces import Piece, PieceOptions, group_pieces, input_files, piece_batches, plan_pieces
from tfrecord_lite._datasets.sharded import shard_name, shard_suffix
from tfrecord_lite._example.validate import check_int, feature_specs
from tfrecord_lite._records.writer import TFRecordWriter
from tfrecord_lite._storage.locations import filesystem as fsspec_filesystem
from tfrecord_lite._storage.locations import has_scheme, is_url, split_options
from tfrecord_lite._storage.sources import Sources
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

try:
    import pyarrow as pa
    import pyarrow.fs as pafs
    import ray.data
    from fsspec.implementations.arrow import ArrowFSWrapper  # fsspec comes with ray[data]
    from ray.data.block import BlockAccessor, BlockMetadata
    from ray.data.datasource import Datasink, Datasource, ReadTask
except ImportError as exc:  # pragma: no cover - exercised where Ray is missing
    raise ImportError(f"tfrecord_lite.ray needs Ray Data ({exc}): pip install 'tfrlite[ray]'") from exc

from tfrecord_lite._arrow.batches import arrow_schema, encode_arrow

__all__ = ["TFRecordDatasink", "TFRecordDatasource", "read_tfrecords", "write_tfrecords"]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


SHARD_PREFIX = "part"
_SETTLE_SECONDS = 1.0  # a failed write sweeps its temporary files until one sweep this long after the last finds none


class _ArrowFS(ArrowFSWrapper):  # type: ignore[misc]
    """fsspec's view of a pyarrow filesystem, whose ranged reads seek: fsspec's own cat_file opens a
    stream that cannot seek for a range that starts at 0, then seeks it, and fails."""

    def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        data: bytes = super().cat_file(path, start, end, seekable=True, **kwargs)
        return data


def _as_fsspec(filesystem: Any) -> Any:
    """`filesystem` (pyarrow's or fsspec's) as an fsspec filesystem, which the library's URL readers use."""
    return _ArrowFS(filesystem) if isinstance(filesystem, pafs.FileSystem) else filesystem


def _as_url(path: str, fs: Any) -> str:
    """`path` as a URL of `fs`: "bucket/key" in an S3 filesystem is s3://bucket/key."""
    if has_scheme(path):
        return path
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return f"{protocol}://{path}"


def _read_pieces(pieces: list[Piece], options: dict[str, Any]) -> Iterator[pa.Table]:
    """The blocks of one read task: its pieces' record batches as (zero-copy) tables, which Ray expects."""
    include_paths = options.pop("include_paths")
    for piece in pieces:
        for batch in piece_batches(piece, **options):
            if include_paths:
                batch = batch.append_column("path", pa.array([piece.path] * batch.num_rows, pa.string()))
            yield pa.Table.from_batches([batch])


class TFRecordDatasource(Datasource):  # type: ignore[misc]
    """A Ray Data source of TFRecord Examples; `read_tfrecords` documents the arguments."""

    def __init__(
        self,
        source: Sources,
        *,
        features: Mapping[str, Any] | None = None,
        sequence_features: Mapping[str, Any] | None = None,
        batch_size: int = 2048,
        include_paths: bool = False,
        compression: Compression = "auto",
        verify: bool = True,
        on_error: OnError = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
        filesystem: Any = None,
    ) -> None:
        super().__init__()
        check_int("batch_size", batch_size, 1)
        if filesystem is not None and storage_options is not None:
            raise ValueError("give storage_options or filesystem, not both: each says how to open the files")
        self._features = feature_specs(features)
        self._lists = feature_specs(sequence_features, "sequence_features")
        self._batch_size = batch_size
        self._include_paths = include_paths
        self._fs = None if filesystem is None else _as_fsspec(filesystem)
        if self._fs is not None:  # the names are the filesystem's: folders, globs and prefixes listed by it
            given = [source] if isinstance(source, (str, os.PathLike)) else list(source)
            source = [_as_url(os.fspath(p), self._fs) for p in given]
        opener = self._fs if self._fs is not None else storage_options
        self._options = PieceOptions(compression, verify, on_error, max_skipped, opener, max_record_bytes)
        self._paths = input_files(source, opener)

    def get_name(self) -> str:
        return "ReadTFRecordLite"

    def estimate_inmemory_data_size(self) -> int | None:
        return sum(os.path.getsize(p) for p in self._paths if not is_url(p)) or None

    def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None, **_: Any) -> list[ReadTask]:
        pieces = plan_pieces(self._paths, parallelism, self._batch_size, self._options)
        groups = group_pieces(pieces, max(parallelism, 1))
        options = {
            "features": self._features,
            "batch_size": self._batch_size,
            "options": self._options,
            "sequence_features": self._lists,
        }
        extra = {"per_task_row_limit": per_task_row_limit} if per_task_row_limit is not None else {}
        return [
            ReadTask(
                functools.partial(_read_pieces, group, {**options, "include_paths": self._include_paths}),
                BlockMetadata(
                    num_rows=_rows(group),
                    size_bytes=sum(piece.size for piece in group) or None,
                    input_files=[piece.path for piece in group],
                    exec_stats=None,
                ),
                **extra,
            )
            for group in groups
        ]


def _rows(pieces: list[Piece]) -> int | None:
    """The rows of `pieces`, when each one knows its own."""
    rows = [piece.num_rows for piece in pieces]
    return None if None in rows else sum(row or 0 for row in rows)


def read_tfrecords(
    source: Sources,
    *,
    features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
    batch_size: int = 2048,
    include_paths: bool = False,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
    filesystem: Any = None,
    **read_args: Any,
) -> ray.data.Dataset:
    """A Ray Dataset of the Examples in `source` (files, folders, globs, URLs, or a list of those).

    Each block is an Arrow record batch of up to `batch_size` rows from `decode_arrow`: with
    `features`, typed columns as TensorFlow parses them; without, one list column per key as
    tfx-bsl's decoder gives. SequenceExamples: each feature list is a column of steps
    (list<list<T>>) beside the context columns, found in the records without a spec, or typed
    by `sequence_features` (then `features` is the context's spec). Uncompressed local files are
    split into several read tasks by record ranges when there are fewer files than tasks; GZIP /
    ZLIB files and URLs are read by one task each. `include_paths` adds a "path" column.

    The reader options are iter_records'. With on_error="skip" (or a callable, which pickles to
    the workers) files are read whole, never split, and `max_skipped` counts the damaged spans of
    each file. URLs (s3://, gs://, ...) are opened by fsspec with `storage_options` (fsspec's
    options or filesystem), else with the credentials the workers find (environment, instance
    role). `filesystem` (a pyarrow.fs.FileSystem or an fsspec filesystem, which pickles to the
    workers), as Ray's own readers take it, opens and lists them instead, and takes paths without
    a scheme too ("bucket/folder"); give one of the two.
    `read_args` go to `ray.data.read_datasource` (`override_num_blocks`, `concurrency`, `num_cpus`,
    `memory`, `runtime_env`, ...: Ray's named remote parameters, which replace `ray_remote_args`).
    """
    datasource = TFRecordDatasource(
        source,
        features=features,
        sequence_features=sequence_features,
        batch_size=batch_size,
        include_paths=include_paths,
        compression=compression,
        verify=verify,
        on_error=on_error,
        max_skipped=max_skipped,
        storage_options=storage_options,
        max_record_bytes=max_record_bytes,
        filesystem=filesystem,
    )
    return ray.data.read_datasource(datasource, **read_args)


# --------------------------------------------------------------------------- writing


def _target(location: str, filesystem: Any, storage_options: StorageOptions = None) -> tuple[pafs.FileSystem, str]:
    """(pyarrow filesystem, folder in it) of a write to `location` through `filesystem`: pyarrow's,
    fsspec's (wrapped), or None for the one the URL names (local paths made absolute), opened by
    fsspec with `storage_options` where they are given."""
    if filesystem is not None and storage_options is not None:
        raise ValueError("give storage_options or filesystem, not both: each says how to open the folder")
    if storage_options is not None:
        where = location if has_scheme(location) else os.path.abspath(location)
        fs, folder = fsspec_filesystem(where, *split_options(storage_options))
        return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), folder.rstrip("/")
    if filesystem is None:
        found: tuple[pafs.FileSystem, str] = pafs.FileSystem.from_uri(
            location if has_scheme(location) else os.path.abspath(location)
        )
        return found
    if not isinstance(filesystem, pafs.FileSystem):
        filesystem = pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    return filesystem, location.split("://", 1)[-1].rstrip("/")


def _tensor_values(chunk: pa.Array) -> pa.Array:
    """The flattened values per row of a Ray tensor chunk: the storage of a fixed-shape tensor, the
    `data` field of a variable-shaped one's (struct<data, shape>)."""
    storage = chunk.storage
    return storage.field("data") if pa.types.is_struct(storage.type) else storage


def _without_extensions(table: pa.Table) -> pa.Table:
    """Ray's tensor columns (Arrow extension types that numpy batches turn lists into) as lists."""
    for i, field in enumerate(table.schema):
        if isinstance(field.type, pa.ExtensionType):
            chunks = [_tensor_values(chunk) for chunk in table.column(i).chunks]
            table = table.set_column(i, field.name, pa.chunked_array(chunks) if chunks else pa.nulls(0))
    return table


class TFRecordDatasink(Datasink):  # type: ignore[misc]
    """A Ray Data sink writing Examples to TF-named shards; `write_tfrecords` documents the arguments."""

    def __init__(
        self,
        destination: str | os.PathLike[str],
        *,
        compression: Compression = None,
        features: Mapping[str, Any] | None = None,
        num_rows_per_file: int | None = None,
        feature_lists: Sequence[str] | None = None,
        storage_options: StorageOptions = None,
        filesystem: Any = None,
    ) -> None:
        if num_rows_per_file is not None:
            check_int("num_rows_per_file", num_rows_per_file, 1)
        self._specs = feature_specs(features)
        self._feature_lists = None if feature_lists is None else list(feature_lists)
        self._suffix = shard_suffix(compression)
        self._compression = compression
        self._rows_per_file = num_rows_per_file
        location = os.fspath(destination)
        self._location = location.rstrip("/")
        self._fs, self._folder = _target(location, filesystem, storage_options)
        self._temp_prefix = f".tmp-{uuid.uuid4().hex}-"  # this write's temporary files, whichever task
        self.paths: list[str] = []  # the shards, once written

    def get_name(self) -> str:
        return "WriteTFRecordLite"

    @property
    def min_rows_per_write(self) -> int | None:
        return self._rows_per_file

    def _listing(self) -> list[str]:
        selector = pafs.FileSelector(self._folder, allow_not_found=True)
        return [info.path for info in self._fs.get_file_info(selector)]

    def on_write_start(self, schema: Any = None) -> None:
        self._fs.create_dir(self._folder, recursive=True)
        taken = [p for p in self._listing() if os.path.basename(p).startswith(f"{SHARD_PREFIX}-")]
        if taken:
            raise FileExistsError(f"{self._folder} already holds shards ({os.path.basename(taken[0])}, ...)")

    def _rows(self, blocks: Iterable[Any]) -> Iterator[bytes]:
        for block in blocks:
            table = _without_extensions(BlockAccessor.for_block(block).to_arrow())
            if self._specs is not None:
                missing = [key for key in self._specs if key not in table.column_names]
                if missing:
                    raise KeyError(f"columns {missing} of the spec are not in the dataset ({table.column_names})")
                table = table.select(list(self._specs)).cast(arrow_schema(self._specs))
            yield from encode_arrow(table, feature_lists=self._feature_lists)

    def write(self, blocks: Iterable[Any], ctx: Any) -> list[tuple[int, int, str]]:
        """Write this task's rows to temporary files; returns (task, file number, name) of each. On
        any exception, Ray's cancellation (KeyboardInterrupt) included, the files are deleted: closing
        a stream on the way out completes its upload, so the object exists until deleted."""
        records = self._rows(blocks)
        names: list[str] = []
        try:
            while (first := next(records, None)) is not None:
                names.append(f"{self._folder}/{self._temp_prefix}{ctx.task_idx}-{len(names)}-{uuid.uuid4().hex}")
                self._write_file(names[-1], first, records)
        except BaseException:
            self._delete(names)
            raise
        return [(ctx.task_idx, number, name) for number, name in enumerate(names)]

    def _write_file(self, name: str, first: bytes, records: Iterator[bytes]) -> None:
        """`first` and at most `num_rows_per_file` - 1 more of `records` into the file `name`."""
        more = None if self._rows_per_file is None else self._rows_per_file - 1
        with (
            self._fs.open_output_stream(name) as stream,
            TFRecordWriter(stream, compression=self._compression) as writer,
        ):
            writer.write(first)
            for record in itertools.islice(records, more):
                writer.write(record)

    def on_write_complete(self, write_result: Any) -> None:
        files = sorted(entry for returned in write_result.write_returns for entry in returned)
        names = [shard_name(SHARD_PREFIX, number, len(files), self._suffix) for number in range(len(files))]
        for (_, _, temp), name in zip(files, names, strict=True):
            self._fs.move(temp, f"{self._folder}/{name}")
        self._delete(self._leftovers())
        self.paths = [f"{self._location}/{name}" for name in names]

    def on_write_failed(self, error: Exception) -> None:
        """Delete this write's temporary files. Ray cancels the other write tasks without waiting for
        them, and a task finishing an upload meanwhile adds a file after a sweep (then deletes it, if
        cancelled): sweep again, _SETTLE_SECONDS after the last sweep, until one finds nothing."""
        self._delete(self._leftovers())
        while True:
            time.sleep(_SETTLE_SECONDS)
            if not (leftovers := self._leftovers()):
                return
            self._delete(leftovers)

    def _leftovers(self) -> list[str]:
        """The temporary files of this write still there (after a success: of attempts that failed)."""
        return [path for path in self._listing() if os.path.basename(path).startswith(self._temp_prefix)]

    def _delete(self, paths: Iterable[str]) -> None:
        for path in paths:
            with contextlib.suppress(FileNotFoundError):  # deleted by the task that wrote it, meanwhile
                self._fs.delete_file(path)


def write_tfrecords(
    dataset: ray.data.Dataset,
    destination: str | os.PathLike[str],
    *,
    compression: Compression = None,
    features: Mapping[str, Any] | None = None,
    num_rows_per_file: int | None = None,
    feature_lists: Sequence[str] | None = None,
    storage_options: StorageOptions = None,
    filesystem: Any = None,
    **write_args: Any,
) -> list[str]:
    """Write the rows of `dataset` as Examples (encode_arrow's) to TensorFlow-named shards
    `part-00000-of-000NN.tfrecord` in the folder `destination` (local, or a URL pyarrow's filesystems
    open); returns their paths. Each shard appears under its name only when every write task has
    succeeded. `compression`: None, "gzip" or "zlib" (shards end in .gz / .zlib). `features`: a
    spec the columns are cast to before encoding (and the only columns written). Columns read
    from feature lists (marked in the schema) are written back as feature lists of
    SequenceExamples; `feature_lists` names such columns where the mark is lost.
    `num_rows_per_file`: at most that many rows per shard. The folder must hold no shards yet.
    `storage_options` (fsspec's options, or an fsspec filesystem) open the URL's store; `filesystem`
    (pyarrow's or fsspec's, as Ray's own writers take it) writes through it instead of the one the
    URL names; give one of the two. On object stores shards are uploaded under temporary names and
    copied to theirs at the end.
    `write_args` go to `Dataset.write_datasink` (`ray_remote_args`, `concurrency`)."""
    sink = TFRecordDatasink(
        destination,
        compression=compression,
        features=features,
        num_rows_per_file=num_rows_per_file,
        feature_lists=feature_lists,
        storage_options=storage_options,
        filesystem=filesystem,
    )
    dataset.write_datasink(sink, **write_args)
    return sink.paths
