"""Reading Examples in batches from TFRecord files: the I/O side of columnar's batch
decoder (which works on bytes only). Batches are spans of the reader's buffer, decoded
where they lie, no object per record; a stream whose records are large (images) is read
as bytes records instead, whose long values columnar slices once. SequenceExamples are
read as lists of bytes records, each list decoded by _batches/sequences.py's batch decoder.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np

from tfrecord_lite._batches.columnar import (
    Assembly,
    Spans,
    Where,
    assembly_for,
    decode_buffer,
    decode_records,
    placing,
    plan_features,
)
from tfrecord_lite._batches.joins import SPARSE_RECORD, RecordSlicer
from tfrecord_lite._batches.sequences import (
    Decoded,
    checked_context_specs,
    checked_sequence_specs,
    decode_sequence_records,
)
from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._errors import FeatureError, TFRecordError
from tfrecord_lite._example.spec import FeatureSpec, SpecDict
from tfrecord_lite._example.validate import batch_specs, check_int
from tfrecord_lite._records.reader import RecordIterator, sources_of
from tfrecord_lite._records.threads import check_num_threads, ordered_map
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions
from tfrecord_lite._wire.framing import HEADER_SIZE

T = TypeVar("T")  # a decoded batch


def iter_example_batches(
    source: Any,
    *,
    features: SpecDict,
    batch_size: int = 1024,
    copy: bool = True,
    num_threads: int = 1,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[dict[str, Any]]:
    """Read TFRecord files of Examples as decoded batches of `batch_size` (the last one may be
    smaller): decode_examples over iter_records, without an object per record. `source` is what
    iter_records takes: a file, or a list, folder, glob or prefix, whose batches span files. The counterpart
    of tf.data.TFRecordDataset(path).batch(batch_size).map(tf.io.parse_example). The spec and
    arguments are checked here, before the first batch is asked for. `on_error` and
    `max_skipped` are iter_records' (with "skip", the batch before a damaged record may be smaller);
    so are `storage_options`, for URLs, and `max_record_bytes`. `copy=False` gives bytes values as
    read-only memoryviews, as decode_examples(copy=False) does: into its record where records are large (32 KiB and
    more), else into one copy of the batch's records; each keeps alive what it points into.
    `num_threads` > 1 decodes that many batches at once on threads (the reading too, one batch at a
    time), each from a copy of its records, and yields them in the order of num_threads=1."""
    check_int("batch_size", batch_size, 1)
    check_num_threads(num_threads)
    normalize_compression(compression, allow_auto=True)
    features = batch_specs(features)
    policy = DamagePolicy(on_error, max_skipped)
    assembly = assembly_for(copy, features)
    reading = _Reading(compression, verify, policy, storage_options, max_record_bytes)
    if num_threads > 1:
        return _threaded_batches(source, features, batch_size, reading, assembly, num_threads)
    return _batches(source, features, batch_size, reading, assembly)


class _Reading(NamedTuple):
    """The reader options of a batch reader, handed on to its RecordIterator."""

    compression: Compression
    verify: bool
    policy: DamagePolicy | None
    storage_options: StorageOptions
    max_record_bytes: int

    def records(self, source: Any) -> RecordIterator:
        files = sources_of(source, self.storage_options)
        return RecordIterator(
            files,
            self.compression,
            self.verify,
            self.policy,
            storage_options=self.storage_options,
            max_record_bytes=self.max_record_bytes,
        )


def _batches(
    source: Any,
    features: Mapping[str, FeatureSpec],
    batch_size: int,
    reading: _Reading,
    assembly: Assembly,
) -> Iterator[dict[str, Any]]:
    with reading.records(source) as records:
        head = records._stream.peek(HEADER_SIZE)
        read = 0  # records in the batches before this one, for an error's note
        if len(head) >= HEADER_SIZE and int.from_bytes(head[:8], "little") >= SPARSE_RECORD:
            yield from _record_batches(
                records, batch_size, lambda batch, _: decode_records(batch, features, assembly)[0]
            )
            return
        plans = plan_features(features)
        for view, b, e, record, where in _spans(records, batch_size):
            values = _views_of_copy(view, int(b[0]), int(e[-1])) if assembly.views else None
            with placing(where):
                try:
                    decoded = decode_buffer(view, b, e, plans, features, record, assembly, values=values)[0]
                except FeatureError as err:
                    _note(err, read, len(b), records.path)
                    raise
            yield decoded
            read += len(b)


def _note(err: FeatureError, read: int, n: int, path: Any) -> None:
    """Add to `err` where its batch lies among the records read (Python >= 3.11 shows notes)."""
    if hasattr(err, "add_note"):
        err.add_note(f"(the batch is records {read} to {read + n - 1} of those read; the file being read: {path})")


def _threaded_batches(
    source: Any,
    features: Mapping[str, FeatureSpec],
    batch_size: int,
    reading: _Reading,
    assembly: Assembly,
    num_threads: int,
) -> Iterator[dict[str, Any]]:
    """_batches on threads: each batch's records copied out of the read buffer (which the next read
    reuses) by the thread that reads them, then decoded on any thread."""
    with reading.records(source) as records:
        head = records._stream.peek(HEADER_SIZE)
        if len(head) >= HEADER_SIZE and int.from_bytes(head[:8], "little") >= SPARSE_RECORD:
            lists = _record_batches(records, batch_size, _as_placed, later=True)
            yield from ordered_map(
                functools.partial(_placed_decode, lambda batch: decode_records(batch, features, assembly)[0]),
                lists,
                num_threads,
            )
            return
        plans = plan_features(features)

        def decoded(spans: Spans) -> dict[str, Any]:
            values = RecordSlicer([cast(bytes, spans.view.obj)], [0], views=True) if assembly.views else None
            with placing(spans.where):
                return decode_buffer(
                    spans.view, spans.starts, spans.ends, plans, features, spans.record, assembly, values=values
                )[0]

        yield from ordered_map(decoded, map(_copied, _spans(records, batch_size)), num_threads)


def _copied(spans: Spans) -> Spans:
    """A batch's records (and the 4 bytes after them, which decode_buffer reads) in bytes of their own."""
    start, end = int(spans.starts[0]), int(spans.ends[-1])
    data = bytes(spans.view[start : end + 4])
    if len(data) < end + 4 - start:
        data += bytes(end + 4 - start - len(data))
    view = memoryview(data)
    begin, stop = spans.starts - start, spans.ends - start

    def record(k: int) -> bytes:
        return bytes(view[begin[k] : stop[k]])

    return Spans(view, begin, stop, record, spans.where)


