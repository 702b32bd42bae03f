# Arrays of every tensor dtype and the typed fields that hold them, for the tests of
# serialize_tensor / parse_tensor with and without TensorFlow.
from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests._tensor_reference import FIELD
from tfrecord_lite._tensor.codec import TENSOR_DTYPES

NUMERIC = [name for name in TENSOR_DTYPES if name != "bytes"]
SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)
# Bit patterns viewed as floats: every NaN payload, signalling ones included.
BITS = {"float16": "uint16", "float32": "uint32", "float64": "uint64", "complex64": "uint32", "complex128": "uint64"}
# The DataType of each dtype whose name is not "DT_" + its name in capitals.
ENUM = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE", "bytes": "DT_STRING"}


def enum_name(name: str) -> str:
    return ENUM.get(name, "DT_" + name.upper())


def numeric_arrays(names: list[str] = NUMERIC, orders: str = "<>") -> st.SearchStrategy[np.ndarray]:
    """Arrays of the dtypes `names`, in the byte orders `orders`, of any shape and any bits."""

    def build(name: str, order: str, shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
        dtype = np.dtype(name).newbyteorder(order)
        if name in BITS:
            bits = np.dtype(BITS[name]).newbyteorder(order)
            wide = shape + (2,) if name.startswith("complex") else shape
            return hnp.arrays(bits, wide).map(lambda a: a.view(dtype).reshape(shape))
        return hnp.arrays(dtype, shape)

    return st.tuples(st.sampled_from(names), st.sampled_from(orders), SHAPES).flatmap(lambda t: build(*t))


def byte_arrays() -> st.SearchStrategy[np.ndarray]:
    """Object arrays of bytes values, of any shape."""
    return SHAPES.flatmap(lambda shape: hnp.arrays(object, shape, elements=st.binary(max_size=6)))


def typed_values(name: str, count: int) -> st.SearchStrategy[np.ndarray]:
    """`count` values of dtype `name` (finite numbers: a typed field holds them as Python values)."""
    if name == "bytes":
        return hnp.arrays(object, count, elements=st.binary(max_size=4))
    return hnp.arrays(name, count, elements=hnp.from_dtype(np.dtype(name), allow_nan=False, allow_infinity=False))


def typed_field(name: str, values: np.ndarray) -> dict[str, Any]:
    """{field: values} for the typed field of dtype `name`, as a writer of typed fields fills it."""
    field, held = FIELD[name]
    if name == "float16":
        return {field: values.view(np.uint16).tolist()}
    return {field: values.view(held).tolist() if name.startswith("complex") else values.tolist()}


def fill_proto(message: Any, shape: list[int] | tuple[int, ...], fields: dict[str, Any]) -> bytes:
    """`message` (a TensorProto of any runtime) with `shape` and `fields` set, serialized."""
    message.tensor_shape.SetInParent()
    for size in shape:
        message.tensor_shape.dim.add(size=size)
    for field, value in fields.items():
        if isinstance(value, bytes):
            setattr(message, field, value)
        else:
            getattr(message, field).extend(value)
    return bytes(message.SerializeToString())
