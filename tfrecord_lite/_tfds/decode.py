"""One TFDS record (a tf.train.Example) decoded by its feature tree into what
`tfds.as_numpy(builder.as_dataset(...))` hands back: nested dicts of numpy arrays, numpy scalars and
bytes, without TensorFlow.

Strategy, in TFDS's two steps. First the storage: the record is parsed once by the library's
Example decoder (no spec: int64 / float32 arrays and lists of bytes by key), and each leaf
connector takes its values at its "/"-joined key. A leaf under `Sequence`s has one leading
dimension per sequence: one sequence level is a plain array (the values reshaped, the one unknown
dimension computed, its count checked), two or more are TFDS's ragged layout (`KEY/ragged_flat_values`
and `KEY/ragged_row_lengths_K`), rebuilt as nested lists of arrays after the row lengths are proven
to add up. The stored dtype (int64, float32, bytes) is cast to the connector's (uint64 bit-cast, as
TFDS stores it). A key that is missing is an error when the shape is fully known (as TFDS parses
it) and an empty value otherwise.

Then each connector's decoding, element by element below its sequence levels: an Image's bytes
decoded by Pillow (_images/codec.py; imported when the first image is decoded) to HWC uint8 /
uint16 (a JPEG by simplejpeg with TensorFlow's fast integer DCT when it is installed, so the pixels
are TensorFlow's) (a float32 image is TFDS's 4-channel PNG bit-cast back), a Video's frames likewise and
stacked, a bytes- or zlib-encoded Tensor made an array after its byte count is checked against its
shape. With `decode=False` images, videos and lazily encoded audio stay their encoded bytes (TFDS's
`SkipDecoding`). A `Dataset` feature (RLDS `steps`) is decoded as a Sequence of its steps, then
handed back as a list of step dicts (what iterating tfds.as_numpy's nested dataset gives); a nested
sequence of variable lengths is a list of arrays where TFDS hands back a tf.RaggedTensor.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from tfrecord_lite._errors import DecodeError
from tfrecord_lite._example.decode import decode_example
from tfrecord_lite._images.codec import decode_image_bytes, open_image
from tfrecord_lite._tfds.features import (
    Audio,
    Dataset,
    Feature,
    FeaturesDict,
    Image,
    Sequence,
    Shape,
    Tensor,
    Video,
)

Raw = dict[str, Any]
Dims = tuple["int | None", ...]
MAX_DECODED_BYTES = 1 << 30  # an encoded tensor larger than this is refused (as a record would be)


def decode_record(root: Feature, record: bytes, *, decode: bool = True) -> Any:
    """The example `record` holds, decoded as TFDS's as_numpy hands it back."""
    raw = decode_example(record)
    return _node(root, raw, (), decode)


def _node(node: Feature, raw: Raw, dims: Dims, decode: bool) -> Any:
    if isinstance(node, FeaturesDict):
        return {name: _node(child, raw, dims, decode) for name, child in node.features.items()}
    if isinstance(node, Dataset):
        if dims:
            raise DecodeError(f"feature {node.key!r}: a Dataset inside a Sequence is not supported (nor by TFDS)")
        return _steps(_node(node.feature, raw, (None,), decode))
    if isinstance(node, Sequence):
        return _node(node.feature, raw, (*dims, node.length), decode)
    if isinstance(node, Video):
        frames = _stored(raw, node.key, "object", (*dims, None), ())
        if not decode:
            return frames
        frame = node.frame
        return _map(
            frames,
            len(dims),
            lambda video: _stack([_image(f, frame) for f in video], node.shape, node.dtype),
            (*dims, *node.shape),
            node.dtype,
        )
    if isinstance(node, Image):
        data = _stored(raw, node.key, "object", dims, ())
        if not decode:
            return data
        return _map(data, len(dims), lambda b: _image(b, node), (*dims, *node.shape), node.dtype)
    if isinstance(node, Tensor):
        return _tensor(node, raw, dims, decode)
    raise DecodeError(f"feature {node.key!r}: no decoder for {node.kind}")  # pragma: no cover - no other kinds


def _tensor(node: Tensor, raw: Raw, dims: Dims, decode: bool) -> Any:
    if isinstance(node, Audio) and node.lazy_decode:
        data = _stored(raw, node.key, "object", dims, ())
        if decode:
            raise DecodeError(
                f"feature {node.key!r}: lazily encoded audio ({node.file_format}) is not decoded here: "
                "load with decode=False for its file bytes"
            )
        return data
    dynamic = node.shape.count(None) > 1
    if node.optional and not dims and node.key not in raw and None not in node.shape:
        return _default(node)
    if node.encoding == "none" and not dynamic:
        return _stored(raw, node.key, node.dtype, dims, node.shape)
    key = f"{node.key}/value" if dynamic else node.key
    data = _stored(raw, key, "object", dims, ())
    shapes = _stored(raw, f"{node.key}/shape", "int32", dims, (len(node.shape),)) if dynamic else None
    if shapes is None:
        return _map(data, len(dims), lambda b: _raw_tensor(b, node, node.shape), (*dims, *node.shape), node.dtype)
    pairs = _zip(data, shapes, len(dims))
    return _map(
        pairs,
        len(dims),
        lambda p: _raw_tensor(p[0], node, tuple(int(d) for d in p[1])),
        (*dims, *node.shape),
        node.dtype,
    )


