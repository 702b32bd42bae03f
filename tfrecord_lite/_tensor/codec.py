"""Serialized tensors: tf.io.serialize_tensor and tf.io.parse_tensor for numpy, sans-I/O.
A serialized tensor is a TensorProto message (TensorFlow's, under our proto package).

Strategy: one table says, for every dtype both TensorFlow and numpy have, its DataType
and the repeated field that can hold its values. serialize_tensor writes what
TensorFlow's SerializeTensor op writes, byte for byte (checked against TensorFlow): the
dtype, the shape (present even for a scalar), and the values packed little-endian in
tensor_content; strings, which have no fixed size, go one string_val each. The message
class serializes the dtype, shape and strings, so their encoding is the protobuf
runtime's, as in TensorFlow; tensor_content, the field that follows them, is joined on
from the array's own memory, one copy in all.

parse_tensor walks the bytes without a message object (tensor_wire.py) and reads both
encodings: tensor_content (for strings, TensorFlow's varint lengths then the bytes), or
the dtype's own typed field, where fewer values than the shape holds repeat the last one
(no values at all: zeros), as tf.make_tensor_proto's output relies on. Nothing is
allocated from the declared shape before the shape is checked against the data:
tensor_content must hold exactly the bytes the shape needs, and a typed field's values
are repeated only up to FILL_LIMIT bytes, the most a TensorProto could have held written
out in full. Where TensorFlow silently ignores part of a malformed proto (values in
another dtype's field, more values than the shape holds, typed values beside
tensor_content), parse_tensor raises instead.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from tfrecord_lite._errors import DecodeError
from tfrecord_lite._example.encode import encode_varint
from tfrecord_lite._example.proto import TensorProto
from tfrecord_lite._example.spec import DTypeLike, dtype_name
from tfrecord_lite._example.varints import read_varint
from tfrecord_lite._tensor.wire import LocatedTensor, field_values, holds_values, locate

# The most bytes a tensor is filled to by repeating a typed field's last value: TensorFlow
# writes no TensorProto over 2 GiB, so a larger tensor can only come from repetition.
FILL_LIMIT = 1 << 31
_SIZE_LIMIT = 1 << 63  # bytes: TensorFlow's and numpy's bound on an array's size
_MAX_DIMS = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32


class _Layout(NamedTuple):
    enum: str  # the DataType value
    field: str  # the repeated field that holds its values when tensor_content does not


_LAYOUTS = {
    "bool": _Layout("DT_BOOL", "bool_val"),
    "int8": _Layout("DT_INT8", "int_val"),
    "int16": _Layout("DT_INT16", "int_val"),
    "int32": _Layout("DT_INT32", "int_val"),
    "int64": _Layout("DT_INT64", "int64_val"),
    "uint8": _Layout("DT_UINT8", "int_val"),
    "uint16": _Layout("DT_UINT16", "int_val"),
    "uint32": _Layout("DT_UINT32", "uint32_val"),
    "uint64": _Layout("DT_UINT64", "uint64_val"),
    "float16": _Layout("DT_HALF", "half_val"),  # the bits of each value
    "float32": _Layout("DT_FLOAT", "float_val"),
    "float64": _Layout("DT_DOUBLE", "double_val"),
    "complex64": _Layout("DT_COMPLEX64", "scomplex_val"),  # (real, imag) pairs
    "complex128": _Layout("DT_COMPLEX128", "dcomplex_val"),
    "bytes": _Layout("DT_STRING", "string_val"),
}
TENSOR_DTYPES = tuple(_LAYOUTS)
_DATA_TYPE = TensorProto.DESCRIPTOR.fields_by_name["dtype"].enum_type
_NUMBER = {name: _DATA_TYPE.values_by_name[layout.enum].number for name, layout in _LAYOUTS.items()}
_NAME = {number: name for name, number in _NUMBER.items()}
_TEXT = (bytes, str, bytearray)
_CONTENT_TAG = bytes([TensorProto.DESCRIPTOR.fields_by_name["tensor_content"].number << 3 | 2])


def tensor_dtype(dtype: DTypeLike) -> str:
    """The canonical name of a tensor dtype (any accepted spelling; strings are 'bytes')."""
    name = dtype_name(dtype)
    if name in _LAYOUTS:
        return name
    raise ValueError(f"parse_tensor cannot make {dtype!r} tensors: use one of {', '.join(TENSOR_DTYPES)}")


def _numpy_dtype(name: str) -> np.dtype:
    return np.dtype(object if name == "bytes" else name)


# --------------------------------------------------------------------------- writing


def serialize_tensor(array: Any) -> bytes:
    """`array` as a serialized TensorProto, the bytes `tf.io.serialize_tensor` writes for it.

    `array` is a numpy array (any byte order and memory layout) or anything `np.asarray`
    takes, of bool, int8/16/32/64, uint8/16/32/64, float16/32/64, complex64/128, or strings:
    bytes / str values (str written as UTF-8) in an object, bytes or str array, or one
    bytes / str value for a scalar. Its dtype is numpy's: `[1.0]` is float64 where
    `tf.constant` would make float32, so pass an array of the dtype you mean.
    """
    arr = _as_array(array)
    name = _tensor_name(arr)
    proto = TensorProto(dtype=_NUMBER[name])
    proto.tensor_shape.SetInParent()  # present even for a scalar, as TensorFlow writes it
    for size in arr.shape:
        proto.tensor_shape.dim.add(size=size)
    if name == "bytes":
        proto.string_val.extend(_strings(arr))
    head: bytes = proto.SerializeToString()
    if name == "bytes" or not arr.size:
        return head
    # tensor_content, the field after the head's, joined on without a copy in between.
    content = _little_endian_bytes(arr)
    return b"".join([head, _CONTENT_TAG, encode_varint(content.nbytes), content.data])


def _little_endian_bytes(arr: np.ndarray) -> np.ndarray:
    """The values in C order as little-endian bytes (bools as 0 / 1): a uint8 view where it can be."""
    if arr.dtype.kind == "b":
        ones: np.ndarray = np.ascontiguousarray(arr).view(np.uint8).reshape(-1) != 0
        return ones.view(np.uint8)
    little = np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<"), copy=False))
    return little.reshape(-1).view(np.uint8)


def _as_array(array: Any) -> np.ndarray:
    if isinstance(array, np.ndarray):
        return array
    if isinstance(array, _TEXT):
        scalar = np.empty((), dtype=object)
        scalar[()] = array
        return scalar
    arr = np.asarray(array)
    if arr.dtype.kind in "SU":  # keep each value whole: numpy's fixed-width bytes drop trailing NULs
        arr = np.array(array, dtype=object)
    return arr


def _tensor_name(arr: np.ndarray) -> str:
    if arr.dtype.kind in "OSU":
        return "bytes"
    name = str(arr.dtype.name)
    if name in _LAYOUTS:
        return name
    raise TypeError(
        f"serialize_tensor cannot write a {arr.dtype} array: TensorFlow has no such dtype; "
        f"use one of {', '.join(TENSOR_DTYPES)} (bytes: an object array of bytes or str)"
    )


def _strings(arr: np.ndarray) -> list[bytes]:
    """The values of a string array in C order, as bytes (str encoded as UTF-8)."""
    values = arr.ravel().tolist()
    out = []
    for i, value in enumerate(values):
        if isinstance(value, bytes):
            out.append(value)
        elif isinstance(value, str):
            out.append(value.encode())
        elif isinstance(value, (bytearray, memoryview)):
            out.append(bytes(value))
        else:
            where = [int(k) for k in np.unravel_index(i, arr.shape)]
            raise TypeError(f"serialize_tensor: element {where} is {type(value).__name__}, not bytes or str")
    return out


# --------------------------------------------------------------------------- reading


def dtype_of_number(number: int) -> str | None:
    """The dtype name of a TensorProto's DataType number, None for one numpy has no type for."""
    return _NAME.get(number)


