"""Image records: one Example per image with TensorFlow's keys (image/encoded, image/format,
image/height, image/width, image/class/label, image/class/text, image/filename), as the TF
object-detection and slim datasets lay them out, and their fields read back as an ImageRecord;
or with the keys a caller names (image_key=, label_key=), as TF tutorials write them ("image_raw",
"label"). The image is encoded bytes (JPEG, PNG, ...) or raw pixels, whose shape is read from
image/height, image/width, image/channels (or height, width, depth, ...) and dtype from image/dtype.

Strategy: a record holds the image's bytes and what describes them; parsing takes each field's
first value and fills what is absent with 0 (size), -1 (label) or empty text, so records written
by other tools read too: only the image bytes are required, and their absence is an error that
lists the keys the record has. The bytes are raw pixels when image/format says "raw", or when the
shape keys give exactly their byte count, or when the record has a shape but no image/format and
the bytes start like no image format; else they are an encoded image. Pixels are decoded on
demand (codec.py), never while records are read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.decode import decode_example
from tfrecord_lite._example.encode import encode_example
from tfrecord_lite._html.images import (
    CHANNELS,
    CHANNELS_KEYS,
    DTYPE,
    DTYPE_KEYS,
    HEIGHT,
    HEIGHT_KEYS,
    WIDTH,
    WIDTH_KEYS,
    sniff_image_format,
)
from tfrecord_lite._images.codec import RAW, decode_image_bytes, pixels_in_mode, raw_pixels
from tfrecord_lite._records.reader import iter_records
from tfrecord_lite._repr import shown_value
from tfrecord_lite._storage.sources import Sources
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

PathLike = Union[str, "os.PathLike[str]"]

# Feature keys (TensorFlow's conventions, as in the TF object-detection / slim datasets).
ENCODED = "image/encoded"
FORMAT = "image/format"
LABEL = "image/class/label"
TEXT = "image/class/text"
FILENAME = "image/filename"
# The shape keys (image/height, ..., or height, width, depth) are _html/images.py's.


@dataclass(frozen=True)
class ImageRecord:
    """The fields of one image record; `label` is -1 and text/filename empty when absent.

    `format` is "raw" for pixel bytes (then `channels` and `dtype` describe them; channels 0: not
    recorded), else the record's image/format or, without it, the format its bytes start like.
    `key` is the feature the image was read from."""

    encoded: bytes
    format: str
    height: int
    width: int
    label: int
    text: str
    filename: str
    channels: int = 0
    dtype: str = "uint8"
    key: str = ENCODED

    def __repr__(self) -> str:  # the image bytes by their length, never themselves
        fields = ", ".join(
            f"{name}={shown_value(getattr(self, name))}"
            for name in (
                "encoded",
                "format",
                "height",
                "width",
                "label",
                "text",
                "filename",
                "channels",
                "dtype",
                "key",
            )
        )
        return f"ImageRecord({fields}, key={self.key!r})"

    def decode(self, mode: str | None = "RGB") -> np.ndarray:
        """The pixels as an HWC array (see decode_image_bytes): uint8 for encoded images; raw pixels
        keep their dtype, and are converted to `mode` only when they are uint8 (None: as stored)."""
        path = self.filename or None
        if self.format != RAW:
            return decode_image_bytes(self.encoded, mode=mode, name=path)
        shape = (self.height, self.width, self.channels)
        return pixels_in_mode(raw_pixels(self.encoded, shape, self.dtype, key=self.key, path=path), mode, path)


def image_example(
    encoded: bytes,
    fmt: str,
    height: int,
    width: int,
    label: int,
    text: str,
    filename: str,
    channels: int = 0,
    *,
    image_key: str = ENCODED,
    label_key: str = LABEL,
    text_key: str = TEXT,
) -> bytes:
    """One serialized Example with TensorFlow's image keys (image/channels and image/dtype too for
    raw uint8 pixels); the image, the class id and the class name under the keys given."""
    fields: dict[str, Any] = {
        image_key: [encoded],
        FORMAT: [fmt.encode()],
        HEIGHT: [height],
        WIDTH: [width],
        label_key: [label],
        text_key: [text.encode("utf-8")],
        FILENAME: [filename.encode("utf-8")],
    }
    if fmt == RAW:
        fields[CHANNELS], fields[DTYPE] = [channels], [b"uint8"]
    return encode_example(fields)


def _first(values: Any, default: Any) -> Any:
    """The first value of a feature: of a list as decoded without a spec, or the scalar a
    FixedLenFeature([]) gives."""
    if isinstance(values, (np.generic, int, float, bytes, bytearray)):
        return values
    if values is None or len(values) == 0:
        return default
    return values[0]


def record_fields(record: bytes | Mapping[str, Any]) -> Mapping[str, Any]:
    """A record's features: serialized Example bytes decoded, a decode_example() dict as it is."""
    return decode_example(record) if isinstance(record, (bytes, bytearray, memoryview)) else record


