"""Random access into GZIP / ZLIB TFRecord files. A compressed stream cannot be
entered anywhere, so the index keeps two sparse tables, both built by one pass:

  marks   (record k, its offset in the uncompressed stream) for every 256th record
          and the first record starting in each 64 KiB of the stream; f[i] inflates
          the span from the mark before i to the next one (<= 64 KiB + one record)
          and walks the record headers in it (each length CRC-checked).
  points  where inflating can start: the zran scheme (zlib's examples/zran.c) of a
          compressed offset plus the 32 KiB window before it, every `spacing` bytes
          of output (default 2 MiB), or a point that needs no window: the start of
          the file and the full-flush points that TFRecordWriter(seek_every=) writes.

Windows are made by indexed_gzip (extra [fast]; zran in C: no threads, so fork- and
DataLoader-safe, and its index exports as bytes); we store that export
zlib-compressed in our sidecar, and read from its points ourselves with the
fastest inflater installed (indexed_gzip inflates with the stdlib's zlib, at a
third of ISA-L's speed, and starts every read() again from its point). rapidgzip was the other candidate: it
also reads ZLIB and decodes in parallel, but it runs its own thread pool (an
unclosed file aborts the interpreter at exit), caches whole decoded chunks, and
its wheel is 31 MB. indexed_gzip reads GZIP only (one member or several), so a
ZLIB file, or any file without indexed_gzip, gets points in memory instead: one
pass with the stdlib's zlib keeps a copy of the decompressor (its state and
window) every `spacing` bytes; nothing of them is saved, so each open of such a
file pays that pass (the sidecar still gives len() at once). All points are
inflated by the fastest library installed (_compression/inflate.py).

Sidecar `<file>.tfrlidx` (the plain files' suffix, another magic), little-endian:

    68-byte header  magic "TFRLGZX\\0" | u32 version | u32 kind (1 gzip, 2 zlib) |
                    u64 count | u64 file_size | i64 mtime_ns | u32 edge_check |
                    u32 n_marks | u32 n_points | u32 blob_size | u64 stream_size |
                    u32 crc32c(header[0:64])
    u64 marks[n_marks][2]    (record, uncompressed offset), then (count, stream_size)
    u64 points[n_points][3]  (compressed offset, uncompressed offset, wbits + 64)
    blob_size bytes          zlib-compressed indexed_gzip index (empty: none)

Staleness is found as for plain files: size, mtime, and a CRC32C of the first and
last 4 KiB of the compressed file.
"""

from __future__ import annotations

import bisect
import functools
import io
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from crc32c import crc32c

from tfrecord_lite._compression.inflate import library
from tfrecord_lite._errors import (
    CorruptRecordError,
    IndexFormatError,
    PathName,
    StaleIndexError,
    TFRecordError,
    TruncatedRecordError,
)
from tfrecord_lite._index.record_index import SIDECAR_SUFFIX, IndexArg, save_bytes, sidecar_path
from tfrecord_lite._records.reader import CHUNK_SIZE, DecodedStream, StreamScanner
from tfrecord_lite._wire.framing import HEADER_SIZE, OVERHEAD, header_is_valid, masked_crc
from tfrecord_lite._wire.sniff import sniff_compression

MAGIC = b"TFRLGZX\0"
VERSION = 1
KINDS = {"gzip": 1, "zlib": 2}
SPACING = 2 << 20  # bytes of output between points with windows
MARK_RECORDS = 256
MARK_BYTES_SHIFT = 16  # a mark at the first record starting in each 64 KiB of the stream
EDGE = 4096
_HEAD = struct.Struct("<8sIIQQqIIIIQ")  # 64 bytes, then the header's own CRC
_HEAD_SIZE = _HEAD.size + 4
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_FEED = 1 << 18  # compressed bytes fed per step when building in-memory points
_STEP = 1 << 16  # compressed bytes fed per step when inflating from a point
_GZIDX = struct.Struct("<5sBBQQIII")
_GZIDX_POINT = np.dtype([("cin", "<u8"), ("uout", "<u8"), ("bits", "u1"), ("window", "u1")])
_WBITS = {"gzip": 31, "zlib": 15}
RAW = -15  # wbits of a point inside a deflate stream (after a full flush)


