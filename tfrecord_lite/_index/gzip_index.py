"""Building the index of a GZIP / ZLIB TFRecord file (gzip_sidecar.py holds it), and
opening it: a fresh sidecar, else one pass over the file now. open_gzip_spans hands
TFRecordFile the index and the reader of spans from its points (gzip_seek.py) in one call,
for a local file or an object in a store. The pass reads the uncompressed stream to its
end through the StreamScanner (every record checked) and collects the marks; the seek
points come from the same pass. The stream is the one every
reader sees (the streaming Inflater, or the same rule in _SavingInflater): concatenated
members are one stream, anything else after one, or a cut anywhere, is an error, so no
index of a shorter dataset is ever made. indexed_gzip, which is laxer, is only led
through the file just behind it (its index grows as it seeks) to make the windows.

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
window) every `spacing` bytes (default 2 MiB of output); nothing of them is saved,
so each open of such a file pays that pass (the sidecar still gives len() at once).
TFRecordWriter(seek_every=) records the marks and full-flush points of the file it
writes (SeekPoints) and saves them as its sidecar: no pass at all.

An object in a store is indexed the same way through ranged reads (indexed_gzip) or
one streaming pass; its sidecar is checked by size and edge bytes only (an uploaded
sidecar's mtime is not the object's), and an index built on opening stays in memory.
"""

from __future__ import annotations

import functools
import io
import os
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from tfrecord_lite._compression.inflater import Inflater, not_a_next_member
from tfrecord_lite._compression.kinds import GZIP, CompressionKind, kind_of
from tfrecord_lite._errors import CorruptRecordError, IndexFormatError, TFRecordError, TruncatedRecordError
from tfrecord_lite._index.gzip_seek import SpanInflater, span_inflater
from tfrecord_lite._index.gzip_sidecar import (
    RAW,
    GzipIndex,
    Marks,
    Point,
    compressed_edge_check,
    file_edge_check,
    gzip_index_staleness,
    parse_gzip_index,
    read_gzip_index,
)
from tfrecord_lite._index.sidecar_file import (
    IndexArg,
    counts_as_missing,
    index_location,
    names_a_file,
    save_bytes,
    save_or_raise,
    sidecar_path,
    size_change,
    stale_error,
)
from tfrecord_lite._storage.files import sniff_file
from tfrecord_lite._storage.locations import is_url, split_options
from tfrecord_lite._stream.scanner import CHUNK_SIZE, MAX_RECORD_BYTES, DecodedStream, StreamScanner

SPACING = 2 << 20  # bytes of output between points with windows
_FEED = 1 << 18  # compressed bytes fed per step when building in-memory points


def needs_pass(index: GzipIndex) -> bool:
    """Whether the points of `index` are too far apart to read from (in-memory points were not saved)."""
    starts = [p.uout for p in index.points] + [index.stream_size]
    return not index.blob and int(np.diff(starts).max(initial=0)) > 4 * SPACING


# ----------------------------------------------------------------- building


def build_gzip_index(
    path: str, kind: str, *, verify: bool = True, spacing: int | None = None, max_record_bytes: int = MAX_RECORD_BYTES
) -> GzipIndex:
    """Index the compressed file `path` by one pass: with indexed_gzip for GZIP when it is
    installed, else with the stdlib's zlib, keeping decompressor copies as points."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        check = file_edge_check(fh, st.st_size)
    opened = functools.partial(open, path, "rb")
    marks, points, blob = _one_pass(path, opened, kind, path, verify, spacing or SPACING, max_record_bytes)
    return GzipIndex(kind, marks, points, blob, st.st_size, st.st_mtime_ns, check)


def build_remote_gzip_index(buf: Any, kind: str, *, verify: bool = True, spacing: int | None = None) -> GzipIndex:
    """Index a compressed object (`buf` its RemoteBuffer) by one pass, as build_gzip_index indexes a
    file: indexed_gzip and the streaming Inflater read it in step through one cache of ranged reads
    (each block fetched once), or the stdlib's zlib streams it. Its mtime is unknown (0): an
    object's sidecar is checked by size and edge bytes only."""
    from tfrecord_lite._storage.remote import STREAM_BLOCK, RemoteBuffer, RemoteFile, RemoteStream

    obj, size = buf.obj, len(buf)
    shared = RemoteBuffer(obj, size, STREAM_BLOCK, blocks=4)  # 32 MiB: indexed_gzip seeks back
    marks, points, blob = _one_pass(
        RemoteFile(shared),
        lambda: RemoteStream(obj),
        kind,
        obj.name,
        verify,
        spacing or SPACING,
        paired=lambda: RemoteFile(shared),
    )
    return GzipIndex(kind, marks, points, blob, size, 0, _object_edge_check(buf))


