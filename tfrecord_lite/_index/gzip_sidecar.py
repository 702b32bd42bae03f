"""The index of a GZIP / ZLIB TFRecord file, and its sidecar. A compressed stream
cannot be entered anywhere, so the index keeps two sparse tables:

  marks   (record k, its offset in the uncompressed stream) for every 256th record
          and the first record starting in each 64 KiB of the stream; f[i] inflates
          the span from the mark before i to the next one (<= 64 KiB + one record)
          and walks the record headers in it (gzip_seek.py).
  points  where inflating can start: a compressed offset plus the 32 KiB window
          before it (the zran scheme; their windows are in indexed_gzip's export,
          kept whole in the sidecar and turned into points by window_points), a
          point that needs no window (the start of the file, the full-flush points
          that TFRecordWriter(seek_every=) writes), or a copy of a decompressor
          (points in memory only, never saved). gzip_index.py builds them.

Sidecar `<file>.tfrlidx` (the plain files' suffix, another magic; sidecar_file.py
checks its header and saves it), little-endian:

    68-byte header  magic "TFRLGZX\\0" | u32 version | u32 kind (1 gzip, 2 zlib) |
                    u64 count | u64 file_size | i64 mtime_ns | u32 edge_check |
                    u32 n_marks | u32 n_points | u32 blob_size | u64 stream_size |
                    u32 crc32c(header[0:64])
    u64 marks[n_marks][2]    (record, uncompressed offset), then (count, stream_size)
    u64 points[n_points][3]  (compressed offset, uncompressed offset, wbits + 64)
    blob_size bytes          zlib-compressed indexed_gzip index (empty: none)

Staleness is found as for plain files (size, mtime), with another edge check: a
CRC32C of the first and last 4 KiB of the compressed file.

A sidecar may be planted: every table is checked before use (marks start at record 0
unless the file holds none, points start at the file's start and never go back), and
an indexed_gzip export is inflated a part at a time, never with an unlimited
`max_length`, its windows within a budget: one window per `spacing` bytes of the
uncompressed stream (which is no longer than MAX_RATIO times the file), plus two.
Anything else is an IndexFormatError, which rebuilds the index.
"""

from __future__ import annotations

import functools
import itertools
import os
import struct
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from crc32c import crc32c

from tfrecord_lite._compression.kinds import GZIP, by_sidecar_code, inflater_for, kind_of
from tfrecord_lite._errors import IndexFormatError
from tfrecord_lite._index.sidecar_file import file_change, header_size, pack_header, unpack_header
from tfrecord_lite._wire.framing import OVERHEAD

GZIP_INDEX_MAGIC = b"TFRLGZX\0"
GZIP_INDEX_VERSION = 1
MARK_RECORDS = 256
MARK_BYTES_SHIFT = 16  # a mark at the first record starting in each 64 KiB of the stream
EDGE = 4096
_GZIP_INDEX_HEAD = struct.Struct("<8sIIQQqIIIIQ")  # 64 bytes, then the header's own CRC
_GZIP_INDEX_HEAD_SIZE = header_size(_GZIP_INDEX_HEAD)
_GZIDX = struct.Struct("<5sBBQQIII")
_GZIDX_POINT = np.dtype([("cin", "<u8"), ("uout", "<u8"), ("bits", "u1"), ("window", "u1")])

MAX_RATIO = 1032  # deflate's largest expansion: a stream is at most this many times its file
RAW = -15  # wbits of a point inside a deflate stream (after a full flush)


def compressed_edge_check(pread: Callable[[int, int], bytes], size: int) -> int:
    """CRC32C of the first and last 4 KiB of a compressed file of `size` bytes, read by
    `pread(size, offset)` (the file's, or an object's through its RemoteBuffer)."""
    return crc32c(pread(EDGE, 0) + pread(EDGE, max(0, size - EDGE)))


def file_edge_check(fh: Any, size: int) -> int:
    """compressed_edge_check of an open file."""
    return compressed_edge_check(functools.partial(os.pread, fh.fileno()), size)


class Marks:
    """Collects the sparse record table from the lengths of consecutive records."""

    def __init__(self) -> None:
        self.records: list[int] = []
        self.offsets: list[int] = []
        self.count = 0
        self.end = 0  # stream offset after the last record
        self._bucket = -1

    def add(self, lengths: list[int]) -> None:
        """Take the next records (their payload lengths)."""
        if not lengths:
            return
        sizes = np.asarray(lengths, np.int64) + OVERHEAD
        starts = self.end + np.concatenate(([0], np.cumsum(sizes[:-1])))
        index = self.count + np.arange(len(sizes))
        buckets = starts >> MARK_BYTES_SHIFT
        first_in_bucket = buckets != np.concatenate(([self._bucket], buckets[:-1]))
        chosen = np.flatnonzero((index % MARK_RECORDS == 0) | first_in_bucket)
        self.records.extend(index[chosen].tolist())
        self.offsets.extend(starts[chosen].tolist())
        self.count += len(sizes)
        self.end = int(starts[-1] + sizes[-1])
        self._bucket = int(buckets[-1])