def compressed_kind(path: str) -> str:
    """'' (plain), 'gzip' or 'zlib', from the first bytes of `path`; 'unknown' otherwise."""
    with open(path, "rb") as fh:
        return sniff_compression(fh.read(HEADER_SIZE))


def edge_check(fh: Any, size: int) -> int:
    """CRC32C of the first and last 4 KiB of an open file of `size` bytes."""
    return crc32c(os.pread(fh.fileno(), EDGE, 0) + os.pread(fh.fileno(), EDGE, max(0, size - EDGE)))


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

    def decompressor(self) -> Any:
        if self.saved is not None:
            return self.saved.copy()
        if self.window is not None:
            return library().decompressobj(self.wbits, zdict=self.window)
        return library().decompressobj(self.wbits)


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

    @property
    def needs_pass(self) -> bool:
        """Whether its points are too far apart to read from (in-memory points were not saved)."""
        starts = [p.uout for p in self.points] + [self.stream_size]
        return not self.blob and int(np.diff(starts).max(initial=0)) > 4 * SPACING

    def to_bytes(self) -> bytes:
        marks = np.array([self.mark_records, self.mark_offsets], np.uint64).T
        saved = [p for p in self.points if p.saved is None]
        points = np.array([[p.cin, p.uout, p.wbits + 64] for p in saved], np.uint64).reshape(-1, 3)
        head = _HEAD.pack(
            MAGIC,
            VERSION,
            KINDS[self.kind],
            self.count,
            self.file_size,
            self.mtime_ns,
            self.check,
            len(marks),
            len(points),
            len(self.blob),
            self.stream_size,
        )
        return b"".join(
            (head, _U32.pack(crc32c(head)), marks.astype("<u8").tobytes(), points.astype("<u8").tobytes(), self.blob)
        )


def parse(data: bytes, location: str) -> GzipIndex:
    """A GzipIndex from sidecar bytes; IndexFormatError when they are not one or are damaged."""
    if len(data) < _HEAD_SIZE or data[:8] != MAGIC:
        raise IndexFormatError("not a tfrecord_lite index of a compressed file", path=location)
    fields = _HEAD.unpack_from(data, 0)
    _, version, kind, count, file_size, mtime_ns, check, n_marks, n_points, blob_size, stream_size = fields
    if version != VERSION:
        raise IndexFormatError(f"index format version {version} is not supported (this is {VERSION})", path=location)
    if crc32c(data[: _HEAD.size]) != _U32.unpack_from(data, _HEAD.size)[0]:
        raise IndexFormatError("the index header is damaged (its CRC does not match)", path=location)
    body = 16 * n_marks + 24 * n_points
    if len(data) != _HEAD_SIZE + body + blob_size or kind not in KINDS.values() or n_marks < 1:
        raise IndexFormatError(f"the index is {len(data)} bytes, not what its header describes", path=location)
    table = np.frombuffer(data, "<u8", 2 * n_marks, _HEAD_SIZE).reshape(-1, 2)
    rows = np.frombuffer(data, "<u8", 3 * n_points, _HEAD_SIZE + 16 * n_marks).reshape(-1, 3).tolist()
    marks = Marks()
    marks.records, marks.offsets = table[:-1, 0].tolist(), table[:-1, 1].tolist()
    marks.count, marks.end = count, stream_size
    rows_and_offsets = table.astype(np.int64)  # both strictly increasing, from record 0 at offset 0
    if (
        table[-1].tolist() != [count, stream_size]
        or (n_marks > 1 and table[0].tolist() != [0, 0])
        or (np.diff(rows_and_offsets, axis=0) <= 0).any()
    ):
        raise IndexFormatError("the index's record table is damaged", path=location)
    name = {v: k for k, v in KINDS.items()}[kind]
    if any(wbits - 64 not in (_WBITS[name], RAW) or cin > file_size or uout > stream_size for cin, uout, wbits in rows):
        raise IndexFormatError("the index's seek points are damaged", path=location)
    points = [Point(cin, uout, wbits - 64) for cin, uout, wbits in rows]
    blob = data[len(data) - blob_size :] if blob_size else b""
    return GzipIndex(name, marks, points, blob, file_size, mtime_ns, check, location)


# ----------------------------------------------------------------- building


