"""`EventWriter`: TensorBoard events files written without TensorFlow, as tf.summary writes them.

Strategy: each event is encoded straight to the protobuf wire format, field for field in the
order TensorFlow's writer serializes them, so a scalar, histogram, image or text summary is the
same bytes tf.summary's (wall times aside): the file opens with the `brain.Event:2` file version
event; a value is its tag, a TensorProto (scalars float32 in tensor_content, histograms the
[k, 3] float64 buckets of tf.summary.histogram, images a string tensor of width, height and the
PNG, text a string scalar, audio a [1, 2] string tensor of the WAV and an empty label) and the
metadata naming its plugin. Records are framed and written by
TFRecordWriter; `flush()` hands them to the operating system, so a reader tailing the run sees
whole records. Images given as arrays are encoded as PNG with zlib (no imaging library needed),
audio clips as 16-bit PCM WAV.
"""

from __future__ import annotations

import os
import socket
import struct
import time
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from tfrecord_lite._example.encode import encode_varint
from tfrecord_lite._records.writer import TFRecordWriter

DEFAULT_BUCKETS = 30
_SOURCE_WRITER = b"tensorflow.core.util.events_writer"
_DT_FLOAT, _DT_DOUBLE, _DT_STRING = 1, 2, 7
_counter = 0


def _field(number: int, payload: bytes) -> bytes:
    return encode_varint(number << 3 | 2) + encode_varint(len(payload)) + payload


def _shape(dims: tuple[int, ...]) -> bytes:
    return b"".join(_field(2, b"\x08" + encode_varint(d) if d else b"") for d in dims)


def _tensor(dtype: int, dims: tuple[int, ...], content: bytes | None = None, strings: Sequence[bytes] = ()) -> bytes:
    body = b"\x08" + encode_varint(dtype) + _field(2, _shape(dims))
    if content is not None:
        body += _field(4, content)
    for s in strings:
        body += _field(8, s)
    return body


def _metadata(plugin: str, content: bytes = b"") -> bytes:
    return _field(1, _field(1, plugin.encode()) + (_field(2, content) if content else b""))


def _event(wall_time: float, step: int, rest: bytes) -> bytes:
    out = b"\x09" + struct.pack("<d", wall_time)
    if step:
        out += b"\x10" + encode_varint(step & 0xFFFFFFFFFFFFFFFF)
    return out + rest


def histogram_buckets(values: Any, buckets: int = DEFAULT_BUCKETS) -> np.ndarray:
    """tf.summary.histogram's [k, 3] float64 (left edge, right edge, count) of `values`."""
    data = np.asarray(values, dtype=np.float64).reshape(-1)
    if buckets <= 0 or not data.size:
        return np.zeros((max(buckets, 0), 3))
    lo, hi = float(data.min()), float(data.max())
    if hi - lo == 0:
        counts = np.zeros(buckets)
        counts[-1] = data.size
        edges = np.full(buckets, hi)
        return np.stack([edges, edges, counts], axis=1)
    width = (hi - lo) / buckets
    index = np.minimum(np.floor((data - lo) / width).astype(np.int64), buckets - 1)
    counts = np.bincount(index, minlength=buckets).astype(np.float64)
    edges = np.linspace(lo, hi, buckets + 1)
    edges[-1] = hi
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def encode_png(pixels: np.ndarray) -> bytes:
    """An 8-bit grayscale, RGB or RGBA PNG of an [h, w] or [h, w, c] uint8 array."""
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    height, width, channels = pixels.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}.get(channels)
    if color is None:
        raise ValueError(f"add_image: an image of {channels} channels; 1, 2, 3 or 4 are written")
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, -1)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes()))
        + chunk(b"IEND", b"")
    )


_AUDIO_WAV = b"\x10\x0b"  # the audio plugin's AudioPluginData: encoding WAV (11)


def encode_wav(audio: Any, sample_rate: int) -> bytes:
    """A 16-bit PCM WAV file of a [samples] or [samples, channels] clip of floats in [-1, 1], as
    TensorFlow's encode_wav makes it: each sample times 32768, rounded half away from zero and
    clipped to the int16 range."""
    data = np.asarray(audio, dtype=np.float32)
    if data.ndim == 1:
        data = data[:, None]
    if data.ndim != 2 or not data.shape[1]:
        raise ValueError(f"add_audio: a clip is [samples] or [samples, channels], found shape {list(np.shape(audio))}")
    if not 0 < int(sample_rate) < 1 << 31:
        raise ValueError(f"add_audio: sample_rate must be a positive number of samples a second, not {sample_rate!r}")
    scaled = data.astype(np.float64) * 32768.0
    samples = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5), -32768, 32767).astype("<i2")
    channels = data.shape[1]
    pcm: bytes = samples.tobytes()
    rate = int(sample_rate)
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * channels * 2, channels * 2, 16)
    return (
        b"RIFF"
        + struct.pack("<I", 36 + len(pcm))
        + b"WAVEfmt "
        + struct.pack("<I", 16)
        + fmt
        + b"data"
        + struct.pack("<I", len(pcm))
        + pcm
    )