def _one_pass(
    source: str | io.RawIOBase,
    stream: Callable[[], Any],
    kind: str,
    name: str,
    verify: bool,
    spacing: int,
    limit: int = MAX_RECORD_BYTES,
    paired: Callable[[], Any] | None = None,
) -> tuple[Marks, list[Point], bytes]:
    """(marks, points, indexed_gzip export) of a compressed file. The marks come from the file
    read as every reader reads it (the streaming Inflater over `stream()`, or `paired()` beside
    indexed_gzip: one rule for where the compressed stream ends, docs/files.md); the points from
    indexed_gzip over `source` (a path or a seekable file) for a GZIP file when it is installed,
    led through the file in step with the Inflater, else from the same pass, as copies of a
    stdlib decompressor."""
    gz = _open_indexed_gzip(source, spacing) if kind == GZIP.name else None  # indexed_gzip reads GZIP only
    if gz is not None:
        with gz:
            follower = _Follower(gz)
            with (paired or stream)() as fh:
                decoded = DecodedStream(fh, kind, make_inflater=Inflater)
                try:
                    marks = _scan_marks(decoded, name, verify, limit, follower)
                finally:
                    decoded.close()
            blob = follower.export(marks.end) if marks.end > spacing else b""
        if blob is not None:
            return marks, [Point(0, 0, GZIP.wbits)], blob
    with stream() as fh:  # no indexed_gzip, or a file it does not take
        inflating = _SavingInflater(fh, kind, spacing)
        return _scan_marks(inflating, name, verify, limit), inflating.points, b""


class _Follower:
    """Leads indexed_gzip through a file behind the streaming Inflater (its index grows as it seeks),
    so both read each compressed byte at about the same time; it stops following at its first error."""

    def __init__(self, gz: Any) -> None:
        self._gz = gz
        self._failed = False

    def __call__(self, offset: int) -> None:
        if not self._failed:
            try:
                self._gz.seek(offset)
            except Exception:  # a header indexed_gzip does not take: the stdlib pass makes the points
                self._failed = True

    def export(self, size: int) -> bytes | None:
        """indexed_gzip's seek points, zlib-compressed, of the `size`-byte stream; None if it failed."""
        self(size)
        if self._failed or self._gz.seek(0, io.SEEK_END) != size:
            return None
        out = io.BytesIO()
        self._gz.export_index(fileobj=out)
        return zlib.compress(out.getvalue(), 1)


def _open_indexed_gzip(source: str | io.RawIOBase, spacing: int) -> Any:
    """An IndexedGzipFile over `source`; None without indexed_gzip, or when it refuses the file."""
    igzip = _indexed_gzip()
    if igzip is None:
        return None
    where = {"filename": source} if isinstance(source, str) else {"fileobj": source}
    try:
        return igzip.IndexedGzipFile(**where, spacing=spacing, buffer_size=CHUNK_SIZE, drop_handles=False)
    except Exception:  # the stdlib pass makes the points (and names any damage)
        return None


def _indexed_gzip() -> Any:
    try:
        import indexed_gzip  # type: ignore[import-untyped]  # optional extra "fast"
    except ImportError:
        return None
    return indexed_gzip