def parse_tensor(source: Any, dtype: DTypeLike) -> np.ndarray:
    """The array in a serialized TensorProto, like `tf.io.parse_tensor(serialized, dtype)`.

    `dtype` (any spelling: `"float32"`, `np.float32`, `tf.float32`, `"string"` / `bytes` for
    strings) must be the stored tensor's dtype, else a `DecodeError` names both. The values
    may be in `tensor_content` (what `tf.io.serialize_tensor` writes) or in the dtype's typed
    field (`float_val`, `int_val`, `string_val`, ... as `tf.make_tensor_proto` writes them),
    where fewer values than the shape holds repeat the last one. The result is a fresh,
    writable array in native byte order; strings come back as an object array of bytes.
    """
    name = tensor_dtype(dtype)
    buf = _buffer(source)
    tensor = locate(buf)
    if tensor.dtype != _NUMBER[name]:
        raise DecodeError(f"parse_tensor: expected dtype {_label(_NUMBER[name])}, found {_label(tensor.dtype)}")
    shape = _shape(tensor.dims, name)
    _check_fields(tensor, name)
    start, stop = tensor.content
    flat = _from_content(buf, start, stop, name, shape) if stop > start else _from_field(buf, tensor, name, shape)
    return flat.reshape(shape)


def _buffer(data: Any) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    found = "str: pass the serialized bytes" if isinstance(data, str) else type(data).__name__
    raise TypeError(f"parse_tensor takes bytes, found {found}")