def _default(node: Tensor) -> Any:
    """What TFDS hands back for an optional tensor a record leaves out: the dtype's lowest value
    (b"" for bytes, False for bool) in the tensor's shape."""
    dtype = np.dtype(node.dtype)
    if dtype.kind == "O":
        fill: Any = b""
    elif dtype.kind == "b":
        fill = False
    elif dtype.kind in "iu":
        fill = np.iinfo(dtype).min
    else:
        fill = np.finfo(dtype).min
    value = np.full(tuple(d or 0 for d in node.shape), fill, dtype)
    return value[()] if not node.shape else value


def _raw_tensor(data: bytes, node: Tensor, shape: Shape) -> np.ndarray:
    """A bytes- or zlib-encoded tensor: its byte count worked out from `shape` first, then proven
    (zlib inflated to no more than that count and one byte)."""
    dtype = np.dtype(node.dtype).newbyteorder("<")
    if any(d is None or d < 0 for d in shape):
        raise DecodeError(f"feature {node.key!r}: stored shape {shape} is not fully known")
    expected = dtype.itemsize
    for d in shape:
        expected *= d or 0
    if expected > MAX_DECODED_BYTES:
        raise DecodeError(f"feature {node.key!r}: a tensor of shape {shape} would take {expected} bytes")
    if node.encoding == "zlib":
        try:
            data = zlib.decompressobj().decompress(data, expected + 1)
        except zlib.error as err:
            raise DecodeError(f"feature {node.key!r}: its zlib-encoded tensor does not inflate: {err}") from None
    if expected != len(data):
        raise DecodeError(
            f"feature {node.key!r}: {len(data)} bytes for a {node.dtype} tensor of shape {shape} (expected {expected})"
        )
    return np.frombuffer(data, dtype).astype(node.dtype).reshape(shape)


# --- storage ----------------------------------------------------------------------------------


def _stored(raw: Raw, key: str, dtype: str, dims: Dims, shape: Shape) -> Any:
    """The values stored at `key` for a leaf of `dtype` and `shape` under sequences `dims`: one
    array (no or one sequence level) or nested lists of arrays (two or more, TFDS's ragged layout)."""
    if len(dims) > 1:
        return _ragged(raw, key, dtype, dims, shape)
    full = (*dims, *shape)
    values = raw.get(key)
    if values is None:
        if None not in full:
            raise DecodeError(f"feature {key!r} is missing from the record (TFDS writes it for shape {full})")
        values = []
    arr = _cast(values, key, dtype)
    return _reshaped(arr, key, full)


def _reshaped(arr: np.ndarray, key: str, full: Shape) -> Any:
    """`arr` (flat) in `full`, its one unknown dimension computed; a scalar as a numpy scalar or bytes."""
    if not full:
        if arr.size != 1:
            raise DecodeError(f"feature {key!r}: {arr.size} values for a scalar")
        return arr[0]
    unknown = full.count(None)
    if unknown > 1:
        raise DecodeError(
            f"feature {key!r}: shape {full} has more than one unknown dimension outside TFDS's ragged layout"
        )
    known = int(np.prod([d for d in full if d is not None], dtype=np.int64))
    misfit = arr.size != known if unknown == 0 else (arr.size % known if known else arr.size)
    if misfit:
        raise DecodeError(f"feature {key!r}: {arr.size} values do not fit shape {full}")
    return arr.reshape([(-1 if known else 0) if d is None else d for d in full])


def _cast(values: Any, key: str, dtype: str) -> np.ndarray:
    if dtype == "object":
        if isinstance(values, np.ndarray) and values.size:
            raise DecodeError(f"feature {key!r}: expected bytes values, found {values.dtype} ones")
        out = np.empty(len(values), object)
        out[:] = [bytes(v) for v in values] if isinstance(values, list) else []
        return out
    if isinstance(values, list):
        if values:
            raise DecodeError(f"feature {key!r}: expected {dtype} values, found bytes")
        return np.zeros(0, dtype)
    target = np.dtype(dtype)
    if target.kind == "f" and values.dtype.kind != "f" and values.size:
        raise DecodeError(f"feature {key!r}: expected floats (a float_list), found {values.dtype}")
    if target.kind in "iub" and values.dtype.kind != "i" and values.size:
        raise DecodeError(f"feature {key!r}: expected integers (an int64_list), found {values.dtype}")
    if dtype == "uint64":
        unsigned: np.ndarray = values.astype(np.int64).view(np.uint64)
        return unsigned
    cast: np.ndarray = values.astype(target)
    return cast


