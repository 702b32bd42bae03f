# The protobuf runtime's reading of a serialized tensor, by TensorFlow's rules: the reference
# parse_tensor is checked against, in the tests and by the fuzzer (no hypothesis needed here).
from __future__ import annotations

from typing import Any

import numpy as np
from google.protobuf.message import DecodeError as ProtobufDecodeError

import tfrecord_lite as tfr
from tfrecord_lite._tensor.codec import TENSOR_DTYPES

# The typed field of each dtype, and the numpy dtype of the Python values it holds.
FIELD = dict.fromkeys(["int8", "int16", "int32", "uint8", "uint16"], ("int_val", "int64")) | {
    "bool": ("bool_val", "bool"),
    "int64": ("int64_val", "int64"),
    "uint32": ("uint32_val", "int64"),
    "uint64": ("uint64_val", "uint64"),
    "float16": ("half_val", "int64"),  # the bits
    "float32": ("float_val", "float32"),
    "float64": ("double_val", "float64"),
    "complex64": ("scomplex_val", "float32"),  # (real, imag) pairs
    "complex128": ("dcomplex_val", "float64"),
    "bytes": ("string_val", "object"),
}


def from_typed_field(values: list[Any], name: str) -> np.ndarray:
    """The values a protobuf runtime gives for the typed field of dtype `name`, as that dtype."""
    held = np.array(values + [0], dtype=FIELD[name][1])[:-1]  # [0]: a 1-D object array of bytes too
    if name == "float16":
        return held.astype(np.uint16).view(np.float16)
    return held.view(name) if name.startswith("complex") else held.astype(name if name != "bytes" else object)


def repeat_last(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`values` repeated to fill `shape`: the last one again and again, or zeros if none."""
    count = int(np.prod(shape))
    fill = values[-1:] if len(values) else np.array([b"" if values.dtype == object else 0], values.dtype)
    return np.concatenate([values, np.repeat(fill, count - len(values))]).reshape(shape)


def runtime_array(message: Any, name: str) -> np.ndarray | None:
    """The array of dtype `name` in a TensorProto message that the protobuf runtime parsed, by
    TensorFlow's rules; None for strings in tensor_content (TensorFlow's encoding, not protobuf's)."""
    shape = tuple(dim.size for dim in message.tensor_shape.dim)
    content = message.tensor_content
    if content and name == "bytes":
        return None
    if content:
        raw = np.frombuffer(content, np.uint8 if name == "bool" else np.dtype(name).newbyteorder("<"))
        return raw.astype(name).reshape(shape)
    return repeat_last(from_typed_field(list(getattr(message, FIELD[name][0])), name), shape)


def same_array(found: np.ndarray, expected: np.ndarray) -> bool:
    """Same dtype, shape and values; NaNs equal (a runtime may quieten a signalling NaN)."""
    if found.dtype != expected.dtype or found.shape != expected.shape:
        return False
    if found.dtype.kind in "fc":
        return bool(np.array_equal(found, expected, equal_nan=True))
    return bool(found.tolist() == expected.tolist())


def check_parse(data: bytes, runtime: bool) -> None:
    """parse_tensor of `data` as every dtype gives an array or a DecodeError; with `runtime`, also
    against the protobuf runtime's TensorProto: what it rejects is rejected, what it parses is
    not called malformed, and an array is the shape and values of the message."""
    message = None
    if runtime:
        try:
            message = tfr.TensorProto.FromString(data)
        except ProtobufDecodeError:
            pass
    for name in TENSOR_DTYPES:
        try:
            found = tfr.parse_tensor(data, name)
        except tfr.DecodeError as err:
            if message is not None and "not a serialized TensorProto" in str(err):
                raise AssertionError(f"parse_tensor calls malformed what protobuf parses: {data!r}: {err}") from None
            continue
        if not runtime:
            continue
        if message is None:
            raise AssertionError(f"parse_tensor accepts what protobuf rejects: {data!r} as {name}")
        expected = runtime_array(message, name)
        assert expected is None or same_array(found, expected), (data, name, found, expected)