class Point:
    """Where inflating can start: compressed offset `cin`, uncompressed offset `uout`, and how to
    make the decompressor (a fresh one with `wbits`, or a copy of a saved one)."""

    __slots__ = ("bits", "cin", "saved", "uout", "wbits", "window")

    def __init__(
        self, cin: int, uout: int, wbits: int, saved: Any = None, *, bits: int = 0, window: Any = None
    ) -> None:
        self.cin, self.uout, self.wbits, self.saved = cin, uout, wbits, saved
        self.bits = bits  # the point starts this many bits before compressed byte `cin`
        self.window = window  # the 32 KiB of output before the point, when inflating needs it

    def decompressor(self, head: bytes | memoryview = b"") -> Any:
        """A decompressor in the state of this point, whose input starts with `head` (which tells
        a GZIP member's header flags: kinds.CompressionKind.inflater)."""
        if self.saved is not None:
            return self.saved.copy()
        return inflater_for(self.wbits, head, self.window)


class GzipIndex:
    """The index of one compressed file: marks, points, and the indexed_gzip export (or b"")."""

    def __init__(
        self,
        kind: str,
        marks: Marks,
        points: list[Point],
        blob: bytes,
        file_size: int,
        mtime_ns: int,
        check: int,
        location: str | None = None,
    ) -> None:
        self.kind = kind
        self.count = marks.count
        self.stream_size = marks.end
        self.mark_records = marks.records + [marks.count]
        self.mark_offsets = marks.offsets + [marks.end]
        self.points = points
        self.blob = blob
        self.file_size = file_size
        self.mtime_ns = mtime_ns
        self.check = check
        self.location = location

    def to_bytes(self) -> bytes:
        """The sidecar holding this index (its in-memory points left out)."""
        marks = np.array([self.mark_records, self.mark_offsets], np.uint64).T
        saved = [p for p in self.points if p.saved is None]
        points = np.array([[p.cin, p.uout, p.wbits + 64] for p in saved], np.uint64).reshape(-1, 3)
        head = pack_header(
            _GZIP_INDEX_HEAD,
            GZIP_INDEX_MAGIC,
            GZIP_INDEX_VERSION,
            kind_of(self.kind).sidecar_code,
            self.count,
            self.file_size,
            self.mtime_ns,
            self.check,
            len(marks),
            len(points),
            len(self.blob),
            self.stream_size,
        )
        return b"".join((head, marks.astype("<u8").tobytes(), points.astype("<u8").tobytes(), self.blob))


def parse_gzip_index(data: bytes, location: str) -> GzipIndex:
    """A GzipIndex from sidecar bytes; IndexFormatError when they are not one or are damaged."""
    not_one = "not a tfrecord_lite index of a compressed file"
    fields = unpack_header(data, _GZIP_INDEX_HEAD, GZIP_INDEX_MAGIC, GZIP_INDEX_VERSION, location, not_one)
    _, _, kind, count, file_size, mtime_ns, check, n_marks, n_points, blob_size, stream_size = fields
    body = 16 * n_marks + 24 * n_points
    if len(data) != _GZIP_INDEX_HEAD_SIZE + body + blob_size or by_sidecar_code(kind) is None or n_marks < 1:
        raise IndexFormatError(f"the index is {len(data)} bytes, not what its header describes", path=location)
    table = np.frombuffer(data, "<u8", 2 * n_marks, _GZIP_INDEX_HEAD_SIZE).reshape(-1, 2)
    rows = np.frombuffer(data, "<u8", 3 * n_points, _GZIP_INDEX_HEAD_SIZE + 16 * n_marks).reshape(-1, 3).tolist()
    marks = Marks()
    marks.records, marks.offsets = table[:-1, 0].tolist(), table[:-1, 1].tolist()
    marks.count, marks.end = count, stream_size
    rows_and_offsets = table.astype(np.int64)  # both strictly increasing, from record 0 at offset 0
    if (
        table[-1].tolist() != [count, stream_size]
        or (count > 0 and table[0].tolist() != [0, 0])
        or (np.diff(rows_and_offsets, axis=0) <= 0).any()
    ):
        raise IndexFormatError("the index's record table is damaged", path=location)
    named = by_sidecar_code(kind)
    assert named is not None  # checked with the sizes above
    name = named.name
    if any(wbits - 64 not in (named.wbits, RAW) or cin > file_size or uout > stream_size for cin, uout, wbits in rows):
        raise IndexFormatError("the index's seek points are damaged", path=location)
    if (not blob_size and rows[:1] != [[0, 0, named.wbits + 64]]) or _goes_back(rows):
        raise IndexFormatError("the index's seek points do not start at the file's start", path=location)
    points = [Point(cin, uout, wbits - 64) for cin, uout, wbits in rows]
    blob = data[len(data) - blob_size :] if blob_size else b""
    return GzipIndex(name, marks, points, blob, file_size, mtime_ns, check, location)