def _scan_marks(
    raw: Any, path: str, verify: bool, limit: int = MAX_RECORD_BYTES, follow: Callable[[int], None] | None = None
) -> Marks:
    """Read the uncompressed stream `raw` (a file object, or a DecodedStream) to its end, checking
    every record (none longer than `limit` bytes: RecordTooLargeError); `follow` is told how far
    the records reach after each chunk."""
    marks = Marks()
    try:
        stream = raw if isinstance(raw, DecodedStream) else DecodedStream(raw, "")
        stream.path = path
        for _, _, lengths in StreamScanner(stream, verify=verify, max_record_bytes=limit).chunks():
            marks.add(lengths)
            if follow is not None:
                follow(marks.end)
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
        self._kind: CompressionKind = kind_of(kind)
        self._wbits = self._kind.wbits
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
                if not data:  # what follows a member or stream is the next one (docs/files.md)
                    return 0
                if len(data) < 2:
                    more = self._fh.read(1)
                    self._cin += len(more)
                    data += more
                if not self._kind.starts(bytes(data[:2])):
                    raise not_a_next_member(self._kind, self._cin - len(data))
                self._d = zlib.decompressobj(self._wbits)
            else:
                data = self._fh.read(_FEED)
                self._cin += len(data)
                if not data:
                    raise TruncatedRecordError(f"the {self._kind.label} stream ends before its end marker")
            try:
                self._out = self._d.decompress(data)
            except zlib.error as err:
                raise CorruptRecordError(f"corrupt {self._kind.label} data ({err})") from None
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
        self.points = [Point(0, 0, kind_of(kind).wbits)]
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
            check = file_edge_check(fh, st.st_size)
        index = GzipIndex(self.kind, self.marks, self.points, b"", st.st_size, st.st_mtime_ns, check)
        return save_bytes(index.to_bytes(), sidecar_path(path), like=path)


# ----------------------------------------------------------------- opening


