# Record framing, sans-I/O. A TFRecord file is a run of records, each
#
#     uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)
#
# all little-endian. Nothing here does I/O: `frame` builds the bytes of one
# record, `scan` finds the complete records in a buffer (a chunk of a stream or
# a whole memory map) and says where the first incomplete one starts. Lengths
# read from the data are checked against what the buffer holds before anything
# is sliced, so a corrupt length never allocates.
from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from crc32c import crc32c as _crc32c

from ._errors import CorruptRecordError, PathName, TruncatedRecordError

HEADER_SIZE = 12
FOOTER_SIZE = 4
OVERHEAD = HEADER_SIZE + FOOTER_SIZE
_MASK_DELTA = 0xA282EAD8

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_HEADER = struct.Struct("<QI")


def masked_crc(data: bytes | bytearray | memoryview) -> int:
    """TFRecord's masked CRC32C of `data` (rotated right by 15 bits plus a constant)."""
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame_header(length: int) -> bytes:
    """The 12-byte header of a record whose payload is `length` bytes."""
    size = _U64.pack(length)
    return size + _U32.pack(masked_crc(size))


def frame_footer(data: bytes | bytearray | memoryview) -> bytes:
    """The 4-byte footer (masked CRC of the payload)."""
    return _U32.pack(masked_crc(data))


def frame(data: bytes | bytearray | memoryview) -> bytes:
    """One complete framed record: header, payload, footer."""
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    return b"".join((frame_header(view.nbytes), view, frame_footer(view)))


def header_is_valid(buf: bytes | bytearray | memoryview, pos: int = 0) -> bool:
    """True when buf[pos:pos+12] is a record header whose length CRC matches."""
    if len(buf) - pos < HEADER_SIZE:
        return False
    crc: int = _HEADER.unpack_from(buf, pos)[1]
    return masked_crc(memoryview(buf)[pos : pos + 8]) == crc


def scan(
    buf: bytes | bytearray | memoryview,
    pos: int = 0,
    *,
    verify: bool = True,
    final: bool = False,
    origin: int = 0,
    path: PathName = None,
    max_records: int | None = None,
) -> tuple[list[int], list[int], int]:
    """Find the complete records in ``buf[pos:]``.

    Returns ``(starts, lengths, next_pos)``: the payload of record k is
    ``buf[starts[k] : starts[k] + lengths[k]]`` and ``next_pos`` is where the first
    record not returned begins (the end of the buffer when all were complete).
    The length CRC is always checked; the payload CRC when `verify` is true.
    With `final` (no more data will come) an incomplete tail raises
    TruncatedRecordError. `origin` is the stream offset of ``buf[0]`` and `path`
    the file name, both only for error messages. Errors are raised for the first
    bad record in the buffer.
    """
    mv = memoryview(buf)
    end = mv.nbytes
    starts: list[int] = []
    lengths: list[int] = []
    crcs: list[int] = []  # payload CRCs, checked against the footers after the walk, in one go
    header = _HEADER.unpack_from
    crc = _crc32c
    known = _VALID_HEADERS.get
    add_start, add_length, add_crc = starts.append, lengths.append, crcs.append
    left = -1 if max_records is None else max_records  # records still wanted (-1: no limit)
    p = pos
    try:
        while p + 12 <= end and left:  # the loop runs once per record: literals, local names
            length, want = header(mv, p)
            if known(length) != want:
                _check_header(mv, p, length, want, origin, path)
            stop = p + 12 + length
            if stop + 4 > end:
                if final:
                    raise TruncatedRecordError(
                        f"truncated record: its header announces {length} bytes of data, but only "
                        f"{end - p - HEADER_SIZE} of the {length + FOOTER_SIZE} bytes of data and CRC are there",
                        path=path,
                        offset=origin + p,
                    )
                break
            if verify:
                add_crc(crc(mv[p + 12 : stop]))
            add_start(p + 12)
            add_length(length)
            left -= 1
            p = stop + 4
        if final and p < end and left:
            raise TruncatedRecordError(
                f"truncated record: the data ends {end - p} bytes into a 12-byte record header",
                path=path,
                offset=origin + p,
            )
    except (CorruptRecordError, TruncatedRecordError):
        _check_payloads(mv, starts, lengths, crcs, origin, path)  # an earlier damaged record comes first
        raise
    _check_payloads(mv, starts, lengths, crcs, origin, path)
    return starts, lengths, p


