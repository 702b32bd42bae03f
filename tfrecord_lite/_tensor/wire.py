"""The protobuf wire format of a TensorProto, sans-I/O: where its dtype, shape, tensor_content
and typed values lie in the serialized bytes, and a typed field's values read out.

Strategy: the wire format is walked directly with wire.py's field walker, no message
objects: the bytes are untrusted, and the oldest protobuf runtimes the package supports
can crash on malformed messages. The walk keeps protobuf's semantics, so the runtime's
own TensorProto class serves as the reference in the tests: fields of the wrong wire type
and unknown fields are skipped, the last dtype and tensor_content win, shape messages
merge (their dims add up), and a repeated numeric field takes packed and unpacked
encodings alike. Field numbers and types come from the TensorProto descriptor. Values
are located first and read only for the field the dtype asks for: numpy reads packed
floats in place and varints in bulk (varints.decode_varints), so reading allocates in
proportion to the bytes present.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from google.protobuf.descriptor import FieldDescriptor

from tfrecord_lite._errors import DecodeError
from tfrecord_lite._example.proto import TensorProto, TensorShapeProto
from tfrecord_lite._example.varints import decode_varints, read_varint
from tfrecord_lite._example.wire import fields_in

Span = tuple[int, int, int]  # (wire type, start, stop) of one occurrence of a field

_TENSOR = TensorProto.DESCRIPTOR.fields_by_name
_DTYPE, _SHAPE, _CONTENT = (_TENSOR[name].number for name in ("dtype", "tensor_shape", "tensor_content"))
_DIM = TensorShapeProto.DESCRIPTOR.fields_by_name["dim"]
_DIM_SIZE, _DIM_NAME = (_DIM.message_type.fields_by_name[name].number for name in ("size", "name"))
# The fields that hold values: every repeated one, and float8_val.
_VALUE_FIELDS = {
    f.number: f.name
    for f in TensorProto.DESCRIPTOR.fields
    if f.name == "float8_val" or (f.name.endswith("_val") and f.type != FieldDescriptor.TYPE_MESSAGE)
}
_FIXED: dict[int, np.dtype] = {
    FieldDescriptor.TYPE_FLOAT: np.dtype("<f4"),
    FieldDescriptor.TYPE_DOUBLE: np.dtype("<f8"),
}
# How one value of each field is written when not packed: 5 fixed32, 1 fixed64, 2 bytes, 0 varint.
_WIRE_TYPE = {
    name: {FieldDescriptor.TYPE_FLOAT: 5, FieldDescriptor.TYPE_DOUBLE: 1, FieldDescriptor.TYPE_BYTES: 2}.get(
        _TENSOR[name].type, 0
    )
    for name in _VALUE_FIELDS.values()
}


class LocatedTensor(NamedTuple):
    dtype: int  # the DataType number
    dims: list[int]
    content: tuple[int, int]  # the span of tensor_content; empty when it is absent
    values: dict[str, list[Span]]  # value field name -> each occurrence, in order


def malformed(detail: str) -> DecodeError:
    return DecodeError(f"parse_tensor: the data is not a serialized TensorProto (malformed protobuf: {detail})")


def locate(buf: bytes) -> LocatedTensor:
    """Where the parts of the TensorProto in `buf` lie; DecodeError if it is malformed."""
    try:
        return _locate(buf)
    except DecodeError as err:
        raise malformed(str(err).removeprefix("malformed protobuf: ")) from None


def _locate(buf: bytes) -> LocatedTensor:
    dtype, dims, content = 0, [], (0, 0)
    values: dict[str, list[Span]] = {}
    for number, wire, start, stop in fields_in(buf, 0, len(buf)):
        if number == _DTYPE and wire == 0:
            dtype = _signed(read_varint(buf, start, stop)[0], 32)
        elif number == _SHAPE and wire == 2:
            dims.extend(_dims(buf, start, stop))
        elif number == _CONTENT and wire == 2:
            content = (start, stop)
        elif number in _VALUE_FIELDS:
            name = _VALUE_FIELDS[number]
            if wire == 2 or wire == _WIRE_TYPE[name]:
                values.setdefault(name, []).append((wire, start, stop))
    return LocatedTensor(dtype, dims, content, values)


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _dims(buf: bytes, start: int, stop: int) -> list[int]:
    """The dimension sizes in a TensorShapeProto (unknown_rank, like TensorFlow, is not read)."""
    return [
        _dim_size(buf, s, e)
        for number, wire, s, e in fields_in(buf, start, stop)
        if number == _DIM.number and wire == 2
    ]


def _dim_size(buf: bytes, start: int, stop: int) -> int:
    size = 0
    for number, wire, s, e in fields_in(buf, start, stop):
        if number == _DIM_SIZE and wire == 0:
            size = _signed(read_varint(buf, s, e)[0], 64)
        elif number == _DIM_NAME and wire == 2:
            try:
                buf[s:e].decode()
            except UnicodeDecodeError:
                raise DecodeError("a dimension's name is not UTF-8") from None
    return size


def holds_values(name: str, spans: list[Span]) -> bool:
    """Whether the occurrences `spans` of value field `name` hold any value."""
    if not spans:
        return False
    if name == "float8_val":  # bytes, not repeated: the last occurrence wins
        return spans[-1][2] > spans[-1][1]
    if _WIRE_TYPE[name] == 2:  # string_val: each occurrence is a value, empty or not
        return True
    return any(wire != 2 or stop > start for wire, start, stop in spans)


def field_values(buf: bytes, name: str, spans: list[Span]) -> np.ndarray:
    """The values of a repeated field, in order: int64 for varint fields (two's complement),
    float32 / float64 for fixed-width ones, an object array of bytes for string_val."""
    wire_type = _WIRE_TYPE[name]
    if wire_type == 2:
        out = np.empty(len(spans), dtype=object)
        for i, (_, start, stop) in enumerate(spans):
            out[i] = buf[start:stop]
        return out
    if wire_type == 0:
        return _concatenate([_varints(buf, start, stop) for _, start, stop in spans], np.dtype(np.int64))
    dt = _FIXED[_TENSOR[name].type]
    parts = []
    for _, start, stop in spans:
        if (stop - start) % dt.itemsize:
            raise malformed(f"a packed {name} of {stop - start} bytes")
        parts.append(np.frombuffer(buf, dtype=dt, count=(stop - start) // dt.itemsize, offset=start))
    return _concatenate(parts, dt)


def _varints(buf: bytes, start: int, stop: int) -> np.ndarray:
    if stop > start and buf[stop - 1] >= 0x80:
        raise malformed("truncated varint")
    try:
        return decode_varints(buf[start:stop])
    except DecodeError as err:
        raise malformed(str(err).removeprefix("malformed protobuf: ")) from None


def _concatenate(parts: list[np.ndarray], dt: np.dtype) -> np.ndarray:
    return np.concatenate(parts) if parts else np.empty(0, dtype=dt)