def build(path: str, kind: str, *, verify: bool = True, spacing: int | None = None) -> GzipIndex:
    """Index the compressed file `path` by one pass: with indexed_gzip for GZIP when it is
    installed, else with the stdlib's zlib, keeping decompressor copies as points."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        check = edge_check(fh, st.st_size)
    marks, points, blob = _one_pass(path, functools.partial(open, path, "rb"), kind, path, verify, spacing or SPACING)
    return GzipIndex(kind, marks, points, blob, st.st_size, st.st_mtime_ns, check)


def build_remote(buf: Any, kind: str, *, verify: bool = True, spacing: int | None = None) -> GzipIndex:
    """Index a compressed object (`buf` its _remote.RemoteBuffer) by one pass, as `build` indexes a
    file: indexed_gzip reads it through a seekable file of ranged reads, the stdlib's zlib streams it.
    Its mtime is unknown (0): an object's sidecar is checked by size and edge bytes only."""
    from tfrecord_lite._storage.remote import STREAM_BLOCK, RemoteBuffer, RemoteFile, RemoteStream

    obj, size = buf.obj, len(buf)
    marks, points, blob = _one_pass(
        RemoteFile(RemoteBuffer(obj, size, STREAM_BLOCK, blocks=4)),  # 32 MiB: indexed_gzip seeks back
        lambda: RemoteStream(obj),
        kind,
        obj.name,
        verify,
        spacing or SPACING,
    )
    return GzipIndex(kind, marks, points, blob, size, 0, _edge_of(buf, size))


def _one_pass(
    source: str | io.RawIOBase, stream: Callable[[], Any], kind: str, name: str, verify: bool, spacing: int
) -> tuple[Marks, list[Point], bytes]:
    """(marks, points, indexed_gzip export) of a compressed file: by indexed_gzip over `source` (a
    path or a seekable file) for GZIP when it is installed, else over `stream()` with zlib."""
    igzip = _indexed_gzip() if kind == "gzip" else None
    if igzip is not None:
        try:
            return _build_indexed(igzip, source, name, verify, spacing)
        except TFRecordError:
            raise
        except Exception:  # indexed_gzip's errors say little: the stdlib pass below names the damage
            pass
    with stream() as fh:
        inflating = _SavingInflater(fh, kind, spacing)
        return _scan_marks(inflating, name, verify), inflating.points, b""


def _build_indexed(
    igzip: Any, source: str | io.RawIOBase, name: str, verify: bool, spacing: int
) -> tuple[Marks, list[Point], bytes]:
    where = {"filename": source} if isinstance(source, str) else {"fileobj": source}
    with igzip.IndexedGzipFile(**where, spacing=spacing, buffer_size=CHUNK_SIZE, drop_handles=False) as gz:
        marks = _scan_marks(gz, name, verify)
        blob = b""
        if marks.end > spacing:
            out = io.BytesIO()
            gz.export_index(fileobj=out)
            blob = zlib.compress(out.getvalue(), 1)
    return marks, [Point(0, 0, 31)], blob


def _indexed_gzip() -> Any:
    try:
        import indexed_gzip  # type: ignore[import-untyped]  # optional extra "fast"
    except ImportError:
        return None
    return indexed_gzip


def _scan_marks(raw: Any, path: str, verify: bool) -> Marks:
    """Read the uncompressed stream `raw` (a file object) to its end, checking every record."""
    marks = Marks()
    stream = DecodedStream(raw, "")
    stream.path = path
    try:
        for _, _, lengths in StreamScanner(stream, verify=verify).chunks():
            marks.add(lengths)
    except TFRecordError as err:
        raise type(err)(
            err.reason + " (offsets are in the uncompressed stream)", path=path, offset=err.offset
        ) from None
    return marks


