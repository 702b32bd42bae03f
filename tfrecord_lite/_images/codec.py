"""Pillow's part in image datasets: encoded image bytes opened and fully decoded (so a broken
file or record is an ImageDecodeError naming it), re-encoded when a pack asks for another size or
format, and turned into HWC arrays; raw pixel bytes (`np.asarray(image).tobytes()`) made arrays
after their length is checked against their shape (an image's format is told from its first bytes by
_html/images.py); arrays resized and padded to one size.

Strategy: Pillow is imported inside the functions that use it (so importing the image modules
costs nothing extra), and each image is decoded whole before anything is taken from it: its
header alone does not prove that its pixels decode. Pillow's decompression-bomb guard stays on.
Raw pixels are never copied before height x width x channels x itemsize is proven to be their
byte count. Format names are stored as Pillow's, lower case, with jpg / tif spelt jpeg / tiff;
"raw" names pixel bytes.
When the optional `simplejpeg` is installed (the `jpeg` extra), a JPEG decoded to RGB goes
through it instead: libjpeg-turbo straight into a numpy array, with Pillow's settings (accurate
integer DCT, fancy upsampling), so the pixels are Pillow's, without a PIL image in between.
simplejpeg is asked to be strict (a warning of libjpeg's is an error); anything it refuses (a
CMYK JPEG, a damaged file) and any image past Pillow's decompression-bomb limit goes to Pillow,
which decodes it or names the problem as before. A caller that copies the pixels at once (as
ImageTransform does into its tensor) may decode into a per-thread scratch buffer instead of a new
array: a fresh array of an image's size is a fresh mapping of memory, whose page faults cost
about a tenth of the decode.
"""

from __future__ import annotations

import io
import re
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from tfrecord_lite._errors import TFRecordError

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image as PILImage

# Pillow's name for a format -> the spelling stored in image/format and used for file extensions.
FORMAT_NAMES = {"jpeg": "jpeg", "jpg": "jpeg", "png": "png", "webp": "webp", "bmp": "bmp", "gif": "gif",
                "tiff": "tiff", "tif": "tiff", "ppm": "ppm", "raw": "raw"}  # fmt: skip
RAW = "raw"  # the format of pixel bytes: np.asarray(image).tobytes(), HWC, little-endian
# The file name extensions of each format, the first one written by unpacking.
EXTENSIONS = {"jpeg": (".jpg", ".jpeg"), "png": (".png",), "gif": (".gif",), "bmp": (".bmp",), "webp": (".webp",),
              "tiff": (".tif", ".tiff"), "ppm": (".ppm", ".pgm", ".pbm", ".pnm")}  # fmt: skip
# Pillow modes of 1 to 4 uint8 channels, by channel count.
_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


class ImageDecodeError(TFRecordError, ValueError):
    """An image file (or the image bytes in a record) cannot be decoded; `.path` names it."""


def _pil() -> Any:
    """The PIL.Image module, or an ImportError that says how to install it."""
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is installed in the dev venv
        raise ImportError("tfrecord_lite.images needs Pillow: pip install 'tfrlite[images]'") from exc
    return Image


_JPEG_MAGIC = b"\xff\xd8\xff"
_simplejpeg: Any = None  # the module once imported; False when it is not installed
_scratch = threading.local()  # .buffer: the flat uint8 array fast_jpeg(scratch=True) decodes into


def _jpeg_decoder() -> Any:
    """The simplejpeg module, or None when it is not installed (imported once, on first use)."""
    global _simplejpeg
    if _simplejpeg is None:
        try:
            import simplejpeg
        except ImportError:
            simplejpeg = False
        _simplejpeg = simplejpeg
    return _simplejpeg or None


def fast_jpeg(data: bytes, *, scratch: bool = False) -> np.ndarray | None:
    """A JPEG's pixels as an HWC uint8 RGB array decoded by simplejpeg, equal to Pillow's decode
    converted to RGB; None when simplejpeg is not installed, `data` is no JPEG, or simplejpeg
    cannot decode it exactly as Pillow would (then decode with Pillow). With `scratch` the array
    is a view of this thread's scratch buffer, overwritten by its next scratch decode."""
    decoder = _jpeg_decoder()
    if decoder is None or not data.startswith(_JPEG_MAGIC):
        return None
    try:
        height, width, colorspace, _ = decoder.decode_jpeg_header(data)
        if colorspace not in ("Gray", "YCbCr", "RGB") or height * width > (_pil().MAX_IMAGE_PIXELS or 1 << 62):
            return None  # CMYK / YCCK convert otherwise in Pillow; large images get Pillow's bomb guard
        buffer = _scratch_buffer(height * width * 3) if scratch else None
        pixels: np.ndarray = decoder.decode_jpeg(
            data, colorspace="RGB", fastdct=False, fastupsample=False, buffer=buffer
        )
    except ValueError:  # damaged or unusual data: Pillow decodes it or says what is wrong
        return None
    return pixels


