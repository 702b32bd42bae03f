# Random access into GZIP / ZLIB TFRecord files. A compressed stream cannot be
# entered anywhere, so the index keeps two sparse tables, both built by one pass:
#
#   marks   (record k, its offset in the uncompressed stream) for every 256th record
#           and the first record starting in each 256 KiB of the stream; f[i] inflates
#           the span from the mark before i to the next one (<= 256 KiB + one record)
#           and walks the record headers in it (each length CRC-checked).
#   points  where inflating can start: the zran scheme (zlib's examples/zran.c) of a
#           compressed offset plus the 32 KiB window before it, every `spacing` bytes
#           of output (default 2 MiB), or a point that needs no window: the start of
#           the file and the full-flush points that TFRecordWriter(seek_every=) writes.
#
# Windows are made and used by indexed_gzip (extra [fast]; zran in C: no threads, so
# fork- and DataLoader-safe, and its index exports and imports as bytes); we store
# that export zlib-compressed in our sidecar. rapidgzip was the other candidate: it
# also reads ZLIB and decodes in parallel, but it runs its own thread pool (an
# unclosed file aborts the interpreter at exit), caches whole decoded chunks, and
# its wheel is 31 MB. indexed_gzip reads GZIP only (one member or several), so a
# ZLIB file, or any file without indexed_gzip, gets points in memory instead: one
# pass with the stdlib's zlib keeps a copy of the decompressor (its state and
# window) every `spacing` bytes; nothing of them is saved, so each open of such a
# file pays that pass (the sidecar still gives len() at once). Windowless points
# are inflated by the fastest library installed (_inflate.py).
#
# Sidecar `<file>.tfrlidx` (the plain files' suffix, another magic), little-endian:
#
#     68-byte header  magic "TFRLGZX\0" | u32 version | u32 kind (1 gzip, 2 zlib) |
#                     u64 count | u64 file_size | i64 mtime_ns | u32 edge_check |
#                     u32 n_marks | u32 n_points | u32 blob_size | u64 stream_size |
#                     u32 crc32c(header[0:64])
#     u64 marks[n_marks][2]    (record, uncompressed offset), then (count, stream_size)
#     u64 points[n_points][3]  (compressed offset, uncompressed offset, wbits + 64)
#     blob_size bytes          zlib-compressed indexed_gzip index (empty: none)
#
# Staleness is found as for plain files: size, mtime, and a CRC32C of the first and
# last 4 KiB of the compressed file.
from __future__ import annotations

import bisect
import io
import os
import struct
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from crc32c import crc32c

from ._errors import CorruptRecordError, PathName, TFRecordError, TruncatedRecordError
from ._framing import HEADER_SIZE, OVERHEAD, header_is_valid, masked_crc
from ._inflate import library
from ._reader import CHUNK_SIZE, DecodedStream, StreamScanner
from ._sidecar import SIDECAR_SUFFIX, IndexArg, IndexFormatError, StaleIndexError, save_bytes, sidecar_path
from ._sniff import sniff_compression

MAGIC = b"TFRLGZX\0"
VERSION = 1
KINDS = {"gzip": 1, "zlib": 2}
SPACING = 2 << 20  # bytes of output between points with windows
MARK_RECORDS = 256
MARK_BYTES_SHIFT = 18  # a mark at the first record starting in each 256 KiB of the stream
EDGE = 4096
_HEAD = struct.Struct("<8sIIQQqIIIIQ")  # 64 bytes, then the header's own CRC
_HEAD_SIZE = _HEAD.size + 4
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_FEED = 1 << 18  # compressed bytes fed per step when inflating from a point
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

    __slots__ = ("cin", "saved", "uout", "wbits")

    def __init__(self, cin: int, uout: int, wbits: int, saved: Any = None) -> None:
        self.cin, self.uout, self.wbits, self.saved = cin, uout, wbits, saved

    def decompressor(self) -> Any:
        if self.saved is not None:
            return self.saved.copy()
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
    if table[-1].tolist() != [count, stream_size] or any(np.diff(table[:, 0].astype(np.int64)) <= 0):
        raise IndexFormatError("the index's record table is damaged", path=location)
    points = [Point(cin, uout, wbits - 64) for cin, uout, wbits in rows]
    name = {v: k for k, v in KINDS.items()}[kind]
    blob = data[len(data) - blob_size :] if blob_size else b""
    return GzipIndex(name, marks, points, blob, file_size, mtime_ns, check, location)


# ----------------------------------------------------------------- building