def _views_of_copy(view: memoryview, start: int, end: int) -> RecordSlicer:
    """Slices of view[start:end] (at view's offsets), as memoryviews into one copy of it."""
    return RecordSlicer([view[start:end].tobytes()], [start], views=True)


def _record_batches(
    records: RecordIterator, size: int, decode: Callable[[list[bytes], Where], T], later: bool = False
) -> Iterator[T]:
    """Batches of records as bytes, each decoded by `decode` (given the batch and where its records
    lie): for large Examples (decode_records' _decode_sparse copies their long values once, from a
    buffer that stays in cache, where a batch in the reader's buffer is tens of MiB) and for
    SequenceExamples. Before an error, the records before it come out. `later`: batches are decoded
    after more are read (on threads), so each is given the places of its records as they are now."""
    batch: list[bytes] = []
    records.placements.keep(size)
    first = 0  # the number of the batch's first record among all those read
    while True:
        # the previous batch is dropped only once the next one is read: its memory is then reused
        # for the values, not handed back to the system and faulted in again (for 64 MiB batches)
        previous, batch = batch, []
        try:
            batch.extend(itertools.islice(records, size))
            del previous
        except TFRecordError:
            if batch:
                where = _batch_where(records, first, len(batch), later)
                with placing(where):
                    decoded = decode(batch, where)
                yield decoded
            raise
        if not batch:
            return
        where = _batch_where(records, first, len(batch), later)
        first += len(batch)
        with placing(where):
            decoded = decode(batch, where)
        yield decoded


