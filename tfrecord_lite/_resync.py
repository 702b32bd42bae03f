# Finding the next valid record header in damaged data, sans-I/O and fast. A header
# is valid when its 4-byte CRC field holds the masked CRC32C of its 8-byte length.
# Checking that at every byte offset with one crc32c call each would crawl (a few
# MB/s), so a block of offsets is checked at once with numpy:
#
# 1. A real length is below 2**40 (a TiB), so bytes 5..7 of a header are zero: a
#    mask of zero bytes, ANDed with itself shifted, keeps only the offsets where a
#    header can start (in random garbage, one in ~16 million). Where that leaves
#    many (zero pages, arrays of small numbers), offsets whose 12 bytes are all
#    zero go too: a zero length has a nonzero CRC.
# 2. The lengths and CRC fields at the remaining offsets are gathered (through
#    overlapping strided views) and their CRCs computed together from tables: CRC32C
#    is affine over XOR, so the CRC of 8 bytes is CRC(0) ^ T0[b0] ^ ... ^ T7[b7],
#    with T5..T7 of the zero bytes 5..7 zero; pairs of bytes share one table.
from __future__ import annotations

import functools

import numpy as np

from ._framing import _MASK_DELTA, HEADER_SIZE

_BLOCK = 1 << 20  # offsets checked per numpy round
_Buffer = bytes | bytearray | memoryview


def find_header(data: _Buffer, start: int, stop: int | None = None) -> int:
    """The first offset p in [start, stop) where data[p : p + 12] is a valid record header;
    -1 when there is none. `stop` defaults to (and is capped at) the last offset with 12
    bytes after it."""
    last = len(data) - HEADER_SIZE + 1
    stop = last if stop is None else min(stop, last)
    for begin in range(start, stop, _BLOCK):
        hit = _check_block(data, begin, min(begin + _BLOCK, stop))
        if hit >= 0:
            return hit
    return -1


def _check_block(data: _Buffer, start: int, stop: int) -> int:
    """The first valid header offset in [start, stop); -1 if none."""
    n = stop - start
    block = np.frombuffer(data, np.uint8, n + HEADER_SIZE - 1, start)
    zero = block == 0
    possible = zero[5 : 5 + n] & zero[6 : 6 + n]
    possible &= zero[7 : 7 + n]
    at = np.flatnonzero(possible)
    if at.size * 16 > n:  # many: first drop the all-zero windows, with whole-block operations
        blank = zero[:n].copy()
        for k in (1, 2, 3, 4, 8, 9, 10, 11):
            blank &= zero[k : k + n]
        possible &= ~blank
        at = np.flatnonzero(possible)
    if not at.size:
        return -1
    lengths = np.ndarray((n,), "<i8", data, start, (1,))[at]  # overlapping views: one gather each
    found = np.ndarray((n,), "<u4", data, start + 8, (1,))[at]
    low, mid, high = _tables()
    crc = low[lengths & 0xFFFF] ^ mid[(lengths >> 16) & 0xFFFF] ^ high[(lengths >> 32) & 0xFF]
    masked = ((crc >> 15) | (crc << 17)) + np.uint32(_MASK_DELTA)
    hits = at[masked == found]
    return start + int(hits[0]) if hits.size else -1


@functools.cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CRC32C tables of the length's bytes 0-1, 2-3 and 4 (bytes 5-7 are zero): the CRC of the
    8 bytes is low[b0 b1] ^ mid[b2 b3] ^ high[b4], CRC32C being affine over XOR."""
    from crc32c import crc32c

    base = crc32c(bytes(8))
    places = [
        np.array([crc32c(bytes(k) + bytes([b]) + bytes(7 - k)) ^ base for b in range(256)], np.uint32) for k in range(5)
    ]
    pairs = np.arange(1 << 16)
    low = places[0][pairs & 0xFF] ^ places[1][pairs >> 8] ^ np.uint32(base)
    mid = places[2][pairs & 0xFF] ^ places[3][pairs >> 8]
    return low, mid, places[4]