def missing_key(fields: Mapping[str, Any], key: str, what: str, option: str) -> FeatureError:
    """The error for a record without `key`: what was looked for, the keys it has, how to name another."""
    has = ", ".join(repr(k) for k in sorted(fields)) or "none"
    return FeatureError(key, f"no {what} in this record (its keys: {has}); name the right key with {option}")


def _text(fields: Mapping[str, Any], key: str) -> str:
    value = _first(fields.get(key), b"")
    return bytes(value).decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)


def _number(fields: Mapping[str, Any], keys: Sequence[str], default: int) -> int:
    for key in keys:
        value = _first(fields.get(key), None)
        if value is not None:
            return int(value) if not isinstance(value, (bytes, bytearray)) else default
    return default


def _image_format(fields: Mapping[str, Any], data: bytes, shape: tuple[int, int, int], itemsize: int) -> str:
    """The format of the bytes: "raw" for pixels (see the module's docstring), else the stated or sniffed one."""
    stated = _text(fields, FORMAT).lower()
    height, width, channels = shape
    if stated == RAW or (channels > 0 and height * width * channels * itemsize == len(data) > 0):
        return RAW
    sniffed = sniff_image_format(data)
    if sniffed is None and not stated and height > 0 and width > 0:
        return RAW
    return stated or sniffed or ""


def parse_image_record(
    record: bytes | Mapping[str, Any], *, image_key: str = ENCODED, label_key: str = LABEL, text_key: str = TEXT
) -> ImageRecord:
    """The image fields of one record (serialized Example bytes, or a dict from decode_example):
    the image under `image_key`, the class id under `label_key`, the class name under `text_key`."""
    fields = record_fields(record)
    encoded = _first(fields.get(image_key), None)
    if not isinstance(encoded, (bytes, bytearray)):
        raise missing_key(fields, image_key, "image bytes", "image_key= (--image-key)")
    shape = (_number(fields, HEIGHT_KEYS, 0), _number(fields, WIDTH_KEYS, 0), _number(fields, CHANNELS_KEYS, 0))
    dtype = next((_text(fields, key) for key in DTYPE_KEYS if _first(fields.get(key), None) is not None), "uint8")
    try:
        itemsize = np.dtype(dtype).itemsize
    except (TypeError, ValueError):
        itemsize = 0  # raw_pixels names the bad dtype when the pixels are decoded
    label = _first(fields.get(label_key), None)
    text = _text(fields, text_key) or (_text(fields, label_key) if isinstance(label, (bytes, bytearray)) else "")
    return ImageRecord(
        encoded=bytes(encoded),
        format=_image_format(fields, bytes(encoded), shape, itemsize),
        height=shape[0],
        width=shape[1],
        label=_number(fields, (label_key,), -1),
        text=text,
        filename=_text(fields, FILENAME),
        channels=shape[2],
        dtype=dtype,
        key=image_key,
    )


def record_label(record: bytes | Mapping[str, Any], label_key: str = LABEL) -> int:
    """The integer class id of a record under `label_key`, or an error listing the keys it has."""
    fields = record_fields(record)
    value = _first(fields.get(label_key), None)
    if not isinstance(value, (int, np.integer)):
        raise missing_key(fields, label_key, "integer label", "label_key= (--label-key)")
    return int(value)


def iter_image_records(
    source: Sources,
    *,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
    image_key: str = ENCODED,
    label_key: str = LABEL,
) -> Iterator[ImageRecord]:
    """ImageRecord for every record of `source` (a file, a list of them, a folder, a glob, a prefix,
    URLs), file after file; the image under `image_key`, the class id under `label_key`. The reader
    options are iter_records' (docs/conventions.md): with on_error="skip" a damaged record is passed
    over (and max_skipped counts over all the files); a record without an image is an error either
    way, naming its file and its number there."""
    records = iter_records(
        source,
        compression=normalize_compression(compression, allow_auto=True),
        verify=verify,
        on_error=on_error,
        max_skipped=max_skipped,
        storage_options=storage_options,
        max_record_bytes=max_record_bytes,
    )
    path, number = None, 0
    for record in records:
        if records.path != path:
            path, number = records.path, 0
        try:
            yield parse_image_record(record, image_key=image_key, label_key=label_key)
        except FeatureError as err:
            raise FeatureError(err.key, f"{err.detail} (record {number} of {path})") from None
        number += 1


def decode_image(
    record: bytes | Mapping[str, Any], *, mode: str | None = "RGB", image_key: str = ENCODED
) -> np.ndarray:
    """The image of one record (serialized Example or decoded dict) under `image_key` as an HWC
    array: uint8 for encoded images and raw uint8 pixels (converted to `mode`), raw pixels of
    another dtype as stored."""
    return parse_image_record(record, image_key=image_key).decode(mode)
