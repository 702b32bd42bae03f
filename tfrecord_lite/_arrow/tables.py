"""Columnar files — Parquet, Arrow IPC (Feather v2) and CSV — read and written batch by
batch, for conversions to and from TFRecord (the CLI's `convert`).

Strategy: the format comes from the file's extension (or is given); reading yields the
file's record batches of about `batch_size` rows, writing takes record batches one at a
time (a Parquet row group each), so a conversion holds one batch in memory, whatever the
file size. Writers write under a temporary name and publish the file at the end (publish):
the destination holds the old file or the new one, never half of one. A writer can run in
a thread of its own, fed through a short queue: pyarrow encodes and writes without the GIL,
so a conversion reads and decodes the next batch while the last one is written: from
TFRecord, write_examples_table decodes the Examples (or SequenceExamples, their feature lists
as marked columns of steps) batch by batch (batches.py) into one.
pyarrow is imported inside the functions, so the CLI can ask columnar_format cheaply.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from tfrecord_lite._errors import FeatureError
from tfrecord_lite._storage.publish import Publication
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression

if TYPE_CHECKING:
    import pyarrow as pa

    from tfrecord_lite._example.spec import FeatureSpec

__all__ = ["FORMATS", "columnar_format", "iter_table_batches", "table_writer", "write_examples_table"]

Progress = Callable[[Iterable[Any], int | None], Iterable[Any]]  # progress(batches, total) wraps a loop (tqdm)

# extension -> format
FORMATS = {".parquet": "parquet", ".pq": "parquet", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow",
           ".csv": "csv"}  # fmt: skip
SUFFIX = {"parquet": ".parquet", "arrow": ".arrow", "csv": ".csv"}


def columnar_format(path: str) -> str | None:
    """'parquet' | 'arrow' | 'csv' by the extension of `path`, else None (a TFRecord file)."""
    return FORMATS.get(os.path.splitext(path)[1].lower())


def iter_table_batches(path: str, batch_size: int, fmt: str | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of a Parquet, Arrow IPC (file or stream) or CSV file as record batches."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv
    import pyarrow.ipc as pa_ipc
    import pyarrow.parquet as pq

    fmt = fmt or columnar_format(path)
    if fmt == "parquet":
        with pq.ParquetFile(path) as f:
            yield from f.iter_batches(batch_size=batch_size)
    elif fmt == "arrow":
        with pa.memory_map(path) as source:
            try:
                reader: Any = pa_ipc.open_file(source)
                batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
            except pa.ArrowInvalid:
                source.seek(0)
                batches = iter(pa_ipc.open_stream(source))
            for batch in batches:
                yield from _rebatched(batch, batch_size)
    elif fmt == "csv":
        options = pa_csv.ReadOptions(block_size=max(1 << 20, batch_size * 256))
        yield from pa_csv.open_csv(path, read_options=options)
    else:
        raise ValueError(f"{path}: not a columnar file (known: {', '.join(sorted(FORMATS))})")


def _rebatched(batch: pa.RecordBatch, size: int) -> Iterator[pa.RecordBatch]:
    for start in range(0, batch.num_rows, size):
        yield batch.slice(start, size)


def _csv_ready(batch: pa.RecordBatch) -> pa.RecordBatch:
    """CSV cells hold one value: list columns are an error, bytes are written as UTF-8 text."""
    import pyarrow as pa

    columns = []
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        kind = column.type
        if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
            raise FeatureError(name, f"is a list ({kind}): CSV holds one value per cell; write Parquet or Arrow")
        if pa.types.is_large_binary(kind) or pa.types.is_binary(kind):
            try:
                column = column.cast(pa.large_string())
            except pa.ArrowInvalid:
                raise FeatureError(name, "holds bytes that are not UTF-8 text: CSV cannot hold them") from None
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


class _Writer:
    """Writes record batches of one schema to a columnar file (see table_writer)."""

    def __init__(self, path: str, fmt: str, schema: pa.Schema) -> None:
        import pyarrow.csv as pa_csv
        import pyarrow.ipc as pa_ipc
        import pyarrow.parquet as pq

        self.fmt = fmt
        self.rows = 0
        if fmt == "csv":
            schema = _csv_ready(_empty(schema)).schema
        if fmt == "parquet":
            self._writer: Any = pq.ParquetWriter(path, schema)
        elif fmt == "arrow":
            self._writer = pa_ipc.new_file(path, schema)
        else:
            self._writer = pa_csv.CSVWriter(path, schema)

    def write(self, batch: pa.RecordBatch) -> None:
        if self.fmt == "csv":
            batch = _csv_ready(batch)
        if self.fmt == "parquet":
            self._writer.write_batch(batch, row_group_size=max(batch.num_rows, 1))
        else:
            self._writer.write_batch(batch)
        self.rows += batch.num_rows

    def close(self) -> None:
        self._writer.close()


class _InThread:
    """A _Writer run in a thread, fed through a queue of at most `depth` batches (memory stays
    bounded); an error in the thread is raised by the next write() or by close()."""

    def __init__(self, writer: _Writer, depth: int = 2) -> None:
        self.writer = writer
        self._queue: queue.Queue[pa.RecordBatch | None] = queue.Queue(depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="tfrecord-lite table writer", daemon=True)
        self._thread.start()

    @property
    def rows(self) -> int:
        return self.writer.rows

    def _run(self) -> None:
        while (batch := self._queue.get()) is not None:
            if self._error is None:  # after an error, batches are drained unwritten: write() never blocks
                try:
                    self.writer.write(batch)
                except BaseException as err:  # handed to the caller's thread
                    self._error = err

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def write(self, batch: pa.RecordBatch) -> None:
        self._raise()
        self._queue.put(batch)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        self.writer.close()
        self._raise()


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    import pyarrow as pa

    return pa.RecordBatch.from_arrays([pa.array([], type=f.type) for f in schema], schema=schema)


@contextlib.contextmanager
def table_writer(path: str, fmt: str, schema: pa.Schema, *, in_thread: bool = False) -> Iterator[_Writer | _InThread]:
    """A writer of record batches to the columnar file `path`, published (_publish) only once
    complete: the old file stays until then, and a failure leaves it. `in_thread`: the
    batches are written by a thread of its own while the caller makes the next ones."""
    with Publication(path) as publication:
        writer = _Writer(publication.file(path), fmt, schema)
        piped = _InThread(writer) if in_thread else writer
        try:
            yield piped
        finally:
            piped.close()


def write_examples_table(
    source: Any,
    path: str,
    fmt: str,
    features: Mapping[str, FeatureSpec],
    *,
    sequence_features: Mapping[str, FeatureSpec] | None = None,
    batch_size: int = 2048,
    progress: Progress | None = None,
    policy: DamagePolicy,
    compression: Compression = "auto",
    verify: bool = True,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> int:
    """Decode the Examples of `source` (files, globs, folders, as iter_arrow_batches takes them) with
    `features` into the columnar file `path` of format `fmt`, `batch_size` rows at a time (a Parquet
    row group each), written by a thread of its own while the next batch is decoded; returns the
    number of rows. `sequence_features`: the records are SequenceExamples, `features` their
    context; each feature list becomes a column of steps, marked in the schema (Parquet and Arrow
    keep the mark, and write_arrow reads it back); CSV cannot hold them, a FeatureError naming them
    says so before anything is written. `progress(batches, None)` may wrap the loop over the batches.
    The reader options are iter_records', damage handled by `policy` (one command's, counting over
    every file it reads)."""
    from tfrecord_lite._arrow.batches import Reading, arrow_schema, policy_arrow_batches

    if sequence_features and fmt == "csv":
        names = ", ".join(sequence_features)
        raise FeatureError(
            next(iter(sequence_features)),
            f"is a feature list (the records are SequenceExamples with feature lists {names}): CSV holds one "
            "value per cell, not a list of steps; convert to Parquet or Arrow (.parquet, .arrow)",
        )
    batches: Iterable[pa.RecordBatch] = policy_arrow_batches(
        source,
        Reading(features, sequence_features, None, batch_size),
        compression=compression,
        verify=verify,
        policy=policy,
        storage_options=None,
        max_record_bytes=max_record_bytes,
    )
    with table_writer(path, fmt, arrow_schema(features, sequence_features), in_thread=True) as writer:
        for batch in batches if progress is None else progress(batches, None):
            writer.write(batch)
    return writer.rows