def _image_pixels(image: Any) -> np.ndarray:
    pixels = np.asarray(image)
    if pixels.ndim not in (2, 3):
        raise ValueError(
            f"add_image: an image is [height, width] or [height, width, channels], found shape {list(pixels.shape)}"
        )
    if pixels.dtype.kind == "f":  # tf.summary.image's floats: [0, 1] scaled to 0..255
        pixels = np.clip(np.floor(pixels * 255.999), 0, 255)
    return pixels.astype(np.uint8)


def _png_size(png: bytes) -> tuple[int, int]:
    if png[:8] != b"\x89PNG\r\n\x1a\n" or len(png) < 24:
        raise ValueError("add_image: encoded images are taken as PNG; pass other images as arrays")
    width, height = struct.unpack(">II", png[16:24])
    return width, height


class EventWriter:
    """Writes a TensorBoard run: one events file in the folder `logdir` (made if missing), named as
    TensorFlow names it, readable by TensorBoard and by `read_events`.

    `add_scalar`, `add_histogram`, `add_image`, `add_text` and `add_audio` write what
    tf.summary.scalar, .histogram, .image, .text and .audio write; `step` is the training step,
    `wall_time` defaults to now. A context manager; `flush()` makes what was written visible to
    readers, `close()` ends it."""

    def __init__(self, logdir: str | os.PathLike[str], *, filename_suffix: str = ".v2") -> None:
        global _counter
        os.makedirs(logdir, exist_ok=True)
        name = (
            f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}.{os.getpid()}.{_counter}{filename_suffix}"
        )
        _counter += 1
        self.path = os.path.join(os.fspath(logdir), name)
        self._file = open(self.path, "xb")  # noqa: SIM115  # closed by close()
        self._writer = TFRecordWriter(self._file)
        version = _event(time.time(), 0, _field(3, b"brain.Event:2") + _field(10, _field(1, _SOURCE_WRITER)))
        self._writer.write(version)
        self._writer.flush()

    def _write(
        self, tag: str, step: int, wall_time: float | None, tensor: bytes, plugin: str, content: bytes = b""
    ) -> None:
        value = _field(1, tag.encode("utf-8")) + _field(8, tensor) + _field(9, _metadata(plugin, content))
        when = time.time() if wall_time is None else float(wall_time)
        self._writer.write(_event(when, int(step), _field(5, _field(1, value))))

    def add_scalar(self, tag: str, value: float, step: int, *, wall_time: float | None = None) -> None:
        """A scalar, as float32 (tf.summary.scalar)."""
        self._write(tag, step, wall_time, _tensor(_DT_FLOAT, (), struct.pack("<f", float(value))), "scalars")

    def add_histogram(
        self, tag: str, values: Any, step: int, *, buckets: int = DEFAULT_BUCKETS, wall_time: float | None = None
    ) -> None:
        """The histogram of `values` in `buckets` equal buckets (tf.summary.histogram)."""
        table = histogram_buckets(values, buckets)
        content = table.astype("<f8").tobytes()
        self._write(tag, step, wall_time, _tensor(_DT_DOUBLE, table.shape, content), "histograms")

    def add_image(self, tag: str, image: Any, step: int, *, wall_time: float | None = None) -> None:
        """One image: PNG bytes, or an [h, w] / [h, w, c] array (uint8, or floats in [0, 1]), written
        as PNG (tf.summary.image of one image)."""
        if isinstance(image, (bytes, bytearray, memoryview)):
            png = bytes(image)
            width, height = _png_size(png)
        else:
            pixels = _image_pixels(image)
            height, width = pixels.shape[:2]
            png = encode_png(pixels)
        strings = [str(width).encode(), str(height).encode(), png]
        self._write(tag, step, wall_time, _tensor(_DT_STRING, (3,), strings=strings), "images")

    def add_text(self, tag: str, text: str, step: int, *, wall_time: float | None = None) -> None:
        """A text, shown as Markdown by TensorBoard (tf.summary.text)."""
        self._write(tag, step, wall_time, _tensor(_DT_STRING, (), strings=[text.encode("utf-8")]), "text")

    def add_audio(self, tag: str, audio: Any, step: int, *, sample_rate: int, wall_time: float | None = None) -> None:
        """One audio clip: WAV bytes, or a [samples] / [samples, channels] array of floats in [-1, 1]
        encoded as 16-bit WAV at `sample_rate` (tf.summary.audio of one clip)."""
        if isinstance(audio, (bytes, bytearray, memoryview)):
            wav = bytes(audio)
            if wav[:4] != b"RIFF" or wav[8:12] != b"WAVE":
                raise ValueError("add_audio: encoded audio is taken as WAV; pass other clips as arrays")
        else:
            wav = encode_wav(audio, sample_rate)
        tensor = _tensor(_DT_STRING, (1, 2), strings=[wav, b""])
        self._write(tag, step, wall_time, tensor, "audio", _AUDIO_WAV)

    def flush(self) -> None:
        """Hand what was written to the operating system: readers see every record written."""
        self._writer.flush()

    def close(self) -> None:
        """Write what is left and close the file."""
        self._writer.close()
        self._file.close()

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
