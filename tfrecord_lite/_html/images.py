"""Images inside records, recognised without decoding them: encoded images by their first bytes
(the magic numbers of PNG, JPEG, GIF, WebP, BMP, TIFF, PPM), raw pixels by a uint8 bytes value
whose length is height x width x channels of the shape features beside it, under the key
conventions of the library's image records (TensorFlow's `image/height`, ..., or the tutorials'
`height`, `width`, `depth`).

Strategy: a browser shows PNG, JPEG, GIF, WebP and BMP itself, so those bytes become a data URI as
they are, with no decode. Raw pixels need encoding: Pillow is imported only then, the pixels
shrunk to a thumbnail and written as PNG; without Pillow the value is described instead. A length
is checked against the shape before any array is made from it.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from typing import Any

# Feature keys of image records (TensorFlow's conventions; _images/records.py reads them).
HEIGHT = "image/height"
WIDTH = "image/width"
CHANNELS = "image/channels"  # as TF slim's build_imagenet_data writes it
DTYPE = "image/dtype"  # the numpy dtype name of raw pixels; uint8 when absent
# Where a raw image's shape and dtype are found, the first key a record has winning: the TF-models
# keys, then those of TF tutorials that write image.tobytes() (height, width, depth).
HEIGHT_KEYS = (HEIGHT, "height")
WIDTH_KEYS = (WIDTH, "width")
CHANNELS_KEYS = (CHANNELS, "image/depth", "channels", "depth")
DTYPE_KEYS = (DTYPE, "dtype")

# The magic bytes of encoded image formats, the one home of them: (offset, bytes) pairs that
# must all match, and the format they name. BMP's two letters are weak; its DIB header size says more.
SIGNATURES: tuple[tuple[tuple[tuple[int, bytes], ...], str], ...] = (
    (((0, b"\x89PNG\r\n\x1a\n"),), "png"),
    (((0, b"\xff\xd8\xff"),), "jpeg"),
    (((0, b"GIF87a"),), "gif"),
    (((0, b"GIF89a"),), "gif"),
    (((0, b"RIFF"), (8, b"WEBP")), "webp"),
    (((0, b"BM"),), "bmp"),
    (((0, b"II*\x00"),), "tiff"),
    (((0, b"MM\x00*"),), "tiff"),
)
BMP_HEADER_SIZES = (12, 40, 52, 56, 64, 108, 124)  # the DIB header sizes of BMP versions
BROWSER_FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
                   "bmp": "image/bmp"}  # fmt: skip
THUMBNAIL_SIZE = 128  # pixels, the longest side of a raw image's thumbnail
_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def sniff_image_format(source: bytes) -> str | None:
    """The format of encoded image bytes from their first bytes ("png", "jpeg", "gif", "bmp",
    "webp", "tiff", "ppm"), or None when they start like none of them."""
    head = bytes(source[:16])
    bmp_header = int.from_bytes(head[14:16], "little") if len(head) >= 16 else 0
    for parts, name in SIGNATURES:
        if all(head[at : at + len(magic)] == magic for at, magic in parts):
            return name if name != "bmp" or bmp_header in BMP_HEADER_SIZES else None
    if len(head) >= 3 and head[0:1] == b"P" and head[1:2] in b"123456" and head[2:3].isspace():
        return "ppm"
    return None


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(bytes(data)).decode('ascii')}"


def encoded_image_uri(data: bytes) -> str | None:
    """A data URI of `data` when it is an image a browser shows (by its magic bytes), else None."""
    mime = BROWSER_FORMATS.get(sniff_image_format(data) or "")
    return data_uri(data, mime) if mime else None


def _first_number(features: Mapping[str, Any], keys: tuple[str, ...]) -> int:
    for key in keys:
        values = features.get(key)
        if values is not None and not isinstance(values, list) and getattr(values, "size", 0) >= 1:
            return int(values.flat[0])
    return 0


def _first_text(features: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        values = features.get(key)
        if isinstance(values, list) and values and isinstance(values[0], (bytes, bytearray)):
            return bytes(values[0]).decode("utf-8", "replace")
    return None


def raw_shape(features: Mapping[str, Any], size: int) -> tuple[int, int, int] | None:
    """(height, width, channels) of a raw uint8 image of `size` bytes, from the shape features
    beside it; None unless they give exactly `size` bytes (channels inferred when absent)."""
    if _first_text(features, DTYPE_KEYS) not in (None, "uint8"):
        return None
    height, width = _first_number(features, HEIGHT_KEYS), _first_number(features, WIDTH_KEYS)
    channels = _first_number(features, CHANNELS_KEYS)
    if height <= 0 or width <= 0:
        return None
    if channels <= 0 and size % (height * width) == 0:
        channels = size // (height * width)
    if channels in _MODES and height * width * channels == size:
        return height, width, channels
    return None


def raw_image_uri(data: bytes, shape: tuple[int, int, int]) -> str | None:
    """A PNG thumbnail of raw pixels as a data URI (their length checked by raw_shape); None
    without Pillow."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow is installed where the tests run
        return None
    import numpy as np

    height, width, channels = shape
    pixels = np.frombuffer(bytes(data), np.uint8).reshape(height, width, channels)
    image = Image.fromarray(pixels[:, :, 0] if channels == 1 else pixels, _MODES[channels])
    image.thumbnail((THUMBNAIL_SIZE, THUMBNAIL_SIZE))
    out = io.BytesIO()
    image.save(out, "PNG")
    return data_uri(out.getvalue(), "image/png")