def _batch_where(records: RecordIterator, first: int, n: int, later: bool) -> Where:
    """Where record k of the batch of n records from record `first` (of those read) lies; `later`:
    as the reader keeps the places now (Placements.frozen)."""
    where = records.placements.frozen(first, n) if later else records.placements.where
    return functools.partial(_offset_where, where, first)


def _as_placed(batch: list[bytes], where: Where) -> tuple[list[bytes], Where]:
    """A batch and where its records lie, to be decoded later (on threads: _placed_decode)."""
    return batch, where


def _placed_decode(decode: Callable[[list[bytes]], T], placed: tuple[list[bytes], Where]) -> T:
    """decode(batch) of a batch from _as_placed, an error about one of its records placed."""
    batch, where = placed
    with placing(where):
        return decode(batch)


def _offset_where(where: Where, first: int, k: int) -> tuple[str | None, int, int | None] | None:
    return where(first + k)


def iter_sequence_example_batches(
    source: Any,
    *,
    context_features: SpecDict | None = None,
    sequence_features: SpecDict | None = None,
    batch_size: int = 1024,
    copy: bool = True,
    num_threads: int = 1,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[Decoded]:
    """Read TFRecord files of SequenceExamples as decoded batches of `batch_size` (the last one
    may be smaller): decode_sequence_examples over iter_records, each batch a tuple
    `(context, feature_lists, lengths)`. The counterpart of
    tf.data.TFRecordDataset(path).batch(batch_size).map(lambda x: tf.io.parse_sequence_example(x, ...)).
    `source` and the keyword arguments are iter_example_batches'; the specs and arguments are
    checked here, before the first batch is asked for; `num_threads` > 1 decodes that many batches at
    once on threads, in the order of num_threads=1."""
    check_int("batch_size", batch_size, 1)
    check_num_threads(num_threads)
    normalize_compression(compression, allow_auto=True)
    context_specs = checked_context_specs(context_features)
    sequence_specs = checked_sequence_specs(sequence_features)
    assembly = assembly_for(copy, {**context_specs, **sequence_specs})
    reading = _Reading(compression, verify, DamagePolicy(on_error, max_skipped), storage_options, max_record_bytes)
    files = sources_of(source, storage_options)

    def decode(batch: list[bytes]) -> Decoded:
        return decode_sequence_records(batch, context_specs, sequence_specs, assembly)[0]

    def batches() -> Iterator[Decoded]:
        with reading.records(files) as records:
            if num_threads > 1:
                lists = _record_batches(records, batch_size, _as_placed, later=True)
                yield from ordered_map(functools.partial(_placed_decode, decode), lists, num_threads)
            else:
                yield from _record_batches(records, batch_size, lambda batch, _: decode(batch))

    return batches()


def record_spans(
    source: Any,
    batch_size: int,
    compression: Compression,
    verify: bool,
    policy: DamagePolicy | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[Spans]:
    """The records of `source` (anything _sources resolves; files in order) in batches of
    `batch_size`, as spans of the reader's buffer (valid until the next batch is asked for):
    no object per record."""
    reading = _Reading(compression, verify, policy, storage_options, max_record_bytes)
    with reading.records(source) as records:
        yield from _spans(records, batch_size)


def _spans(records: RecordIterator, batch_size: int) -> Iterator[Spans]:
    records.placements.keep(batch_size)
    first = 0  # the number of the next batch's first record among all those read
    for view, starts, lengths in records._chunks(batch_size):
        begin = np.array(starts, dtype=np.int64)
        end = begin + np.array(lengths, dtype=np.int64)
        for i in range(0, len(starts), batch_size):
            b, e = begin[i : i + batch_size], end[i : i + batch_size]

            def record(k: int, view: memoryview = view, b: np.ndarray = b, e: np.ndarray = e) -> bytes:
                return bytes(view[b[k] : e[k]])

            yield Spans(view, b, e, record, functools.partial(_offset_where, records.placements.where, first))
            first += len(b)
