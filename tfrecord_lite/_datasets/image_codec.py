"""Pillow's part in image datasets: encoded image bytes opened and fully decoded (so a broken
file or record is an ImageDecodeError naming it), re-encoded when a pack asks for another size or
format, and turned into HWC uint8 arrays.

Strategy: Pillow is imported inside the functions that use it (so importing the image modules
costs nothing extra), and each image is decoded whole before anything is taken from it: its
header alone does not prove that its pixels decode. Pillow's decompression-bomb guard stays on.
Format names are stored as Pillow's, lower case, with jpg / tif spelt jpeg / tiff.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import numpy as np

from tfrecord_lite._errors import TFRecordError

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image as PILImage

# Pillow's name for a format -> the spelling stored in image/format and used for file extensions.
FORMAT_NAMES = {"jpeg": "jpeg", "jpg": "jpeg", "png": "png", "webp": "webp", "bmp": "bmp", "gif": "gif",
                "tiff": "tiff", "tif": "tiff", "ppm": "ppm"}  # fmt: skip


class ImageDecodeError(TFRecordError, ValueError):
    """An image file (or the image bytes in a record) cannot be decoded; `.path` names it."""


def _pil() -> Any:
    """The PIL.Image module, or an ImportError that says how to install it."""
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is installed in the dev venv
        raise ImportError("tfrecord_lite.images needs Pillow: pip install 'tfrlite[images]'") from exc
    return Image


def open_image(data: bytes, path: str | None) -> PILImage.Image:
    """Open and fully decode `data` (Pillow's decompression-bomb guard stays active)."""
    Image = _pil()
    try:
        im: PILImage.Image = Image.open(io.BytesIO(data))
        im.load()  # the header alone does not prove the pixels decode (truncated files)
    except Exception as exc:  # Pillow plugins raise many types on malformed data
        kind = type(exc).__name__
        raise ImageDecodeError(f"cannot decode image: {kind}: {exc}", path=path) from exc
    return im


def _format_name(pillow_format: str | None) -> str:
    name = (pillow_format or "").lower()
    return FORMAT_NAMES.get(name, name or "unknown")


def stored_image(
    data: bytes,
    path: str,
    size: tuple[int, int] | None,
    fmt: str | None,
    quality: int,
) -> tuple[bytes, str, int, int]:
    """(bytes to store, format, height, width): the original bytes unless a resize/format asks otherwise."""
    with open_image(data, path) as im:
        src_fmt = _format_name(im.format)
        width, height = im.size
        target = (width, height)
        if size is not None:
            if size[1] == 0:  # longest side, downscale only
                scale = size[0] / max(width, height)
                if scale < 1:
                    target = (max(1, round(width * scale)), max(1, round(height * scale)))
            else:
                target = size
        out_fmt = src_fmt if fmt is None else fmt
        if target == (width, height) and out_fmt == src_fmt:
            return data, src_fmt, height, width
        out = im.resize(target, _pil().Resampling.BICUBIC) if target != (width, height) else im.copy()
    if out_fmt == "jpeg" and out.mode not in ("RGB", "L", "CMYK"):
        out = out.convert("RGB")
    buf = io.BytesIO()
    options: dict[str, Any] = {"quality": quality} if out_fmt in ("jpeg", "webp") else {}
    out.save(buf, format=out_fmt.upper(), **options)
    return buf.getvalue(), out_fmt, target[1], target[0]


def image_array(im: PILImage.Image, mode: str | None) -> np.ndarray:
    """The pixels of `im` as an HWC uint8 array, converted to `mode` (None: its own mode, or RGB /
    RGBA for one an array cannot show as it is, such as a palette)."""
    if mode is not None and im.mode != mode:
        im = im.convert(mode)
    elif im.mode not in ("L", "RGB", "RGBA", "LA", "CMYK"):
        im = im.convert("RGBA" if "A" in im.getbands() else "RGB")
    arr = np.array(im, dtype=np.uint8)  # a writable copy (np.asarray would be read-only)
    return arr[:, :, None] if arr.ndim == 2 else arr


def decode_image_bytes(encoded: bytes, *, mode: str | None = "RGB", path: str | None = None) -> np.ndarray:
    """Decode encoded image bytes (JPEG, PNG, ...) into an HWC uint8 array.

    `mode` is a Pillow mode to convert to ('RGB' -> 3 channels, 'L' -> 1, 'RGBA'
    -> 4), or None to keep the image's own (palette images become RGB/RGBA).
    The result is always 3-D. Raises ImageDecodeError naming `path` on bad data.
    """
    with open_image(bytes(encoded), path) as im:
        return image_array(im, mode)
