"""Pieces: how a distributed engine (Ray Data, Dask) divides a TFRecord dataset into independent
read tasks, and what one task reads.

Strategy: a piece is a whole file, or a record range of an uncompressed local file. Files are
split only when there are fewer of them than the tasks wanted: each gets a share of the tasks in
proportion to its size, cut at record boundaries found in its index (the sidecar, built and saved
by one scan when missing), never into ranges shorter than one batch. When there are more files
than tasks, group_pieces gives each task a run of neighbouring files of about equal bytes.
Spark's partitions follow Spark's own rule for file sources instead: split_bytes sizes a
partition from the dataset's bytes and the parallelism, split_pieces cuts every file larger than
that, and pack_pieces groups the pieces, largest first, into partitions of about that size. A
range piece carries its TFRecordFile, which pickles as its path (the worker maps the sidecar in
O(1)) or, where no sidecar could be saved, with the offsets themselves. Compressed files and URLs
are streamed whole (URLs through fsspec, with the caller's storage options or filesystem object).
Every read goes through the library's readers with the caller's reader options (PieceOptions, which
pickle to the workers), so CRCs are checked and errors name the file and offset. Where damage is
skipped (on_error other than "raise"), files are never cut: a damaged file has no index to cut it
by, so each is read whole by the tolerant stream scanner, and `max_skipped` counts per file.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tfrecord_lite._batches.columnar import Where, placing
from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._records.indexed_spans import offset_spans
from tfrecord_lite._records.random_access import TFRecordFile
from tfrecord_lite._records.reader import iter_records
from tfrecord_lite._storage.file_kinds import file_kind
from tfrecord_lite._storage.locations import StorageOptions, is_url
from tfrecord_lite._storage.sources import Sources, resolve_inputs
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError
from tfrecord_lite._wire.framing import FOOTER_SIZE, HEADER_SIZE

if TYPE_CHECKING:
    import pyarrow as pa


def input_files(paths: Sources, storage_options: StorageOptions = None) -> list[str]:
    """The files named by a path, folder, glob, prefix, URL or a list of those (_sources); local
    paths made absolute, since an engine's workers do not share the caller's directory."""
    found = resolve_inputs(paths, storage_options=storage_options)
    return [path if is_url(path) else os.path.abspath(path) for path in found]


@dataclass(frozen=True)
class PieceOptions:
    """The reader options of an engine's read (iter_records' meanings), checked once on the driver and
    handed to every task with its pieces."""

    compression: Compression = "auto"
    verify: bool = True
    on_error: OnError = "raise"
    max_skipped: int | None = None
    storage_options: StorageOptions = None
    max_record_bytes: int = MAX_RECORD_BYTES

    def __post_init__(self) -> None:
        object.__setattr__(self, "compression", normalize_compression(self.compression, allow_auto=True))
        DamagePolicy(self.on_error, self.max_skipped)  # a wrong on_error or max_skipped fails here
        if type(self.max_record_bytes) is not int or self.max_record_bytes < 1:
            raise ValueError(f"max_record_bytes must be an int >= 1, not {self.max_record_bytes!r}")

    @property
    def cuts(self) -> bool:
        """Whether files may be cut into record ranges: not where damage is skipped."""
        return self.on_error == "raise"


@dataclass(frozen=True)
class Piece:
    """Records [start, stop) of `path` through `records` (its random access), or all of `path`
    streamed when `records` is None; `size` is the piece's share of the file's bytes."""

    path: str
    size: int
    start: int = 0
    stop: int | None = None
    records: TFRecordFile | None = None

    @property
    def num_rows(self) -> int | None:
        return None if self.stop is None else self.stop - self.start


def plan_pieces(
    paths: Sequence[str], wanted: int, batch_size: int, options: PieceOptions = PieceOptions()
) -> list[Piece]:
    """About `wanted` pieces covering every record of `paths` once, in order."""
    sizes = [0 if is_url(path) else os.path.getsize(path) for path in paths]
    total = sum(sizes)
    pieces: list[Piece] = []
    for path, size in zip(paths, sizes, strict=True):
        share = round(wanted * size / total) if len(paths) < wanted and total else 1
        records = _cuttable(path, options) if share >= 2 else None
        if records is None:
            pieces.append(Piece(path, size))
            continue
        cuts = min(share, math.ceil(len(records) / batch_size)) or 1
        bounds = [len(records) * i // cuts for i in range(cuts + 1)]
        pieces += [Piece(path, size // cuts, a, b, records) for a, b in itertools.pairwise(bounds)]
    return pieces


def group_pieces(pieces: Sequence[Piece], wanted: int) -> list[list[Piece]]:
    """At most `wanted` groups of neighbouring pieces, in their order, of about equal bytes (equal
    counts where a size is unknown: a URL's): how more files than tasks share the tasks."""
    if len(pieces) <= wanted:
        return [[piece] for piece in pieces]
    sized = not any(is_url(piece.path) for piece in pieces)
    weights = [max(piece.size, 1) if sized else 1 for piece in pieces]
    total = sum(weights)
    groups: list[list[Piece]] = [[] for _ in range(wanted)]
    before = 0
    for piece, weight in zip(pieces, weights, strict=True):
        groups[min(wanted - 1, (2 * before + weight) * wanted // (2 * total))].append(piece)  # by its middle
        before += weight
    return [group for group in groups if group]


def split_bytes(sizes: Sequence[int], max_bytes: int, open_cost: int, min_partitions: int) -> int:
    """How large a partition may grow, by Spark's rule for its file sources: the dataset's bytes
    (each file counted `open_cost` larger) shared among `min_partitions`, between `open_cost`
    and `max_bytes`."""
    per_partition = sum(size + open_cost for size in sizes) // max(min_partitions, 1)
    return min(max_bytes, max(open_cost, per_partition))


def _cuttable(path: str, options: PieceOptions) -> TFRecordFile | None:
    """The random access of `path` where it may be cut into record ranges: an uncompressed local
    file, read with errors raised, whose records are no longer than max_record_bytes (the stream
    refuses a longer one, naming it); else None (the file is read whole)."""
    if not options.cuts or is_url(path) or file_kind(path, options.compression or "") != "":
        return None
    records = TFRecordFile(path, verify=options.verify, max_record_bytes=options.max_record_bytes)
    offsets = records.record_offsets()
    longest = int(np.diff(offsets).max()) - HEADER_SIZE - FOOTER_SIZE if offsets is not None and len(offsets) > 1 else 0
    if longest > options.max_record_bytes:
        records.close()
        return None
    return records


def split_pieces(
    files: Sequence[tuple[str, int]], max_bytes: int, batch_size: int, options: PieceOptions = PieceOptions()
) -> list[Piece]:
    """Pieces of at most about `max_bytes` each from (path, size) pairs: every file a piece, an
    uncompressed local file larger than that cut into record ranges by its index (the sidecar,
    built and saved on first use where the folder is writable), never into ranges shorter than
    one batch."""
    pieces: list[Piece] = []
    for path, size in files:
        records = _cuttable(path, options) if size > max_bytes else None
        if records is None:
            pieces.append(Piece(path, size))
            continue
        cuts = min(math.ceil(size / max_bytes), math.ceil(len(records) / batch_size)) or 1
        bounds = [len(records) * i // cuts for i in range(cuts + 1)]
        pieces += [Piece(path, size // cuts, a, b, records) for a, b in itertools.pairwise(bounds)]
    return pieces


def pack_pieces(pieces: Sequence[Piece], max_bytes: int, open_cost: int) -> list[list[Piece]]:
    """Pieces grouped into partitions as Spark packs files: largest first (ties in their order), a
    partition closed when the next piece would take it past `max_bytes`, each piece counted
    `open_cost` larger. Small files share a task instead of paying one each."""
    groups: list[list[Piece]] = []
    filled = max_bytes + 1
    for piece in sorted(pieces, key=lambda p: -p.size):
        if filled + piece.size > max_bytes:
            groups.append([])
            filled = 0
        groups[-1].append(piece)
        filled += piece.size + open_cost
    return groups


def piece_records(piece: Piece, batch_size: int, options: PieceOptions = PieceOptions()) -> Iterator[list[bytes]]:
    """The piece's serialized records, `batch_size` at a time, read with `options`."""
    for records, _ in placed_piece_records(piece, batch_size, options):
        yield records


def placed_piece_records(
    piece: Piece, batch_size: int, options: PieceOptions = PieceOptions()
) -> Iterator[tuple[list[bytes], Where]]:
    """piece_records' batches, each with where its record k lies (for errors: columnar.placing)."""
    if piece.records is not None:
        stop = len(piece.records) if piece.stop is None else piece.stop
        for lo in range(piece.start, stop, batch_size):
            yield piece.records[lo : min(lo + batch_size, stop)], functools.partial(_indexed, piece, lo)
        return
    records = iter_records(
        piece.path,
        compression=options.compression or "",
        verify=options.verify,
        on_error=options.on_error,
        max_skipped=options.max_skipped,
        storage_options=options.storage_options,
        max_record_bytes=options.max_record_bytes,
    )
    records.placements.keep(batch_size)
    first = 0
    try:
        while batch := list(itertools.islice(records, batch_size)):
            yield batch, functools.partial(_streamed, records.placements.where, first)
            first += len(batch)
    finally:
        records.close()


def piece_place(
    piece: Piece, options: PieceOptions, first: int, k: int = 0
) -> tuple[str | None, int, int | None] | None:
    """Where the piece's record `first + k` (as its reads count them) lies: its file, number in it and
    byte offset, from the index of a range piece, else by reading the piece again up to it (for an
    error about that record found after decoding, such as Spark's casts; None if that fails)."""
    n = first + k
    if piece.records is not None:
        stop = len(piece.records) if piece.stop is None else piece.stop
        return _indexed(piece, piece.start, n) if piece.start + n < stop else None
    silent = (
        options if options.on_error == "raise" else dataclasses.replace(options, on_error=_ignore, max_skipped=None)
    )
    try:
        for records, where in placed_piece_records(piece, _PLACE_BATCH, silent):
            if n < len(records):
                return where(n)
            n -= len(records)
    except (TFRecordError, OSError):
        pass
    return None


_PLACE_BATCH = 1024


def _ignore(err: TFRecordError) -> None:
    """The on_error of reading a piece again: its damage was reported when first read."""


def _indexed(piece: Piece, first: int, k: int) -> tuple[str | None, int, int | None]:
    assert piece.records is not None
    return piece.path, first + k, piece.records.offset(first + k)


def _streamed(where: Where, first: int, k: int) -> tuple[str | None, int, int | None] | None:
    return where(first + k)


def piece_batches(
    piece: Piece,
    features: Mapping[str, Any] | None,
    batch_size: int,
    options: PieceOptions = PieceOptions(),
    sequence_features: Mapping[str, Any] | None = None,
    columns: Sequence[str] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The piece's Examples (or SequenceExamples: decode_arrow's `sequence_features`, or records
    that carry feature lists) as Arrow record batches of `batch_size` rows (decode_arrow's).
    `columns` without a spec decodes only those keys (null where a record lacks one)."""
    from tfrecord_lite._arrow.batches import Reading, decode_arrow, decode_arrow_columns, file_arrow_batches

    whole = piece.records is None and options.storage_options is None
    if whole and options.cuts and not is_url(piece.path):  # a whole local file: the streaming decoder
        yield from file_arrow_batches(
            piece.path,
            Reading(features, sequence_features, columns, batch_size),
            compression=options.compression,
            verify=options.verify,
            max_record_bytes=options.max_record_bytes,
        )
        return
    if piece.records is not None and columns is not None and features is None and sequence_features is None:
        yield from _range_batches(piece, columns, batch_size, options.verify)
        return
    for records, where in placed_piece_records(piece, batch_size, options):
        with placing(where):
            if columns is not None and features is None and sequence_features is None:
                batch = decode_arrow_columns(records, columns)
            else:
                batch = decode_arrow(records, features, sequence_features=sequence_features)
                batch = batch if columns is None else batch.select(list(columns))
        yield batch


def _range_batches(piece: Piece, columns: Sequence[str], batch_size: int, verify: bool) -> Iterator[pa.RecordBatch]:
    """A range piece's records decoded without a spec, only `columns`: framed by the index of the
    piece's TFRecordFile a batch at a time (indexed_spans.offset_spans); from the first batch that
    does not check out on, read record by record through the TFRecordFile, which reports what is
    wrong as it always has."""
    from tfrecord_lite._arrow.batches import columns_batch, decode_arrow_columns

    assert piece.records is not None
    stop = len(piece.records) if piece.stop is None else piece.stop
    done = piece.start
    offsets = piece.records.record_offsets(piece.start, stop)  # checked against the file when opened
    if offsets is not None:
        for spans in offset_spans(piece.path, offsets, batch_size, verify):
            with placing(functools.partial(_indexed, piece, done)):
                batch = columns_batch(spans, columns)
            yield batch
            done += len(spans.starts)
    for lo in range(done, stop, batch_size):
        yield decode_arrow_columns(piece.records[lo : min(lo + batch_size, stop)], columns)