def build(path: str, kind: str, *, verify: bool = True, spacing: int | None = None) -> GzipIndex:
    """Index the compressed file `path` by one pass: with indexed_gzip for GZIP when it is
    installed, else with the stdlib's zlib, keeping decompressor copies as points."""
    spacing = spacing or SPACING
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        check = edge_check(fh, st.st_size)
    igzip = _indexed_gzip() if kind == "gzip" else None
    found = None
    if igzip is not None:
        try:
            found = _build_indexed(igzip, path, verify, spacing)
        except TFRecordError:
            raise
        except Exception:  # indexed_gzip's errors say little: the stdlib pass below names the damage
            found = None
    if found is None:
        with open(path, "rb") as fh:
            inflating = _SavingInflater(fh, kind, spacing)
            found = _scan_marks(inflating, path, verify), inflating.points, b""
    marks, points, blob = found
    return GzipIndex(kind, marks, points, blob, st.st_size, st.st_mtime_ns, check)


def _build_indexed(igzip: Any, path: str, verify: bool, spacing: int) -> tuple[Marks, list[Point], bytes]:
    with igzip.IndexedGzipFile(path, spacing=spacing, buffer_size=CHUNK_SIZE, drop_handles=False) as gz:
        marks = _scan_marks(gz, path, verify)
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
    """Reads spans of the uncompressed stream by inflating from the nearest point (windowless
    points from the sidecar, or in-memory decompressor copies)."""

    def __init__(
        self, path: str, kind: str, points: list[Point], pread: Callable[[int, int], bytes] | None = None
    ) -> None:
        self._fd = os.open(path, os.O_RDONLY) if pread is None else -1
        self._pread = pread or self._read_file
        self._path = path
        self._kind = kind
        self._points = points
        self._starts = [p.uout for p in points]

    def _read_file(self, size: int, at: int) -> bytes:
        return os.pread(self._fd, size, at)

    def read(self, start: int, size: int) -> bytes:
        point = self._points[bisect.bisect_right(self._starts, start) - 1]
        d, cin, skip = point.decompressor(), point.cin, start - point.uout
        lib = library()
        want = skip + size
        parts: list[bytes] = []
        pending = b""
        while want > 0:
            if d.eof:  # a member ended: the next one follows (GZIP), or nothing does
                pending = d.unused_data
                if self._kind == "zlib" or point.wbits == RAW:
                    break
                if not pending:
                    pending = self._pread(_FEED, cin)
                    cin += len(pending)
                    if not pending:
                        break
                d = lib.decompressobj(31)
            if not pending:
                pending = self._pread(_FEED, cin)
                cin += len(pending)
                if not pending:
                    break
            try:
                out = d.decompress(pending, want)
            except (zlib.error, lib.error) as err:
                raise CorruptRecordError(f"corrupt {self._kind.upper()} data ({err})", path=self._path) from None
            pending = d.unconsumed_tail
            parts.append(out)
            want -= len(out)
        return b"".join(parts)[skip : skip + size]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class _Indexed:
    """Reads spans through indexed_gzip with the index imported from the sidecar."""

    def __init__(self, path: str, blob: bytes, fileobj: Any = None) -> None:
        igzip = _indexed_gzip()
        if igzip is None:
            raise ImportError(
                f"random access into {path} uses the indexed_gzip seek points in its index: "
                "pip install 'tfrlite[fast]' (or delete the index to rebuild it without them)"
            )
        if fileobj is not None:  # an object in a store, read by ranged requests through a block cache
            self._gz = igzip.IndexedGzipFile(
                fileobj=fileobj, buffer_size=1 << 16, readbuf_size=_FEED, drop_handles=False, skip_crc_check=True
            )
        else:
            self._gz = igzip.IndexedGzipFile(path, buffer_size=1 << 16, drop_handles=True, skip_crc_check=True)
        self._gz.import_index(fileobj=io.BytesIO(zlib.decompress(blob)))
        self._lock = threading.Lock()

    def read(self, start: int, size: int) -> bytes:
        with self._lock:
            self._gz.seek(start)
            data: bytes = self._gz.read(size)
            return data

    def close(self) -> None:
        self._gz.close()


def reader(path: str, index: GzipIndex, remote: Any = None) -> _Inflating | _Indexed:
    """What reads spans of the uncompressed stream of `path`, or of the object whose
    _remote.RemoteBuffer is `remote`."""
    if remote is None:
        return _Indexed(path, index.blob) if index.blob else _Inflating(path, index.kind, index.points)
    from ._remote import RemoteFile

    if index.blob:
        return _Indexed(path, index.blob, RemoteFile(remote))
    return _Inflating(path, index.kind, index.points, lambda size, at: remote[at : at + size])


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
    from ._files import read_whole
    from ._remote import RemoteStream, redact

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
