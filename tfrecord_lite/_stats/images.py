"""Which bytes values are images, of what format and size, from their first bytes only.

Strategy: the formats are told apart by their magic bytes, checked for a whole batch at once with
numpy on the first 16 bytes of every value; only the values that match are looked at one by one,
and then only their headers: PNG's IHDR, GIF's screen descriptor, BMP's DIB header, WebP's first
chunk (VP8, VP8L or VP8X), and for JPEG the markers walked to the first start-of-frame. No pixel
is decoded and Pillow is not needed. A value whose header does not parse counts as not an image.
"""

from __future__ import annotations

import numpy as np

from tfrecord_lite._html.images import BMP_HEADER_SIZES, SIGNATURES

__all__ = ["FORMATS", "image_size", "sniff_formats"]

FORMATS = ("jpeg", "png", "gif", "webp", "bmp")
_HEAD = 16
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_STANDALONE = {0x01, *range(0xD0, 0xD9)}
FIRST_BYTES = np.zeros(256, dtype=bool)
FIRST_BYTES[[parts[0][1][0] for parts, name in SIGNATURES if name in FORMATS]] = True


def _head_matrix(data: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The first _HEAD bytes of each value data[bounds[0, k]:bounds[1, k]] (zeros past its end)."""
    starts, lengths = bounds[0], bounds[1] - bounds[0]
    columns = np.arange(_HEAD)
    index = np.minimum(starts[:, None] + columns, max(len(data) - 1, 0))
    if not len(data):
        return np.zeros((len(starts), _HEAD), dtype=np.uint8)
    head: np.ndarray = np.where(columns < lengths[:, None], data[index], 0).astype(np.uint8)
    return head


def _matches(head: np.ndarray, at: int, magic: bytes) -> np.ndarray:
    found: np.ndarray = np.all(head[:, at : at + len(magic)] == np.frombuffer(magic, dtype=np.uint8), axis=1)
    return found


def sniff_formats(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per value, the index in FORMATS + 1 of the format its magic bytes name, else 0."""
    out = np.zeros(len(offsets) - 1, dtype=np.int8)
    starts = offsets[:-1][np.diff(offsets) >= 2]
    maybe = FIRST_BYTES[data[starts]]  # most values are ruled out by their first byte
    if not maybe.any():
        return out
    rows = np.flatnonzero(np.diff(offsets) >= 2)[maybe]
    out[rows] = _sniff_heads(_head_matrix(data, np.stack([offsets[rows], offsets[rows + 1]])))
    return out


def _sniff_heads(head: np.ndarray) -> np.ndarray:
    out = np.zeros(len(head), dtype=np.int8)
    for parts, name in SIGNATURES:
        if name in FORMATS:
            found = np.logical_and.reduce([_matches(head, at, magic) for at, magic in parts])
            out[found] = FORMATS.index(name) + 1
    return out


def image_size(kind: str, data: bytes) -> tuple[int, int] | None:
    """(width, height) from the header of an image of format `kind`; None if it does not parse."""
    try:
        size = _PARSERS[kind](data)
    except (IndexError, ValueError):
        return None
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def _be(data: bytes, at: int, n: int) -> int:
    if at + n > len(data):
        raise IndexError(at)
    return int.from_bytes(data[at : at + n], "big")


def _le(data: bytes, at: int, n: int) -> int:
    if at + n > len(data):
        raise IndexError(at)
    return int.from_bytes(data[at : at + n], "little")


def _png(data: bytes) -> tuple[int, int] | None:
    if data[12:16] != b"IHDR":
        return None
    return _be(data, 16, 4), _be(data, 20, 4)


def _gif(data: bytes) -> tuple[int, int]:
    return _le(data, 6, 2), _le(data, 8, 2)


def _bmp(data: bytes) -> tuple[int, int] | None:
    header = _le(data, 14, 4)
    if header == 12:
        return _le(data, 18, 2), _le(data, 20, 2)
    if header not in BMP_HEADER_SIZES:
        return None
    width = int.from_bytes(data[18:22], "little", signed=True)
    height = int.from_bytes(data[22:26], "little", signed=True)
    return width, abs(height)  # a negative height: rows stored top-down


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        return _le(data, 26, 2) & 0x3FFF, _le(data, 28, 2) & 0x3FFF
    if chunk == b"VP8L":
        bits = _le(data, 21, 4)
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8X":
        return 1 + _le(data, 24, 3), 1 + _le(data, 27, 3)
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in _STANDALONE:
            at += 2
            continue
        if marker in _SOF:
            return _be(data, at + 7, 2), _be(data, at + 5, 2)
        if marker == 0xDA:  # start of scan before any frame header
            return None
        at += 2 + _be(data, at + 2, 2)
    return None


_PARSERS = {"jpeg": _jpeg, "png": _png, "gif": _gif, "webp": _webp, "bmp": _bmp}
