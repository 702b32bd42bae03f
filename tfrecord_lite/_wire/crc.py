"""TFRecord's masked CRC32C, the check of every length field and payload: the CRC32C
rotated right by 15 bits, plus MASK_DELTA. masked_crc computes one; the loops that check
or frame many records (framing.scan and frame_many, the writer's hot path) inline the
same arithmetic with MASK_DELTA, a function call a record being their cost.

masked_length_crcs computes the masked CRCs of many record lengths at once with numpy,
from tables: CRC32C is affine over XOR, so the CRC of 8 bytes is CRC(0) ^ T0[b0] ^ ...
^ T7[b7], with T5..T7 of the zero bytes 5..7 zero (a real length is below 2**40, a TiB);
pairs of bytes share one table, and the tables hold their entries already rotated (the
mask's rotation is linear over XOR too); a batch of lengths below 2**16 takes one table lookup
each. numpy is imported only when they are first used.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from crc32c import crc32c

if TYPE_CHECKING:
    import numpy as np

MASK_DELTA = 0xA282EAD8


def masked_crc(data: bytes | bytearray | memoryview) -> int:
    """TFRecord's masked CRC32C of `data` (rotated right by 15 bits plus a constant)."""
    return mask(crc32c(data))


def mask(crc: int) -> int:
    """TFRecord's mask of a plain CRC32C (computed piece by piece: crc32c(piece, crc))."""
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


def mask_all(crcs: np.ndarray) -> np.ndarray:
    """mask() of many plain CRC32Cs (a uint32 array)."""
    import numpy as np

    masked: np.ndarray = ((crcs >> np.uint32(15)) | (crcs << np.uint32(17))) + np.uint32(MASK_DELTA)
    return masked


def masked_length_crcs(lengths: np.ndarray) -> np.ndarray:
    """The masked CRCs of record lengths below 2**40, as their headers hold them. As int64, the
    table indices need no conversion to intp inside take(): 2x faster than as uint64."""
    import numpy as np

    if len(lengths) and int(lengths.max()) < 1 << 16:  # short records: one table (the others' entry 0 is 0)
        short: np.ndarray = _short_lengths().take(lengths)
        return short
    low, mid, high = _tables()
    rotated: np.ndarray = low.take(lengths & 0xFFFF)
    rotated ^= mid.take((lengths >> 16) & 0xFFFF)
    rotated ^= high.take(lengths >> 32)
    rotated += np.uint32(MASK_DELTA)
    return rotated


@functools.cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rotated CRC32C tables of the length's bytes 0-1, 2-3 and 4 (bytes 5-7 are zero): the
    masked CRC of the 8 bytes is (low[b0 b1] ^ mid[b2 b3] ^ high[b4]) + the mask's constant,
    CRC32C and the rotation being affine / linear over XOR. Each byte's table is built from its
    8 single bits (40 CRCs in all) and rotated, each pair's as an outer XOR of two of them."""
    import numpy as np

    base = crc32c(bytes(8))
    bits = np.array(
        [[crc32c(bytes(k) + bytes([1 << i]) + bytes(7 - k)) ^ base for i in range(8)] for k in range(5)], np.uint32
    )
    places = np.zeros((5, 256), np.uint32)  # places[k][b]: what byte b at offset k adds (XOR) to base
    for i in range(8):
        places[:, 1 << i : 2 << i] = places[:, : 1 << i] ^ bits[:, i : i + 1]
    places = _rotated(places)
    low = (places[1][:, None] ^ places[0][None, :]).ravel()  # index b0 + 256 * b1
    low ^= _rotated(np.uint32(base))
    mid = (places[3][:, None] ^ places[2][None, :]).ravel()
    return low, mid, places[4]


@functools.cache
def _short_lengths() -> np.ndarray:
    """The masked CRCs of the lengths below 2**16, by length."""
    import numpy as np

    masked: np.ndarray = _tables()[0] + np.uint32(MASK_DELTA)
    return masked


def _rotated(crcs: np.ndarray) -> np.ndarray:
    """Each CRC rotated right by 15 bits, as TFRecord's mask does."""
    import numpy as np

    rotated: np.ndarray = (crcs >> np.uint32(15)) | (crcs << np.uint32(17))
    return rotated
