"""Image records: one Example per image with TensorFlow's keys (image/encoded, image/format,
image/height, image/width, image/class/label, image/class/text, image/filename), as the TF
object-detection and slim datasets lay them out, and their fields read back as an ImageRecord.

Strategy: a record holds the image's encoded bytes and what describes them; parsing takes each
field's first value and fills what is absent with 0 (size), -1 (label) or empty text, so records
written by other tools read too: only the encoded bytes are required. Pixels are decoded on
demand (image_codec), never while records are read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from tfrecord_lite._datasets.image_codec import decode_image_bytes
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.decode import decode_example
from tfrecord_lite._example.encode import encode_example
from tfrecord_lite._records.reader import iter_records
from tfrecord_lite._storage.locations import StorageOptions

PathLike = Union[str, "os.PathLike[str]"]

# Feature keys (TensorFlow's conventions, as in the TF object-detection / slim datasets).
ENCODED = "image/encoded"
FORMAT = "image/format"
HEIGHT = "image/height"
WIDTH = "image/width"
LABEL = "image/class/label"
TEXT = "image/class/text"
FILENAME = "image/filename"


@dataclass(frozen=True)
class ImageRecord:
    """The fields of one image record; `label` is -1 and text/filename empty when absent."""

    encoded: bytes
    format: str
    height: int
    width: int
    label: int
    text: str
    filename: str

    def decode(self, mode: str | None = "RGB") -> np.ndarray:
        """The pixels as an HWC uint8 array (see decode_image_bytes)."""
        return decode_image_bytes(self.encoded, mode=mode, path=self.filename or None)


def image_example(encoded: bytes, fmt: str, height: int, width: int, label: int, text: str, filename: str) -> bytes:
    """One serialized Example with TensorFlow's image keys."""
    return encode_example(
        {
            ENCODED: [encoded],
            FORMAT: [fmt.encode()],
            HEIGHT: [height],
            WIDTH: [width],
            LABEL: [label],
            TEXT: [text.encode("utf-8")],
            FILENAME: [filename.encode("utf-8")],
        }
    )


def _first(values: Any, default: Any) -> Any:
    if values is None or len(values) == 0:
        return default
    return values[0]


def parse_image_record(record: bytes | Mapping[str, Any]) -> ImageRecord:
    """The image fields of one record (serialized Example bytes, or a dict from decode_example)."""
    ex = decode_example(record) if isinstance(record, (bytes, bytearray, memoryview)) else record
    encoded = _first(ex.get(ENCODED), None)
    if not isinstance(encoded, (bytes, bytearray)):
        raise FeatureError(ENCODED, "missing or not bytes: this is not an image record")

    def text(key: str) -> str:
        value = _first(ex.get(key), b"")
        return bytes(value).decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)

    def number(key: str, default: int) -> int:
        value = _first(ex.get(key), default)
        return int(value) if not isinstance(value, (bytes, bytearray)) else default

    return ImageRecord(
        encoded=bytes(encoded),
        format=text(FORMAT),
        height=number(HEIGHT, 0),
        width=number(WIDTH, 0),
        label=number(LABEL, -1),
        text=text(TEXT),
        filename=text(FILENAME),
    )


def iter_image_records(
    paths: PathLike | Sequence[PathLike], *, compression: str = "auto", storage_options: StorageOptions = None
) -> Iterator[ImageRecord]:
    """ImageRecord for every record of one file or several (in the given order); URLs with
    `storage_options` for fsspec."""

    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        for i, record in enumerate(iter_records(path, compression=compression, storage_options=storage_options)):
            try:
                yield parse_image_record(record)
            except FeatureError as err:
                raise FeatureError(err.key, f"{err.detail} (record {i} of {os.fspath(path)})") from None


def decode_image(record: bytes | Mapping[str, Any], *, mode: str | None = "RGB") -> np.ndarray:
    """The image of one record (serialized Example or decoded dict) as an HWC uint8 array."""
    return parse_image_record(record).decode(mode)