def _ragged(raw: Raw, key: str, dtype: str, dims: Dims, shape: Shape) -> Any:
    """TFDS's layout of two or more sequence levels: flat values and one row-length list per level
    but the last, rebuilt as nested lists (the innermost level arrays) once the lengths add up."""
    flat = _stored(raw, f"{key}/ragged_flat_values", dtype, (None,), shape)
    levels = []
    for k in range(len(dims) - 1):
        lengths = raw.get(f"{key}/ragged_row_lengths_{k}")
        lengths = np.zeros(0, np.int64) if lengths is None else np.asarray(lengths)
        if lengths.dtype.kind != "i" or (lengths.size and lengths.min() < 0):
            raise DecodeError(f"feature {key!r}: ragged_row_lengths_{k} must be non-negative integers")
        levels.append(lengths.tolist())
    rows: Any = flat
    for k in range(len(levels) - 1, -1, -1):
        lengths = levels[k]
        if sum(lengths) != len(rows):
            raise DecodeError(f"feature {key!r}: ragged_row_lengths_{k} add up to {sum(lengths)}, not {len(rows)}")
        out, start = [], 0
        for n in lengths:
            out.append(rows[start : start + n])
            start += n
        rows = out
    return rows


# --- element-wise decoding ---------------------------------------------------------------------


def _map(stored: Any, rank: int, fn: Callable[[Any], Any], full: Shape, dtype: str) -> Any:
    """`fn` applied to every element under `rank` sequence levels: rank 0 the value, rank 1 an array
    stacked from the elements, deeper nested lists."""
    if rank == 0:
        return fn(stored)
    if rank == 1:
        return _stack([fn(e) for e in stored], full[1:], dtype)
    return [_map(row, rank - 1, fn, full[1:], dtype) for row in stored]


def _stack(items: list[Any], shape: Shape, dtype: str) -> np.ndarray:
    if not items:
        return np.zeros((0, *(d or 0 for d in shape)), dtype)
    return np.stack(items)


def _zip(a: Any, b: Any, rank: int) -> Any:
    if rank == 0:
        return (a, b)
    if rank == 1:
        out = np.empty(len(a), object)
        out[:] = list(zip(a, b, strict=False))
        return out
    return [_zip(x, y, rank - 1) for x, y in zip(a, b, strict=False)]


def _steps(stacked: Any) -> list[Any]:
    """A sequence decoded as stacked columns, handed back as one value per step."""
    n = _length(stacked)
    return [_index(stacked, i) for i in range(n)]


def _length(tree: Any) -> int:
    if isinstance(tree, dict):
        lengths = {_length(v) for v in tree.values()}
        if len(lengths) > 1:
            raise DecodeError(f"the steps of a Dataset feature have different lengths: {sorted(lengths)}")
        return lengths.pop() if lengths else 0
    return len(tree)


def _index(tree: Any, i: int) -> Any:
    if isinstance(tree, dict):
        return {k: _index(v, i) for k, v in tree.items()}
    return tree[i]


# --- images ------------------------------------------------------------------------------------

_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


_JPEG = b"\xff\xd8\xff"
_simplejpeg: Any = None


def _image(data: bytes, node: Image) -> np.ndarray:
    """Encoded image bytes as TFDS decodes them: HWC, the channels its shape says."""
    channels = node.shape[-1]
    if node.dtype == "uint8":
        if data[:3] == _JPEG and channels in (None, 1, 3):
            pixels = _tf_jpeg(bytes(data), channels)
            if pixels is not None:
                return pixels
        return decode_image_bytes(data, mode=_MODES.get(channels or 0), name=node.key)
    if node.dtype == "float32":  # TFDS's float image: a 4-channel uint8 PNG holding the float's bytes
        pixels = decode_image_bytes(data, mode="RGBA", name=node.key)
        return np.ascontiguousarray(pixels).view(np.float32)
    with open_image(bytes(data), node.key) as im:  # 16-bit PNG
        arr = np.array(im).astype(np.uint16)
    return arr[:, :, None] if arr.ndim == 2 else arr


def _tf_jpeg(data: bytes, channels: int | None) -> np.ndarray | None:
    """A JPEG decoded as TensorFlow's decode_jpeg decodes it (libjpeg-turbo's fast integer DCT,
    fancy upsampling), by simplejpeg when it is installed; None otherwise, or when simplejpeg cannot
    decode it (then Pillow decodes it, with the accurate DCT: pixels may differ by a few levels)."""
    global _simplejpeg
    if _simplejpeg is None:
        try:
            import simplejpeg
        except ImportError:
            simplejpeg = False
        _simplejpeg = simplejpeg
    if not _simplejpeg:
        return None
    try:
        if channels is None:
            channels = 1 if _simplejpeg.decode_jpeg_header(data)[2] == "Gray" else 3
        colorspace = "GRAY" if channels == 1 else "RGB"
        pixels: np.ndarray = _simplejpeg.decode_jpeg(data, colorspace=colorspace, fastdct=True, fastupsample=False)
    except ValueError:
        return None
    return pixels
