"""Reading a GZIP / ZLIB TFRecord file at any record, through its index
(gzip_sidecar.py). A SpanInflater reads a span of the uncompressed stream by
inflating from the nearest seek point before it, with the fastest inflater installed,
reading the file by pread (or an object by ranged reads), so reads keep no state and
threads can share it. Record i is found from the mark before it: the span up to the
next mark (<= 64 KiB + one record) is inflated once and its record headers walked,
their lengths only (the index was built by a scan that checked every header); the
record found is then checked like any record, header CRC and (with verify) data CRC,
so an index that no longer fits the file fails loudly rather than returning another
record. Offsets in errors are offsets in the uncompressed stream.

A point that starts mid-byte (indexed_gzip's, after a block that ended there) gets
empty deflate blocks put before it (`primer`), so that its stream starts on a byte
boundary while keeping the file's alignment.
"""

from __future__ import annotations

import bisect
import functools
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from tfrecord_lite._compression.inflate import library
from tfrecord_lite._compression.kinds import kind_of
from tfrecord_lite._errors import CorruptRecordError, PathName, TruncatedRecordError
from tfrecord_lite._index.gzip_sidecar import GzipIndex, Point, seek_points
from tfrecord_lite._wire.crc import masked_crc
from tfrecord_lite._wire.framing import HEADER_SIZE, OVERHEAD, header_is_valid

_STEP = 1 << 16  # compressed bytes fed per step when inflating from a point
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


class SpanInflater:
    """Reads spans of the uncompressed stream by inflating from the nearest point, with the
    fastest library installed (_compression/inflate.py): windowless points, points with indexed_gzip's
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
        self._kind = kind_of(kind)
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
        lib = library()
        feed = self.feed(point)
        parts: list[bytes] = []
        done, goal = 0, skip + want
        pending = next(feed, b"")
        d = point.decompressor(pending)
        while done < goal:
            if d.eof:  # a member (stream) ended: the next one follows, or nothing does
                if point.wbits != self._kind.wbits:  # a raw deflate point: the next member has its own point
                    break
                pending = d.unused_data or next(feed, b"")
                if not pending:
                    break
                d = self._kind.inflater(pending)
            if not pending:
                pending = next(feed, b"")
                if not pending:
                    break
            try:
                out = d.decompress(pending)
            except (zlib.error, lib.error) as err:
                raise CorruptRecordError(f"corrupt {self._kind.label} data ({err})", path=self._path) from None
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
            if not last:  # the file shrank below a seek point after indexing
                raise TruncatedRecordError(
                    f"the compressed file ends before the seek point at byte {cin - 1}: "
                    "it changed after indexing, or is truncated",
                    path=self._path,
                    offset=cin - 1,
                )
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


def span_inflater(path: str, index: GzipIndex, remote: Any = None) -> SpanInflater:
    """What reads spans of the uncompressed stream of `path`, or of the object whose
    RemoteBuffer is `remote` (ranged reads through its block cache)."""
    pread = None if remote is None else lambda size, at: bytes(remote[at : at + size])
    return SpanInflater(path, index.kind, seek_points(index), pread)


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