# length -> masked CRC of its 8 bytes, for lengths met in valid headers: a header whose
# CRC field equals the cached value is valid without computing its CRC again.
_VALID_HEADERS: dict[int, int] = {}


def _check_header(mv: memoryview, p: int, length: int, want: int, origin: int, path: PathName) -> None:
    """Raise CorruptRecordError unless `want` is the masked CRC of the length field at p
    (then remember it for this length)."""
    c = _crc32c(mv[p : p + 8])
    if ((((c >> 15) | (c << 17)) + _MASK_DELTA) & 0xFFFFFFFF) != want:
        raise CorruptRecordError("corrupted record: the length CRC does not match", path=path, offset=origin + p)
    if len(_VALID_HEADERS) < 4096:
        _VALID_HEADERS[length] = want


def _check_payloads(
    mv: memoryview, starts: list[int], lengths: list[int], crcs: list[int], origin: int, path: PathName
) -> None:
    """Raise CorruptRecordError for the first record whose footer does not hold the masked
    CRC of its payload (crcs[k] is the plain CRC of record k; no check when crcs is empty)."""
    if not crcs:
        return
    if len(crcs) < 32:
        footer = _U32.unpack_from
        for k, c in enumerate(crcs):
            if ((((c >> 15) | (c << 17)) + _MASK_DELTA) & 0xFFFFFFFF) != footer(mv, starts[k] + lengths[k])[0]:
                break
        else:
            return
    else:
        import numpy as np

        stops = np.array(starts, dtype=np.int64) + np.array(lengths, dtype=np.int64)
        footers = np.frombuffer(mv, dtype=np.uint8)[stops[:, None] + np.arange(4)].view("<u4").ravel()
        plain = np.array(crcs, dtype=np.uint32)
        bad = np.flatnonzero(((plain >> np.uint32(15)) | (plain << np.uint32(17))) + np.uint32(_MASK_DELTA) != footers)
        if not bad.size:
            return
        k = int(bad[0])
    raise CorruptRecordError(
        "corrupted record: the data CRC does not match", path=path, offset=origin + starts[k] - HEADER_SIZE
    )


def frame_many(records: Sequence[bytes]) -> bytes:
    """The framed records, concatenated: b"".join(map(frame, records)), several times faster."""
    import numpy as np

    n = len(records)
    lengths = list(map(len, records))
    headers = list(map(_HEADERS_BY_LENGTH.get, lengths))
    if None in headers:
        headers = list(map(cached_header, lengths))
    c = np.fromiter(map(_crc32c, records), dtype=np.uint32, count=n)
    masked = ((c >> np.uint32(15)) | (c << np.uint32(17))) + np.uint32(_MASK_DELTA)
    parts: list[Any] = [None] * (3 * n)
    parts[0::3] = headers
    parts[1::3] = records
    parts[2::3] = map(_U32.pack, masked.tolist())
    return b"".join(parts)


_HEADERS_BY_LENGTH: dict[int, bytes] = {}  # the headers of the first 4096 lengths met


def cached_header(length: int) -> bytes:
    """frame_header(length), remembered for the lengths met most (writers frame many of one length)."""
    header = _HEADERS_BY_LENGTH.get(length)
    if header is None:
        header = frame_header(length)
        if len(_HEADERS_BY_LENGTH) < 4096:
            _HEADERS_BY_LENGTH[length] = header
    return header