def _goes_back(rows: Sequence[Sequence[int]]) -> bool:
    """Whether (cin, uout, ...) rows ever go back in either offset."""
    return any(b[0] < a[0] or b[1] < a[1] for a, b in itertools.pairwise(rows))


def _inflate(d: Any, data: bytes, size: int) -> bytes:
    """Up to `size` bytes more from decompressobj `d` (never decompress(..., 0): 0 means unlimited)."""
    return d.decompress(data, size) if size > 0 else b""


def window_points(blob: bytes, file_size: int) -> list[Point]:
    """The points of an indexed_gzip index export (its format 1, as zran.c writes it:
    "GZIDX", version, flags, u64 compressed size, u64 uncompressed size, u32 spacing,
    u32 window size, u32 point count; per point u64 compressed offset, u64 uncompressed
    offset, u8 bits, u8 has-window; then the windows of the points that have one).

    Inflated a part at a time, each bounded by the size the parts before it promise (a point
    per compressed byte of the `file_size`-byte file at most; windows within the budget of the
    module's docstring), so a zlib bomb in a sidecar inflates no further than a genuine export
    of that file could."""
    damaged = "the index's indexed_gzip seek points are damaged"
    d = zlib.decompressobj()
    try:
        head = d.decompress(blob, _GZIDX.size)
        if len(head) < _GZIDX.size or head[:5] != b"GZIDX" or head[5] != 1:
            raise IndexFormatError("the index's indexed_gzip seek points are not in a format read here")
        _, _, _, _, usize, spacing, window, n = _GZIDX.unpack_from(head, 0)
        if n > file_size + 1 or window > 1 << 15 or spacing < window:
            raise IndexFormatError(damaged)
        table = _inflate(d, d.unconsumed_tail, n * _GZIDX_POINT.itemsize)
        rows = np.frombuffer(table, _GZIDX_POINT, len(table) // _GZIDX_POINT.itemsize)
        with_window = int(rows["window"].sum())
        if window and with_window > min(usize, MAX_RATIO * file_size) // max(spacing, 1) + 2:
            raise IndexFormatError(damaged + f" (more windows than {file_size} compressed bytes can need)")
        windows = _inflate(d, d.unconsumed_tail, window * with_window)
        extra = _inflate(d, d.unconsumed_tail, 1)
    except zlib.error:
        raise IndexFormatError("the index's indexed_gzip seek points are damaged (they do not inflate)") from None
    complete = len(rows) == n and len(windows) == window * with_window and not extra and d.eof
    if not complete or (rows["bits"] > 7).any() or (rows["window"] > 1).any() or (rows["cin"] > file_size).any():
        raise IndexFormatError(damaged)
    if _goes_back(rows[["cin", "uout"]].tolist()):
        raise IndexFormatError(damaged + " (they go back)")
    points, at, data = [Point(0, 0, GZIP.wbits)], 0, memoryview(windows)
    for cin, uout, bits, has_window in rows.tolist():
        points.append(Point(cin, uout, RAW, bits=bits, window=data[at : at + window] if has_window else None))
        at += window if has_window else 0
    return points


def seek_points(index: GzipIndex) -> list[Point]:
    """Where inflating can start in the file of `index`: its indexed_gzip export's points, else its own."""
    return window_points(index.blob, index.file_size) if index.blob else index.points


def read_gzip_index(location: str) -> GzipIndex:
    """The GzipIndex in the sidecar at `location` (IndexFormatError when it is not one)."""
    with open(location, "rb") as fh:
        return parse_gzip_index(fh.read(), location)


def gzip_index_staleness(index: GzipIndex, path: str) -> str | None:
    """Why `index` no longer describes the compressed file `path` (None when it does)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        changed = file_change(st, index.file_size, index.mtime_ns)
        if changed is None and file_edge_check(fh, st.st_size) != index.check:
            return "the file's first or last bytes differ from the indexed ones"
    return changed
