"""Finding the next valid record header in damaged data, sans-I/O and fast. A header
is valid when its 4-byte CRC field holds the masked CRC32C of its 8-byte length.
Checking that at every byte offset with one crc32c call each would crawl (a few
MB/s), so a block of 64 Ki offsets is checked at once with numpy (a block's
temporaries stay in the CPU cache):

1. Offsets that cannot start a header are dropped with whole-block operations on a
   mask of zero bytes: a real length is below 2**40 (a TiB), so bytes 5..7 are zero
   (in random garbage that leaves one offset in ~16 million); where many remain
   (zero pages, arrays of small numbers), offsets whose 12 bytes are all zero go (a
   zero length has a nonzero CRC); and when the caller knows where the stream ends,
   offsets whose bytes 3..4 announce a record longer than what is left.
2. The lengths and CRC fields at the remaining offsets are gathered (np.take through
   overlapping strided views; 3x faster than fancy indexing) and their masked CRCs
   computed together from tables (crc.masked_length_crcs).
"""

from __future__ import annotations

import numpy as np

from tfrecord_lite._wire.crc import masked_length_crcs
from tfrecord_lite._wire.framing import HEADER_SIZE, OVERHEAD

_BLOCK = 1 << 16  # offsets checked per numpy round
_Buffer = bytes | bytearray | memoryview


def find_header(data: _Buffer, start: int, stop: int | None = None, *, end: int | None = None) -> int:
    """The first offset p in [start, stop) where data[p : p + 12] is a valid record header;
    -1 when there is none. `stop` defaults to (and is capped at) the last offset with 12
    bytes after it. `end`: where the stream ends, as an offset in `data`, when known (it
    may lie beyond `data`): a header announcing a record that would run past it is not valid."""
    last = len(data) - HEADER_SIZE + 1
    stop = last if stop is None else min(stop, last)
    for begin in range(start, stop, _BLOCK):
        hit = _check_block(data, begin, min(begin + _BLOCK, stop), end)
        if hit >= 0:
            return hit
    return -1


def _check_block(data: _Buffer, start: int, stop: int, end: int | None) -> int:
    """The first valid header offset in [start, stop); -1 if none."""
    n = stop - start
    block = np.frombuffer(data, np.uint8, n + HEADER_SIZE - 1, start)
    zero = block == 0
    possible = zero[5 : 5 + n] & zero[6 : 6 + n]
    possible &= zero[7 : 7 + n]
    if np.count_nonzero(possible) * 16 > n:  # many: drop more with whole-block operations
        blank = zero[:n].copy()
        for k in (1, 2, 3, 4, 8, 9, 10, 11):
            blank &= zero[k : k + n]
        possible &= ~blank
        if end is not None:
            _drop_too_long(possible, zero, block, n, end - start - OVERHEAD)
    at = np.flatnonzero(possible)
    if not at.size:
        return -1
    # one gather through an overlapping view, as int64 (the lengths are below 2**40)
    lengths = np.ndarray((n,), "<i8", data, start, (1,)).take(at)
    hits = at[masked_length_crcs(lengths) == np.ndarray((n,), "<u4", data, start + 8, (1,)).take(at)]
    for hit in (start + int(h) for h in hits):
        if end is None or hit + OVERHEAD + int.from_bytes(data[hit : hit + 8], "little") <= end:
            return hit
    return -1


def _drop_too_long(possible: np.ndarray, zero: np.ndarray, block: np.ndarray, n: int, room: int) -> None:
    """Clear the offsets whose length's bytes 3..4 alone exceed `room` (the most any record
    starting in this block can hold): a cheap first cut, the exact check is on the hits."""
    if room < 0:
        possible[:] = False
    elif room < 1 << 32:
        possible &= zero[4 : 4 + n]
        possible &= block[3 : 3 + n] <= room >> 24
