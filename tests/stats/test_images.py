# Image formats and sizes from headers only (tfrecord_lite/_stats/images.py), against Pillow, which
# made the images and decodes them: baseline and progressive JPEG, JPEG with EXIF before its frame
# header, PNG, GIF, WebP (lossy, lossless, extended), BMP; cut or forged headers give no size.
from __future__ import annotations

import io

import numpy as np
import pytest

from tfrecord_lite._stats.images import FORMATS, image_size, sniff_formats

Image = pytest.importorskip("PIL.Image")


def _encode(fmt: str, size: tuple[int, int], **options) -> bytes:
    pixels = np.random.default_rng(sum(size)).integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format=fmt, **options)
    return out.getvalue()


def _sniffed(values: list[bytes]) -> list[str | None]:
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum([len(v) for v in values], out=offsets[1:])
    codes = sniff_formats(np.frombuffer(b"".join(values), dtype=np.uint8), offsets)
    return [FORMATS[c - 1] if c else None for c in codes.tolist()]


def _exif() -> bytes:
    exif = Image.Exif()
    exif[0x010F] = "camera maker " * 20  # a long APP1 segment before the frame header
    return exif.tobytes()


CASES = [
    ("jpeg", "JPEG", {}),
    ("jpeg", "JPEG", {"progressive": True}),
    ("jpeg", "JPEG", {"exif": _exif()}),
    ("png", "PNG", {}),
    ("gif", "GIF", {}),
    ("webp", "WEBP", {"lossless": False}),
    ("webp", "WEBP", {"lossless": True}),
    ("webp", "WEBP", {"exif": _exif()}),
    ("bmp", "BMP", {}),
]


@pytest.mark.parametrize(("kind", "fmt", "options"), CASES)
@pytest.mark.parametrize("size", [(1, 1), (37, 5), (300, 211)])
def test_sizes_match_pillow(kind, fmt, options, size):
    data = _encode(fmt, size, **options)
    assert Image.open(io.BytesIO(data)).size == size
    assert _sniffed([data]) == [kind]
    assert image_size(kind, data) == size


def test_a_batch_of_mixed_values():
    values = [_encode("PNG", (3, 4)), b"", b"\xff", b"GIF8", b"plain text", _encode("JPEG", (9, 2)), b"BM"]
    assert _sniffed(values) == ["png", None, None, None, None, "jpeg", "bmp"]


@pytest.mark.parametrize(("kind", "fmt"), [(k, f) for k, f, o in CASES if not o])
def test_cut_headers_give_no_size(kind, fmt):
    data = _encode(fmt, (20, 10))
    for cut in (2, 5) if kind == "gif" else (2, 10, 20):  # GIF's size ends at byte 10
        assert image_size(kind, data[:cut]) is None
    assert image_size("png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 4 + b"XXXX" + b"\x00" * 8) is None
    assert image_size("bmp", b"BM" + b"\x00" * 12 + (7).to_bytes(4, "little") + b"\x00" * 8) is None
