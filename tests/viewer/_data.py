"""The datasets the viewer's tests show: labelled records holding small images in every format a
browser shows, raw pixels under both key conventions, hostile keys and values, and damage."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

import tfrecord_lite as tfr

FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP")
CLASSES = ("cat", "dog", "<b>bird</b>")
HOSTILE = '"><script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'


def encoded_image(fmt: str, color: tuple[int, int, int], size: int = 12) -> bytes:
    """A `size` x `size` image in `fmt`: a gradient of `color` with a disc in its middle."""
    from PIL import Image

    ramp = np.linspace(0.35, 1.0, size)
    pixels = (np.array(color, float)[None, None, :] * ramp[:, None, None] * ramp[None, :, None]).astype(np.uint8)
    y, x = np.mgrid[:size, :size]
    pixels[(y - size / 2) ** 2 + (x - size / 2) ** 2 < (size / 4) ** 2] = 255
    out = io.BytesIO()
    Image.fromarray(pixels, "RGB").save(out, fmt)
    return out.getvalue()


def image_record(i: int, fmt: str = "PNG") -> bytes:
    label = i % len(CLASSES)
    color = (i * 37 % 256, label * 100, 200)
    return tfr.encode_example(
        {
            "image/encoded": [encoded_image(fmt, color)],
            "image/class/label": [label],
            "image/class/text": [CLASSES[label].encode()],
            "id": [i],
        }
    )


def write_images(path: Path, n: int, fmt: str = "PNG", size: int = 12) -> Path:
    """`n` labelled image records, each image encoded once in `fmt` and reused: a record's
    features are its label's, encoded once, and its id's, joined in one Features message (the
    bytes encode_example writes for them all), so a large file is written fast."""
    heads = [
        tfr.encode_example(
            {
                "image/encoded": [
                    encoded_image(fmt, ((60, 220, 90, 240)[k], (140, 90, 200, 120)[k], (240, 60, 90, 40)[k]), size)
                ],
                "image/class/label": [k],
                "image/class/text": [name.encode()],
            }
        )
        for k, name in enumerate(CLASSES)
    ]
    with tfr.TFRecordWriter(path) as w:
        for i in range(n):
            w.write(joined(heads[i % len(CLASSES)], tfr.encode_example({"id": [i]})))
    return path


def _features(example: bytes) -> bytes:
    """The Features payload of a serialized Example (field 1, its only field)."""
    assert example[0] == 0x0A
    length, shift, at = 0, 0, 1
    while True:
        byte = example[at]
        length |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return example[at : at + length]


def joined(*examples: bytes) -> bytes:
    """One Example holding the features of `examples`."""
    payload = b"".join(_features(e) for e in examples)
    n, size = len(payload), bytearray()
    while n >= 0x80:
        size.append(n & 0x7F | 0x80)
        n >>= 7
    size.append(n)
    return b"\x0a" + bytes(size) + payload


def raw_record(height: int, width: int, channels: int, *, tf_keys: bool = True) -> bytes:
    pixels = np.arange(height * width * channels, dtype=np.uint8).reshape(height, width, channels)
    keys = ("image/encoded", "image/height", "image/width", "image/channels")
    if not tf_keys:
        keys = ("image_raw", "height", "width", "depth")
    return tfr.encode_example({keys[0]: [pixels.tobytes()], keys[1]: [height], keys[2]: [width], keys[3]: [channels]})


def hostile_record() -> bytes:
    return tfr.encode_example({HOSTILE: [HOSTILE.encode()], "n" + HOSTILE: [1, 2]})


def damage(path: Path, offset: int) -> Path:
    """Flip a byte of `path` at `offset` (inside a record's data: its CRC stops matching)."""
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    return path