class _SavingInflater(io.RawIOBase):
    """A readable uncompressed stream of a GZIP / ZLIB file that keeps a copy of its stdlib
    decompressor about every `spacing` bytes of output (the in-memory points)."""

    def __init__(self, fh: Any, kind: str, spacing: int) -> None:
        self._fh = fh
        self._kind = kind
        self._wbits = _WBITS[kind]
        self._d = zlib.decompressobj(self._wbits)
        self._spacing = spacing
        self._cin = 0  # compressed bytes fed so far
        self._uout = 0  # uncompressed bytes produced so far
        self._out = b""
        self.points = [Point(0, 0, self._wbits)]

    def readable(self) -> bool:
        return True

    def readinto(self, view: Any) -> int:
        while not self._out:
            if self._uout - self.points[-1].uout >= self._spacing and not self._d.eof:
                self.points.append(Point(self._cin, self._uout, self._wbits, self._d.copy()))
            if self._d.eof:
                data = self._d.unused_data
                if not data:
                    data = self._fh.read(_FEED)
                    self._cin += len(data)
                if not data or self._kind == "zlib":
                    return 0
                self._d = zlib.decompressobj(self._wbits)
            else:
                data = self._fh.read(_FEED)
                self._cin += len(data)
                if not data:
                    raise TruncatedRecordError(f"the {self._kind.upper()} stream ends before its end marker")
            try:
                self._out = self._d.decompress(data)
            except zlib.error as err:
                raise CorruptRecordError(f"corrupt {self._kind.upper()} data ({err})") from None
            self._uout += len(self._out)
        n = min(len(view), len(self._out))
        view[:n] = self._out[:n]
        self._out = self._out[n:]
        return n


class SeekPoints:
    """What TFRecordWriter(seek_every=) knows of the file it writes: marks, and its full-flush points."""

    def __init__(self, kind: str, every: int) -> None:
        self.kind = kind
        self.every = every
        self.marks = Marks()
        self.points = [Point(0, 0, _WBITS[kind])]
        self._out = 0  # compressed bytes written

    def add(self, records: list[bytes]) -> None:
        self.marks.add([len(r) for r in records])

    def wrote(self, size: int) -> None:
        """`size` more compressed bytes were written."""
        self._out += size

    def after(self, compressor: Any, size: int, uout: int) -> bytes:
        """`size` compressed bytes of records, which end at `uout` in the uncompressed stream,
        are to be written: the full flush to write after them when a point is due, else b""."""
        self._out += size
        if uout - self.points[-1].uout < self.every:
            return b""
        flushed: bytes = compressor.flush(zlib.Z_FULL_FLUSH)
        self._out += len(flushed)
        self.points.append(Point(self._out, uout, RAW))
        return flushed

    def save(self, path: str) -> bool:
        """Save the index of the finished file `path` beside it."""
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            check = edge_check(fh, st.st_size)
        index = GzipIndex(self.kind, self.marks, self.points, b"", st.st_size, st.st_mtime_ns, check)
        return save_bytes(index.to_bytes(), sidecar_path(path))


# ----------------------------------------------------------------- reading


class _Inflating:
    """Reads spans of the uncompressed stream by inflating from the nearest point, with the
    fastest library installed (_inflate.py): windowless points, points with indexed_gzip's
    windows (a raw inflater primed with the window, its input shifted when the point is not
    on a byte boundary), or in-memory decompressor copies. A span that crosses the end of a
    GZIP member goes on from the point at the next member's start (indexed_gzip keeps one
    there) or, from a point whose inflater reads GZIP headers, with a fresh one."""

    def __init__(
        self, path: str, kind: str, points: list[Point], pread: Callable[[int, int], bytes] | None = None
    ) -> None:
        self._fd = os.open(path, os.O_RDONLY) if pread is None else -1
        self._pread = pread or self._read_file  # (size, offset) -> bytes: the file's, or an object's
        self._path = path
        self._kind = kind
        self._points = points
        self._starts = [p.uout for p in points]

    def _read_file(self, size: int, at: int) -> bytes:
        return os.pread(self._fd, size, at)

    def read(self, start: int, size: int) -> bytes:
        parts: list[bytes] = []
        pos, end = start, start + size
        while pos < end:
            point = self._points[bisect.bisect_right(self._starts, pos) - 1]
            if parts and point.uout != pos:
                break  # a member ended and no point starts the next one: nothing follows
            out = self._inflate(point, pos - point.uout, end - pos)
            if not out:
                break
            parts.append(out)
            pos += len(out)
        return b"".join(parts)[:size]

    def _inflate(self, point: Point, skip: int, want: int) -> bytes:
        """At least `want` bytes of output (fewer at the end of the stream, or of the member
        when the point's inflater does not read GZIP headers) after the first `skip` from
        `point`, which are dropped as they come."""
        d, lib = point.decompressor(), library()
        feed = self.feed(point)
        parts: list[bytes] = []
        done, goal = 0, skip + want
        pending = b""
        while done < goal:
            if d.eof:  # a member ended: the next one follows (GZIP), or nothing does
                if self._kind == "zlib" or point.wbits != 31:
                    break
                pending = d.unused_data or next(feed, b"")
                if not pending:
                    break
                d = lib.decompressobj(31)
            if not pending:
                pending = next(feed, b"")
                if not pending:
                    break
            try:
                out = d.decompress(pending)
            except (zlib.error, lib.error) as err:
                raise CorruptRecordError(f"corrupt {self._kind.upper()} data ({err})", path=self._path) from None
            pending = b""
            if done + len(out) > skip:
                parts.append(out if done >= skip else out[skip - done :])
            done += len(out)
        return b"".join(parts)

    def feed(self, point: Point, step: int = _STEP) -> Iterator[bytes]:
        """The compressed stream from `point`, in steps of `step` bytes. A point `bits` bits before byte `cin`
        (after a block that ended mid-byte) gets empty blocks put before those bits: the
        stream then starts on a byte boundary and keeps the file's alignment, which its
        stored blocks depend on (zlib's inflatePrime does this in C; Python's APIs lack it)."""
        cin = point.cin
        if point.bits:
            last = self._pread(1, cin - 1)
            head = primer(point.bits)
            yield head[:-1] + bytes([head[-1] | (last[0] & (0xFF << (8 - point.bits)) & 0xFF)])
        while chunk := self._pread(step, cin):
            yield chunk
            cin += len(chunk)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