def open_gzip_spans(
    path: str,
    kind: str,
    index: IndexArg,
    *,
    verify: bool,
    on_stale: str,
    storage_options: Any = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> tuple[GzipIndex, SpanInflater]:
    """(index, span reader) of the `kind` ("gzip" or "zlib") file or object `path`: its index from
    a fresh sidecar, else one pass over it (refusing a record longer than `max_record_bytes`), and
    what reads spans of its uncompressed stream from the index's points."""
    if is_url(path):
        return _open_object_spans(path, kind, index, verify, on_stale, storage_options, max_record_bytes)
    idx = open_gzip_index(path, kind, index, verify=verify, on_stale=on_stale, max_record_bytes=max_record_bytes)
    return idx, span_inflater(path, idx)


def _open_object_spans(
    url: str, kind: str, index: IndexArg, verify: bool, on_stale: str, storage_options: Any, max_record_bytes: int
) -> tuple[GzipIndex, SpanInflater]:
    """open_gzip_spans of an object in a store: its bytes through a RemoteBuffer (ranged reads,
    block cache), which the span reader keeps; its index from the sidecar next to it."""
    from tfrecord_lite._storage.remote import RemoteBuffer, RemoteObject

    obj = RemoteObject(url, *split_options(storage_options))
    buf = RemoteBuffer(obj, obj.size)
    try:
        idx = open_remote_gzip_index(
            url,
            buf,
            kind,
            index,
            verify=verify,
            on_stale=on_stale,
            storage_options=storage_options,
            max_record_bytes=max_record_bytes,
        )
        return idx, span_inflater(obj.name, idx, buf)
    except BaseException:
        buf.close()
        raise


def open_gzip_index(
    path: str,
    kind: str,
    index: IndexArg,
    *,
    verify: bool,
    on_stale: str,
    spacing: int | None = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> GzipIndex:
    """The index of compressed `path`: a fresh sidecar, else one built now (and saved unless index=False)."""
    location = index_location(path, index)
    found, reason = None, None
    if location is not None:
        found = _read_existing(location, names_a_file(index))
        if found is not None:
            reason = gzip_index_staleness(found, path)
            if _usable(found, reason, location, on_stale, path):
                return found
    # a missing or stale index is built and saved; a fresh one whose points were in memory only
    # gets them back by the same pass (and then needs no saving)
    fresh = build_gzip_index(path, kind, verify=verify, spacing=spacing, max_record_bytes=max_record_bytes)
    kept = found is not None and reason is None
    if location is not None and (kept or save_bytes(fresh.to_bytes(), location, like=path)):
        fresh.location = location
    return fresh


def open_remote_gzip_index(
    url: str,
    buf: Any,
    kind: str,
    index: IndexArg,
    *,
    verify: bool,
    on_stale: str,
    storage_options: Any,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> GzipIndex:
    """The index of a compressed object (`buf` its RemoteBuffer): the sidecar next to it
    (`<url>.tfrlidx`) or `index=` (a path or URL), checked against the object's size and first and
    last 4 KiB (an uploaded sidecar's mtime is not the object's); else one streaming pass over the
    object, whose points stay in memory (nothing is written next to an object)."""
    from tfrecord_lite._storage.locations import redact
    from tfrecord_lite._storage.remote import RemoteStream

    location = index_location(url, index)
    if location is not None:
        shown, named = redact(location), names_a_file(index)
        found = _read_existing_object(location, shown, named, len(buf), storage_options)
        if found is not None:
            reason = size_change(len(buf), found.file_size, "object")
            if reason is None and _object_edge_check(buf) != found.check:
                reason = "the object's first or last bytes differ from the indexed ones"
            if _usable(found, reason, shown, on_stale, redact(url)):
                return found
    inflating = _SavingInflater(RemoteStream(buf.obj), kind, SPACING)
    marks = _scan_marks(inflating, redact(url), verify, max_record_bytes)
    return GzipIndex(kind, marks, inflating.points, b"", len(buf), 0, _object_edge_check(buf))


def _read_existing(location: str, named: bool) -> GzipIndex | None:
    """The sidecar at `location`; None when it is missing, or damaged and not `named` by the caller."""
    try:
        return read_gzip_index(location)
    except (FileNotFoundError, IndexFormatError) as err:
        if counts_as_missing(err, named):
            return None
        raise


def _read_existing_object(
    location: str, shown: str, named: bool, object_size: int, storage_options: Any
) -> GzipIndex | None:
    """The sidecar of a compressed object of `object_size` bytes at `location` (a path or URL,
    `shown` redacted), read no further than such a sidecar can reach; None when it is missing and
    not `named`, or damaged and not `named`."""
    from tfrecord_lite._storage.files import read_whole

    limit = largest_gzip_index(object_size)
    try:
        data = read_whole(location, storage_options, limit=limit)
        if len(data) > limit:
            raise IndexFormatError(f"longer than an index of a {object_size}-byte object can be", path=shown)
        return parse_gzip_index(data, shown)
    except (FileNotFoundError, IndexFormatError) as err:
        if counts_as_missing(err, named, missing_ok=not named):
            return None
        raise


def largest_gzip_index(object_size: int) -> int:
    """A generous bound on the sidecar of a compressed object of `object_size` bytes: deflate inflates
    at most 1032-fold, which bounds the marks; a point per compressed byte at most; the export of
    indexed_gzip's windows. A sidecar is about 1% of its object; this is 64 times its object."""
    return 64 * object_size + (1 << 20)


def _usable(found: GzipIndex, reason: str | None, where: str, on_stale: str, path: str) -> bool:
    """Whether `found`, stale for `reason` (None: fresh), is read from; StaleIndexError when it is
    stale and on_stale is "raise"."""
    if reason is not None and on_stale == "raise":
        raise stale_error(where, reason, path)
    return reason is None and not needs_pass(found)


def _object_edge_check(buf: Any) -> int:
    """compressed_edge_check of an object read through its RemoteBuffer."""
    return compressed_edge_check(lambda size, at: bytes(buf[at : at + size]), len(buf))


def write_gzip_index(
    path: str, target: str, *, verify: bool = True, spacing: int | None = None, max_record_bytes: int = MAX_RECORD_BYTES
) -> str:
    """Build and save the index of a compressed file (for `write_index` / CLI `index`)."""
    fresh = build_gzip_index(path, sniff_file(path), verify=verify, spacing=spacing, max_record_bytes=max_record_bytes)
    return save_or_raise(fresh.to_bytes(), target, like=path)
