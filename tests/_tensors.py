# Arrays of every tensor dtype and the typed fields that hold them, for the tests of
# serialize_tensor / parse_tensor with and without TensorFlow.
from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tfrecord_lite._example.tensor import TENSOR_DTYPES

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
    if name == "float16":
        return {"half_val": values.view(np.uint16).tolist()}
    if name.startswith("complex"):
        field = "scomplex_val" if name == "complex64" else "dcomplex_val"
        return {field: values.view(values.real.dtype).tolist()}
    fields = {"bool": "bool_val", "int64": "int64_val", "uint32": "uint32_val", "uint64": "uint64_val"}
    fields |= {"float32": "float_val", "float64": "double_val", "bytes": "string_val"}
    return {fields.get(name, "int_val"): values.tolist()}


def repeat_last(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`values` repeated to fill `shape`: the last one again and again, or zeros if none."""
    count = int(np.prod(shape))
    fill = values[-1:] if len(values) else np.array([b"" if values.dtype == object else 0], values.dtype)
    return np.concatenate([values, np.repeat(fill, count - len(values))]).reshape(shape)


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