@functools.cache
def primer(bits: int) -> bytes:
    """Empty deflate blocks 8k - bits bits long (the last byte's top `bits` bits left 0): a
    fixed-Huffman one is 10 bits; an odd length takes a 99-bit dynamic one first."""
    stream = _DYNAMIC_EMPTY if bits % 2 else ""
    while (len(stream) + bits) % 8:
        stream += _FIXED_EMPTY
    return int(stream[::-1], 2).to_bytes((len(stream) + 7) // 8, "little")


def _lsb(value: int, n: int) -> str:
    """`value` as the n bits that deflate writes for it, first bit first."""
    return "".join(str(value >> i & 1) for i in range(n))


# bits of an empty non-final block, first bit first (RFC 1951): header (BFINAL 0, BTYPE)
# then the end-of-block code (Huffman codes go most significant bit first)
_FIXED_EMPTY = "0" + _lsb(1, 2) + "0000000"
# a dynamic block whose codes are complete: literal 0 and end-of-block 1 bit each, two
# 1-bit distance codes; the code lengths coded with 1 -> "0", 17 -> "10", 18 -> "11"
_CL_ORDER = (16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1)
_DYNAMIC_EMPTY = (
    "0"
    + _lsb(2, 2)
    + _lsb(0, 5)  # HLIT: 257 literal/length codes
    + _lsb(1, 5)  # HDIST: 2 distance codes
    + _lsb(len(_CL_ORDER) - 4, 4)
    + "".join(_lsb({1: 1, 17: 2, 18: 2}.get(s, 0), 3) for s in _CL_ORDER)
    + "0"  # literal 0: length 1
    # literals 1-255: length 0, as 138 + 107 + 10 zeros (codes 18, 18, 17)
    + "11"
    + _lsb(138 - 11, 7)
    + "11"
    + _lsb(107 - 11, 7)
    + "10"
    + _lsb(10 - 3, 3)
    + "000"  # end-of-block and both distance codes: length 1
    + "1"  # end-of-block
)


def window_points(blob: bytes) -> list[Point]:
    """The points of an indexed_gzip index export (its format 1, as zran.c writes it:
    "GZIDX", version, flags, u64 compressed size, u64 uncompressed size, u32 spacing,
    u32 window size, u32 point count; per point u64 compressed offset, u64 uncompressed
    offset, u8 bits, u8 has-window; then the windows of the points that have one)."""
    try:
        data = memoryview(zlib.decompress(blob))
    except zlib.error:
        raise IndexFormatError("the index's indexed_gzip seek points are damaged (they do not inflate)") from None
    if len(data) < _GZIDX.size or bytes(data[:5]) != b"GZIDX" or data[5] != 1:
        raise IndexFormatError("the index's indexed_gzip seek points are not in a format read here")
    *_, window, n = _GZIDX.unpack_from(data, 0)
    if n > (len(data) - _GZIDX.size) // _GZIDX_POINT.itemsize or window > 1 << 15:
        raise IndexFormatError("the index's indexed_gzip seek points are damaged")
    rows = np.frombuffer(data, _GZIDX_POINT, n, _GZIDX.size)
    at = _GZIDX.size + rows.nbytes
    if len(data) != at + window * int(rows["window"].sum()) or (rows["bits"] > 7).any() or (rows["window"] > 1).any():
        raise IndexFormatError("the index's indexed_gzip seek points are damaged")
    points = [Point(0, 0, 31)]
    for cin, uout, bits, has_window in rows.tolist():
        points.append(Point(cin, uout, RAW, bits=bits, window=data[at : at + window] if has_window else None))
        at += window if has_window else 0
    return points


def reader(path: str, index: GzipIndex, remote: Any = None) -> _Inflating:
    """What reads spans of the uncompressed stream of `path`, or of the object whose
    _remote.RemoteBuffer is `remote` (ranged reads through its block cache)."""
    points = window_points(index.blob) if index.blob else index.points
    pread = None if remote is None else lambda size, at: bytes(remote[at : at + size])
    return _Inflating(path, index.kind, points, pread)


# ----------------------------------------------------------------- opening


def read_sidecar(location: str) -> GzipIndex:
    with open(location, "rb") as fh:
        return parse(fh.read(), location)


def staleness(index: GzipIndex, path: str) -> str | None:
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        if st.st_size != index.file_size:
            return f"the file is {st.st_size} bytes now, {index.file_size} when indexed"
        if st.st_mtime_ns != index.mtime_ns:
            return "the file was modified after it was indexed (its mtime changed)"
        if edge_check(fh, st.st_size) != index.check:
            return "the file's first or last bytes differ from the indexed ones"
    return None


def open_index(
    path: str, kind: str, index: IndexArg, *, verify: bool, on_stale: str, spacing: int | None = None
) -> GzipIndex:
    """The index of compressed `path`: a fresh sidecar, else one built now (and saved unless index=False)."""
    location = None if index is False else sidecar_path(path) if index in (None, True) else os.fspath(index)  # type: ignore[arg-type]
    existing, reason = None, None
    if location is not None:
        try:
            existing = read_sidecar(location)
        except FileNotFoundError:
            pass
        except IndexFormatError:
            if index not in (None, True):
                raise
    if existing is not None:
        reason = staleness(existing, path)
        if reason is None and not existing.needs_pass:
            return existing
        if reason is not None and on_stale == "raise":
            raise StaleIndexError(
                f"{location} is out of date: {reason}; open with on_stale='rebuild' to re-index", path=path
            )
    # a missing or stale index is built and saved; a fresh one whose points were in memory only
    # gets them back by the same pass (and then needs no saving)
    fresh = build(path, kind, verify=verify, spacing=spacing)
    kept = existing is not None and reason is None
    if location is not None and (kept or save_bytes(fresh.to_bytes(), location)):
        fresh.location = location
    return fresh


def open_remote_index(
    url: str, buf: Any, kind: str, index: IndexArg, *, verify: bool, on_stale: str, storage_options: Any
) -> GzipIndex:
    """The index of a compressed object (`buf` its _remote.RemoteBuffer): the sidecar next to it
    (`<url>.tfrlidx`) or `index=` (a path or URL), checked against the object's size and first and
    last 4 KiB (an uploaded sidecar's mtime is not the object's); else one streaming pass over the
    object, whose points stay in memory (nothing is written next to an object)."""
    from tfrecord_lite._storage.files import read_whole
    from tfrecord_lite._storage.remote import RemoteStream, redact

    explicit = isinstance(index, (str, os.PathLike))
    location = os.fspath(index) if explicit else None if index is False else url + SIDECAR_SUFFIX  # type: ignore[arg-type]
    size = len(buf)
    if location is not None:
        shown = redact(location)
        try:
            found = parse(read_whole(location, storage_options), shown)
        except FileNotFoundError:
            if explicit:
                raise
            found = None
        except IndexFormatError:
            if explicit:
                raise
            found = None
        if found is not None:
            reason = (
                f"the object is {size} bytes now, {found.file_size} when indexed"
                if found.file_size != size
                else "the object's first or last bytes differ from the indexed ones"
                if _edge_of(buf, size) != found.check
                else None
            )
            if reason is None and not found.needs_pass:
                return found
            if reason is not None and on_stale == "raise":
                raise StaleIndexError(
                    f"{shown} is out of date: {reason}; open with on_stale='rebuild' to re-index", path=redact(url)
                )
    inflating = _SavingInflater(RemoteStream(buf.obj), kind, SPACING)
    marks = _scan_marks(inflating, redact(url), verify)
    return GzipIndex(kind, marks, inflating.points, b"", size, 0, _edge_of(buf, size))


def _edge_of(buf: Any, size: int) -> int:
    """edge_check of a compressed object read through a RemoteBuffer."""
    return crc32c(buf[0:EDGE] + buf[max(0, size - EDGE) : size])


def write_gzip_index(path: str, target: str, *, verify: bool = True, spacing: int | None = None) -> str:
    """Build and save the index of a compressed file (for `write_index` / CLI `index`)."""
    fresh = build(path, compressed_kind(path), verify=verify, spacing=spacing)
    if not save_bytes(fresh.to_bytes(), target):
        raise PermissionError(13, "cannot write the index here (read-only?)", target)
    return target


# ----------------------------------------------------------------- records


def record_at(read: Callable[[int, int], bytes], index: GzipIndex, i: int, verify: bool, path: PathName) -> bytes:
    """Record `i` (already in range): inflate the span between the marks around it, walk to it."""
    m = bisect.bisect_right(index.mark_records, i) - 1
    first, start = index.mark_records[m], index.mark_offsets[m]
    span = read(start, index.mark_offsets[m + 1] - start)
    at = _starts(span, i - first + 1, start, path)[-1]
    return _payload(span, at, start, verify, path)


def record_offset(read: Callable[[int, int], bytes], index: GzipIndex, i: int, path: PathName) -> int:
    """Where record `i` starts in the uncompressed stream."""
    m = bisect.bisect_right(index.mark_records, i) - 1
    first, start = index.mark_records[m], index.mark_offsets[m]
    if first == i:
        return start
    span = read(start, index.mark_offsets[m + 1] - start)
    return start + _starts(span, i - first + 1, start, path)[-1]


def records_in_span(
    read: Callable[[int, int], bytes], index: GzipIndex, m: int, verify: bool, path: PathName
) -> Iterator[tuple[int, bytes]]:
    """(record number, record) of every record between mark `m` and the next one."""
    first, start = index.mark_records[m], index.mark_offsets[m]
    span = read(start, index.mark_offsets[m + 1] - start)
    for k, at in enumerate(_starts(span, index.mark_records[m + 1] - first, start, path)):
        yield first + k, _payload(span, at, start, verify, path)


def _starts(span: bytes, count: int, origin: int, path: PathName) -> list[int]:
    """Where the first `count` records of `span` (which starts with a record) begin. Only their
    lengths are read: the index was built by a scan that checked every header, and a record
    found at a wrong place fails its own header check in _payload."""
    starts = []
    pos, size = 0, len(span)
    for _ in range(count):
        if size - pos < HEADER_SIZE:
            _bad(span, pos, origin, path)
        starts.append(pos)
        pos += _U64.unpack_from(span, pos)[0] + OVERHEAD
    return starts


def _payload(span: bytes, pos: int, origin: int, verify: bool, path: PathName) -> bytes:
    """The payload of the record at `pos` of `span`, its header (and with `verify` its data) checked."""
    if not header_is_valid(span, pos):
        _bad(span, pos, origin, path)
    end = pos + _U64.unpack_from(span, pos)[0] + OVERHEAD
    if end > len(span):
        _bad(span, len(span), origin, path)
    data = span[pos + HEADER_SIZE : end - 4]
    if verify and masked_crc(data) != _U32.unpack_from(span, end - 4)[0]:
        raise CorruptRecordError(
            "corrupted record: the data CRC does not match (offset in the uncompressed stream)",
            path=path,
            offset=origin + pos,
        )
    return data


def _bad(span: bytes, pos: int, origin: int, path: PathName) -> None:
    if len(span) - pos < HEADER_SIZE:
        raise TruncatedRecordError(
            "the compressed file holds less than its index says: it changed after indexing, or is damaged",
            path=path,
            offset=origin + pos,
        )
    raise CorruptRecordError(
        "no valid record where the index says one starts (offset in the uncompressed stream): "
        "the file changed after indexing, or is damaged",
        path=path,
        offset=origin + pos,
    )