def _scratch_buffer(size: int) -> np.ndarray:
    """This thread's scratch buffer, grown to at least `size` bytes."""
    buffer: np.ndarray | None = getattr(_scratch, "buffer", None)
    if buffer is None or buffer.size < size:
        buffer = _scratch.buffer = np.empty(size, np.uint8)
    return buffer


def open_image(data: bytes, path: str | None) -> PILImage.Image:
    """Open and fully decode `data` (Pillow's decompression-bomb guard stays active)."""
    Image = _pil()
    try:
        im: PILImage.Image = Image.open(io.BytesIO(data))
        im.load()  # the header alone does not prove the pixels decode (truncated files)
    except Exception as exc:  # Pillow plugins raise many types on malformed data
        kind = type(exc).__name__
        # Pillow names what it read, here an in-memory file: the error names the image's file instead
        said = _IN_MEMORY.sub("(the image bytes)" if path is None else repr(path), str(exc))
        raise ImageDecodeError(f"cannot decode image: {kind}: {said}", path=path) from exc
    return im


_IN_MEMORY = re.compile(r"<_io\.BytesIO object at 0x[0-9a-fA-F]+>")


def raw_pixels(data: bytes, shape: tuple[int, int, int], dtype: str, *, key: str, path: str | None) -> np.ndarray:
    """Raw pixel bytes as an HWC array of `dtype` (little-endian, as x86 and TensorFlow's
    decode_raw write them). `shape` is (height, width, channels), channels 0 when the record does
    not say: then 1 to 4 channels are inferred from the byte count. The byte count is checked
    against the shape before any array is made; an error names `key` and `path`."""
    height, width, channels = shape
    try:
        kind = np.dtype(dtype).newbyteorder("<")
    except (TypeError, ValueError):
        raise ImageDecodeError(f"raw pixels under {key!r}: unknown dtype {dtype!r}", path=path) from None
    if kind.kind not in "biuf":
        raise ImageDecodeError(f"raw pixels under {key!r}: dtype {dtype!r} is not a number type", path=path)
    if height <= 0 or width <= 0 or channels < 0:
        raise ImageDecodeError(f"raw pixels under {key!r}: bad shape {height}x{width}x{channels}", path=path)
    if channels == 0:
        per_pixel, rest = divmod(len(data), height * width * kind.itemsize)
        channels = per_pixel if rest == 0 and per_pixel in _MODES else 0
        if channels == 0:
            raise ImageDecodeError(
                f"raw pixels under {key!r}: {len(data)} bytes are not {height} x {width} pixels of 1 to 4 "
                f"{kind.name} channels; the record has no channels key (image/channels, depth, ...)",
                path=path,
            )
    expected = height * width * channels * kind.itemsize
    if expected != len(data):
        raise ImageDecodeError(
            f"raw pixels under {key!r}: height {height} x width {width} x channels {channels} x "
            f"{kind.itemsize} bytes ({kind.name}) = {expected} bytes expected, found {len(data)}",
            path=path,
        )
    pixels = np.frombuffer(data, dtype=kind).reshape(height, width, channels)
    return pixels.astype(kind.newbyteorder("="))  # a writable copy in native order


def array_image(pixels: np.ndarray, path: str | None = None) -> PILImage.Image:
    """An HWC uint8 array of 1 to 4 channels as a Pillow image (L, LA, RGB, RGBA)."""
    mode = _MODES.get(pixels.shape[2]) if pixels.dtype == np.uint8 else None
    if mode is None:
        raise ImageDecodeError(
            f"raw pixels of {pixels.shape[2]} {pixels.dtype} channels are no Pillow image (uint8, 1 to 4 channels "
            "are): use mode=None to take the array as it is",
            path=path,
        )
    return _pil().fromarray(pixels[:, :, 0] if mode == "L" else pixels, mode=mode)  # type: ignore[no-any-return]


