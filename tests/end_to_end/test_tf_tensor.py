"""TensorFlow as the oracle of serialize_tensor / parse_tensor: the bytes tf.io.serialize_tensor
writes for every dtype and shape, parsed alike by both, and TensorProto's fields and dtypes.

Skipped as a whole when TensorFlow is not installed."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

tf = pytest.importorskip("tensorflow")

import tfrecord_lite as tfr
from tests._tensor_reference import repeat_last
from tests._tensors import (
    SHAPES,
    byte_arrays,
    enum_name,
    fill_proto,
    numeric_arrays,
    typed_field,
    typed_values,
)
from tfrecord_lite._tensor.codec import TENSOR_DTYPES

from tensorflow.core.framework import tensor_pb2, tensor_shape_pb2, types_pb2  # isort: skip

pytestmark = pytest.mark.tf

any_array = numeric_arrays(orders="=") | byte_arrays()


def tf_dtype(name: str) -> Any:
    return tf.string if name == "bytes" else tf.as_dtype(name)


def name_of(arr: np.ndarray) -> str:
    return "bytes" if arr.dtype == object else arr.dtype.name


def tf_parse(data: bytes, name: str) -> np.ndarray:
    value = tf.io.parse_tensor(data, tf_dtype(name)).numpy()
    return np.asarray(value, dtype=object if name == "bytes" else None)  # a scalar string is bytes


def same(found: np.ndarray, expected: np.ndarray) -> bool:
    """Same dtype, shape and values: bits for numbers (NaN payloads too), bytes for strings."""
    if found.dtype != expected.dtype or found.shape != expected.shape:
        return False
    return found.tolist() == expected.tolist() if found.dtype == object else found.tobytes() == expected.tobytes()


@given(any_array)
def test_our_bytes_are_tensorflows(arr: np.ndarray) -> None:
    assert tfr.serialize_tensor(arr) == tf.io.serialize_tensor(tf.constant(arr)).numpy()


@given(any_array)
def test_both_parse_what_tensorflow_writes_alike(arr: np.ndarray) -> None:
    data = tf.io.serialize_tensor(tf.constant(arr)).numpy()
    name = name_of(arr)
    expected = tf_parse(data, name)
    assert same(tfr.parse_tensor(data, name), expected)
    assert same(tfr.parse_tensor(data, tf_dtype(name)), expected)  # a tf.DType names the dtype too


@given(numeric_arrays(orders=">") | byte_arrays())
def test_tensorflow_parses_ours(arr: np.ndarray) -> None:
    name = name_of(arr)
    native = arr if name == "bytes" else arr.astype(arr.dtype.newbyteorder("="))
    assert same(tf_parse(tfr.serialize_tensor(arr), name), native)


def test_unicode_strings_are_written_as_tensorflow_writes_them() -> None:
    values = np.array([["é", b"\x00a\x00"], ["", "日本"]], dtype=object)
    assert tfr.serialize_tensor(values) == tf.io.serialize_tensor(tf.constant(values)).numpy()
    assert tfr.serialize_tensor("é") == tf.io.serialize_tensor("é").numpy()


@given(st.sampled_from(TENSOR_DTYPES), st.data())
def test_typed_fields_parse_as_in_tensorflow(name: str, data: st.DataObject) -> None:
    # Values in the dtype's own field, fewer than the shape holds: the last one repeats.
    shape = data.draw(SHAPES)
    values = data.draw(typed_values(name, data.draw(st.integers(0, int(np.prod(shape))))))
    message = tensor_pb2.TensorProto(dtype=types_pb2.DataType.Value(enum_name(name)))
    serialized = fill_proto(message, shape, typed_field(name, values))
    expected = tf_parse(serialized, name)
    assert same(tfr.parse_tensor(serialized, name), expected)
    assert same(expected, repeat_last(values, shape))


@pytest.mark.parametrize(
    ("value", "kwargs"),
    [
        (1.5, {"shape": [2, 3]}),
        (np.float16(2), {}),
        (np.float16(2), {"shape": [3]}),
        (np.arange(6, dtype=np.int8).reshape(2, 3), {}),
        (7, {"dtype": tf.uint8, "shape": [4]}),
        (np.uint64(2**64 - 1), {"shape": [2]}),
        (np.complex64(1 + 2j), {"shape": [2]}),
        ([True, False], {"shape": [4]}),
        ([b"a", b"bc"], {"shape": [2, 2]}),
        ("é", {}),
        (np.zeros((0, 3), np.float32), {}),
    ],
)
def test_make_tensor_proto_output_parses_as_in_tensorflow(value: Any, kwargs: dict[str, Any]) -> None:
    message = tf.make_tensor_proto(value, **kwargs)
    serialized = message.SerializeToString()
    name = "bytes" if message.dtype == types_pb2.DT_STRING else tf.as_dtype(message.dtype).name
    assert same(tfr.parse_tensor(serialized, name), tf_parse(serialized, name))


def test_both_refuse_a_dtype_other_than_the_stored_one() -> None:
    data = tfr.serialize_tensor(np.zeros(2, np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Type mismatch"):
        tf.io.parse_tensor(data, tf.int32)
    with pytest.raises(tfr.DecodeError, match=r"expected dtype int32 \(DT_INT32\), found float32 \(DT_FLOAT\)"):
        tfr.parse_tensor(data, tf.int32)


@pytest.mark.parametrize(
    "fields",
    [{"int64_val": [5]}, {"float_val": [1.0, 2.0, 3.0]}, {"float_val": [1.0], "tensor_content": b"\0" * 8}],
    ids=["another dtype's field", "more values than the shape", "typed values beside tensor_content"],
)
def test_parts_tensorflow_ignores_are_errors(fields: dict[str, Any]) -> None:
    # TensorFlow reads these malformed protos by ignoring some of their values; parse_tensor refuses.
    serialized = fill_proto(tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT), [2], fields)
    assert tf_parse(serialized, "float32").shape == (2,)
    with pytest.raises(tfr.DecodeError):
        tfr.parse_tensor(serialized, "float32")


def fields_of(descriptor: Any) -> list[tuple[Any, ...]]:
    return sorted((f.number, f.name, f.type, f.is_repeated, f.is_packed) for f in descriptor.fields)


def test_tensor_messages_have_tensorflows_fields_under_our_own_package() -> None:
    ours, theirs = tfr.TensorProto.DESCRIPTOR, tensor_pb2.TensorProto.DESCRIPTOR
    assert ours.full_name == "tfrecord_lite.TensorProto" and theirs.full_name == "tensorflow.TensorProto"
    left_out = {"resource_handle_val", "variant_val"}
    assert fields_of(ours) == [f for f in fields_of(theirs) if f[1] not in left_out]
    shape = ours.fields_by_name["tensor_shape"].message_type
    assert fields_of(shape) == fields_of(tensor_shape_pb2.TensorShapeProto.DESCRIPTOR)
    assert fields_of(shape.nested_types_by_name["Dim"]) == fields_of(tensor_shape_pb2.TensorShapeProto.Dim.DESCRIPTOR)
    enum = ours.fields_by_name["dtype"].enum_type
    theirs_enum = {v.name: v.number for v in types_pb2.DataType.DESCRIPTOR.values if not v.name.endswith("_REF")}
    assert {v.name: v.number for v in enum.values} == theirs_enum