def _label(number: int) -> str:
    """'float32 (DT_FLOAT)', 'DT_BFLOAT16' for a dtype numpy lacks, 'DataType 99' if unknown."""
    value = _DATA_TYPE.values_by_number.get(number)
    enum = value.name if value is not None else f"DataType {number}"
    return f"{_NAME[number]} ({enum})" if number in _NAME else enum


def _shape(dims: list[int], name: str) -> tuple[int, ...]:
    if len(dims) > _MAX_DIMS:
        raise DecodeError(f"parse_tensor: the tensor has {len(dims)} dimensions, numpy at most {_MAX_DIMS}")
    if any(d < 0 for d in dims):
        raise DecodeError(f"parse_tensor: shape {dims} has a negative dimension")
    if math.prod(max(d, 1) for d in dims) * _numpy_dtype(name).itemsize >= _SIZE_LIMIT:
        raise DecodeError(f"parse_tensor: shape {dims} of {name} is larger than any array can be")
    return tuple(dims)


def _check_fields(tensor: LocatedTensor, name: str) -> None:
    own = _LAYOUTS[name].field
    for field, spans in tensor.values.items():
        if field != own and holds_values(field, spans):
            raise DecodeError(
                f"parse_tensor: a {name} tensor keeps its values in tensor_content or {own}, "
                f"but this one has values in {field}"
            )
    start, stop = tensor.content
    if stop > start and holds_values(own, tensor.values.get(own, [])):
        raise DecodeError(f"parse_tensor: the tensor has values both in tensor_content and in {own}")


def _from_content(buf: bytes, start: int, stop: int, name: str, shape: tuple[int, ...]) -> np.ndarray:
    count = math.prod(shape)
    if name == "bytes":
        return _strings_from_content(buf, start, stop, count)
    dt = np.dtype(name)
    if stop - start != count * dt.itemsize:
        raise DecodeError(
            f"parse_tensor: tensor_content holds {stop - start} bytes, "
            f"but shape {list(shape)} of {name} takes {count * dt.itemsize}"
        )
    if name == "bool":
        raw = np.frombuffer(buf, dtype=np.uint8, count=count, offset=start)
        if raw.max(initial=0) > 1:
            raise DecodeError("parse_tensor: the tensor_content of a bool tensor holds a byte other than 0 and 1")
        return raw.astype(bool)
    return np.frombuffer(buf, dtype=dt.newbyteorder("<"), count=count, offset=start).astype(dt)


def _strings_from_content(buf: bytes, start: int, stop: int, count: int) -> np.ndarray:
    """TensorFlow's string encoding in tensor_content: `count` varint lengths, then the bytes."""
    size = stop - start
    if count > size:  # every length takes a byte at least
        raise DecodeError(f"parse_tensor: tensor_content holds {size} bytes, too few for {count} strings")
    lengths, pos = [], start
    for _ in range(count):
        length, pos = read_varint(buf, pos, stop)
        lengths.append(length)
    if pos + sum(lengths) != stop:
        raise DecodeError(
            f"parse_tensor: tensor_content holds {size} bytes, but the lengths of its {count} strings "
            f"add up to {pos - start + sum(lengths)}"
        )
    out = np.empty(count, dtype=object)
    for i, length in enumerate(lengths):
        out[i] = buf[pos : pos + length]
        pos += length
    return out


def _from_field(buf: bytes, tensor: LocatedTensor, name: str, shape: tuple[int, ...]) -> np.ndarray:
    field = _LAYOUTS[name].field
    raw = field_values(buf, field, tensor.values.get(field, []))
    per_value = 2 if name.startswith("complex") else 1
    if len(raw) % per_value:
        raise DecodeError(f"parse_tensor: {field} holds {len(raw)} numbers, not (real, imag) pairs")
    given, count = len(raw) // per_value, math.prod(shape)
    if given > count:
        raise DecodeError(f"parse_tensor: {field} holds {given} values, more than the {count} of shape {list(shape)}")
    dt = _numpy_dtype(name)
    if given < count and count * dt.itemsize > FILL_LIMIT:
        raise DecodeError(
            f"parse_tensor: shape {list(shape)} of {name} takes {count * dt.itemsize} bytes, but {field} "
            f"holds {given} of its values; repeating the last is refused past {FILL_LIMIT} bytes"
        )
    flat = _typed_values(raw, name)
    if given == count:
        return flat
    out = np.full(count, b"" if name == "bytes" else 0, dtype=dt)
    out[:given] = flat
    if given:
        out[given:] = flat[-1]
    return out


def _typed_values(raw: np.ndarray, name: str) -> np.ndarray:
    """A typed field's numbers (int64 from varints, floats, or bytes objects) as dtype `name`."""
    if name == "float16":
        return raw.astype(np.uint16).view(np.float16)  # the low 16 bits, as TensorFlow reads them
    if name.startswith("complex"):
        return raw.astype(raw.dtype.newbyteorder("=")).view(name)
    return raw.astype(_numpy_dtype(name))