def pixels_in_mode(pixels: np.ndarray, mode: str | None, path: str | None = None) -> np.ndarray:
    """Raw pixels converted to a Pillow `mode` as decode_image_bytes does; None keeps them as they are."""
    if mode is None or _MODES.get(pixels.shape[2]) == mode:
        return pixels
    return image_array(array_image(pixels, path), mode)


def resized(pixels: np.ndarray, size: tuple[int, int], path: str | None = None) -> np.ndarray:
    """An HWC uint8 array scaled to `size` = (height, width) by Pillow, bilinear."""
    if pixels.shape[:2] == size:
        return pixels
    image = array_image(pixels, path).resize((size[1], size[0]), _pil().Resampling.BILINEAR)
    out = np.array(image, dtype=np.uint8)
    return out[:, :, None] if out.ndim == 2 else out


def padded(pixels: np.ndarray, size: tuple[int, int], fill: float, path: str | None = None) -> np.ndarray:
    """An HWC array placed at the top left of a `size` = (height, width) one filled with `fill`."""
    height, width = pixels.shape[:2]
    if height > size[0] or width > size[1]:
        raise ImageDecodeError(
            f"an image of {height}x{width} pixels does not fit pad_to={size} (height, width): "
            "pad to a larger size, or resize= instead",
            path=path,
        )
    out = np.full((size[0], size[1], pixels.shape[2]), fill, dtype=pixels.dtype)
    out[:height, :width] = pixels
    return out


def pixel_file(pixels: np.ndarray) -> tuple[bytes, str]:
    """(file bytes, extension) that hold raw pixels: a PNG for uint8 images, else a .npy file."""
    buf = io.BytesIO()
    if pixels.dtype == np.uint8 and pixels.shape[2] in _MODES:
        array_image(pixels).save(buf, format="PNG")
        return buf.getvalue(), ".png"
    np.save(buf, pixels, allow_pickle=False)
    return buf.getvalue(), ".npy"


def _format_name(pillow_format: str | None) -> str:
    name = (pillow_format or "").lower()
    return FORMAT_NAMES.get(name, name or "unknown")


def stored_image(
    data: bytes,
    path: str,
    size: tuple[int, int] | None,
    fmt: str | None,
    quality: int,
) -> tuple[bytes, str, int, int, int]:
    """(bytes to store, format, height, width, channels): the original bytes unless a resize or a
    format asks otherwise; channels is 0 except for raw pixels, whose count it gives."""
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
            return data, src_fmt, height, width, 0
        out = im.resize(target, _pil().Resampling.BICUBIC) if target != (width, height) else im.copy()
    if out_fmt == RAW:
        own = out.mode if out.mode in _MODES.values() else "RGBA" if "A" in out.getbands() else "RGB"
        pixels = image_array(out, own)
        return pixels.tobytes(), RAW, target[1], target[0], pixels.shape[2]
    if out_fmt == "jpeg" and out.mode not in ("RGB", "L", "CMYK"):
        out = out.convert("RGB")
    buf = io.BytesIO()
    options: dict[str, Any] = {"quality": quality} if out_fmt in ("jpeg", "webp") else {}
    out.save(buf, format=out_fmt.upper(), **options)
    return buf.getvalue(), out_fmt, target[1], target[0], 0


def image_array(im: PILImage.Image, mode: str | None) -> np.ndarray:
    """The pixels of `im` as an HWC uint8 array, converted to `mode` (None: its own mode, or RGB /
    RGBA for one an array cannot show as it is, such as a palette)."""
    if mode is not None and im.mode != mode:
        im = im.convert(mode)
    elif im.mode not in ("L", "RGB", "RGBA", "LA", "CMYK"):
        im = im.convert("RGBA" if "A" in im.getbands() else "RGB")
    arr = np.array(im, dtype=np.uint8)  # a writable copy (np.asarray would be read-only)
    return arr[:, :, None] if arr.ndim == 2 else arr


def decode_image_bytes(source: bytes, *, mode: str | None = "RGB", name: str | None = None) -> np.ndarray:
    """Decode encoded image bytes (JPEG, PNG, ...) into an HWC uint8 array.

    `mode` is a Pillow mode to convert to ('RGB' -> 3 channels, 'L' -> 1, 'RGBA'
    -> 4), or None to keep the image's own (palette images become RGB/RGBA).
    The result is always 3-D. Raises ImageDecodeError naming the image by `name` (e.g. its
    file name) on bad data.
    """
    data = bytes(source)
    fast = fast_jpeg(data) if mode == "RGB" else None
    if fast is not None:
        return fast
    with open_image(data, name) as im:
        return image_array(im, mode)
