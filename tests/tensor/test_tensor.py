"""serialize_tensor / parse_tensor without TensorFlow: round trips of every dtype and shape, the
typed-field encodings built with the protobuf runtime's own TensorProto, and bad input.

TensorFlow as the oracle (identical bytes both ways) is tests/end_to_end/test_tf_tensor.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tfrecord_lite as tfr
from tests import reference
from tests._tensor_reference import check_parse, repeat_last
from tests._tensors import (
    NUMERIC,
    SHAPES,
    enum_name,
    fill_proto,
    numeric_arrays,
    typed_field,
    typed_values,
)
from tfrecord_lite._tensor.codec import FILL_LIMIT, TENSOR_DTYPES

text = st.binary(max_size=6) | st.text(max_size=4)
string_arrays = SHAPES.flatmap(lambda shape: hnp.arrays(object, shape, elements=text))


def as_bytes(value: Any) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def same(found: np.ndarray, expected: np.ndarray) -> bool:
    """Same dtype, shape and bits (NaN payloads included); expected in any byte order."""
    native = expected.astype(expected.dtype.newbyteorder("="))
    return found.dtype == native.dtype and found.shape == native.shape and found.tobytes() == native.tobytes()


DATA_TYPE = tfr.TensorProto.DESCRIPTOR.fields_by_name["dtype"].enum_type


def proto(dtype: str, shape: list[int], **fields: Any) -> bytes:
    """A TensorProto built with the runtime's message class, field by field."""
    return fill_proto(tfr.TensorProto(dtype=DATA_TYPE.values_by_name[dtype].number), shape, fields)


# --------------------------------------------------------------------------- round trips


@given(numeric_arrays(), st.booleans())
def test_numeric_arrays_round_trip_in_any_byte_order_and_layout(arr: np.ndarray, reverse: bool) -> None:
    if reverse and arr.ndim:
        arr = arr[::-1]  # not contiguous: a negative stride
    data = tfr.serialize_tensor(arr)
    back = tfr.parse_tensor(data, arr.dtype)
    assert same(back, arr)
    assert back.flags.writeable and back.dtype.isnative
    message = tfr.TensorProto.FromString(data)
    assert [d.size for d in message.tensor_shape.dim] == list(arr.shape)
    assert message.tensor_content == arr.astype(arr.dtype.newbyteorder("<")).tobytes()


@given(string_arrays)
def test_strings_round_trip_as_object_arrays_of_bytes(arr: np.ndarray) -> None:
    back = tfr.parse_tensor(tfr.serialize_tensor(arr), "string")
    assert back.dtype == object and back.shape == arr.shape
    assert back.ravel().tolist() == [as_bytes(v) for v in arr.ravel().tolist()]
    assert all(type(v) is bytes for v in back.ravel().tolist())


@given(st.lists(st.binary(max_size=4), min_size=1, max_size=4))
def test_lists_of_bytes_keep_trailing_nul_bytes(values: list[bytes]) -> None:
    # np.asarray would make fixed-width bytes, which drop trailing NULs.
    values = [v + b"\x00" for v in values]
    assert tfr.parse_tensor(tfr.serialize_tensor(values), bytes).tolist() == values


def test_scalars_and_python_values() -> None:
    assert tfr.parse_tensor(tfr.serialize_tensor(b"ab"), "bytes") == np.array(b"ab", dtype=object)
    assert tfr.parse_tensor(tfr.serialize_tensor("é"), "str").item() == "é".encode()
    assert tfr.parse_tensor(tfr.serialize_tensor(np.float32(1.5)), "float").shape == ()
    assert tfr.parse_tensor(tfr.serialize_tensor([[1, 2]]), "int64").tolist() == [[1, 2]]
    assert tfr.parse_tensor(tfr.serialize_tensor(np.array(["a", "bc"])), str).tolist() == [b"a", b"bc"]


def test_a_bool_array_holding_other_bytes_is_written_as_0_and_1() -> None:
    odd = np.array([0, 1, 2, 255], np.uint8).view(bool)
    data = tfr.serialize_tensor(odd)
    assert tfr.TensorProto.FromString(data).tensor_content == b"\x00\x01\x01\x01"
    assert tfr.parse_tensor(data, bool).tolist() == [False, True, True, True]


# --------------------------------------------------------------------------- typed fields


@given(st.sampled_from(TENSOR_DTYPES), st.data())
def test_typed_fields_with_fewer_values_repeat_the_last(name: str, data: st.DataObject) -> None:
    shape = data.draw(SHAPES)
    values = data.draw(typed_values(name, data.draw(st.integers(0, int(np.prod(shape))))))
    expected = repeat_last(values, shape)
    found = tfr.parse_tensor(proto(enum_name(name), list(shape), **typed_field(name, values)), name)
    assert found.dtype == expected.dtype and found.tolist() == expected.tolist()


def test_typed_fields_narrower_than_int32_wrap_as_in_tensorflow() -> None:
    assert tfr.parse_tensor(proto("DT_INT8", [2], int_val=[-1, 300]), "int8").tolist() == [-1, 44]
    assert tfr.parse_tensor(proto("DT_UINT8", [2], int_val=[255, -1]), "uint8").tolist() == [255, 255]
    assert tfr.parse_tensor(proto("DT_HALF", [1], half_val=[0x13C00]), "half").tolist() == [1.0]


def test_strings_in_tensor_content_are_varint_lengths_then_bytes() -> None:
    assert tfr.parse_tensor(proto("DT_STRING", [2], tensor_content=b"\x02\x01abc"), "string").tolist() == [b"ab", b"c"]
    with pytest.raises(tfr.DecodeError, match="lengths of its 2 strings add up to 5"):
        tfr.parse_tensor(proto("DT_STRING", [2], tensor_content=b"\x02\x01abcd"), "string")
    with pytest.raises(tfr.DecodeError, match="too few for 9 strings"):
        tfr.parse_tensor(proto("DT_STRING", [9], tensor_content=b"\x02\x01abc"), "string")


# --------------------------------------------------------------------------- protobuf's rules


def key(number: int, wire: int) -> bytes:
    return bytes([number << 3 | wire]) if number < 16 else bytes([(number << 3 | wire) & 0x7F | 0x80, number >> 4])


def ld(number: int, payload: bytes) -> bytes:
    return key(number, 2) + bytes([len(payload)]) + payload


def dim(*sizes: int) -> bytes:
    return ld(2, b"".join(key(1, 0) + bytes([size]) for size in sizes))


def f32(*values: float) -> bytes:
    return np.array(values, "<f4").tobytes()


FLOAT = key(1, 0) + b"\x01"
WIRE_CASES = {
    "shape fields merge": (FLOAT + ld(2, dim(2)) + ld(2, dim(1)) + ld(5, f32(1, 2)), [[1], [2]]),
    "unpacked floats": (FLOAT + ld(2, dim(2)) + key(5, 5) + f32(1) + key(5, 5) + f32(2), [1, 2]),
    "the last dtype": (key(1, 0) + b"\x03" + FLOAT + ld(5, f32(7)), 7),
    "unknown fields": (FLOAT + key(3, 0) + b"\x07" + key(111, 0) + b"\x05" + ld(111, b"ab") + ld(5, f32(1)), 1),
    "a known field of another wire type": (FLOAT + key(4, 0) + b"\x05" + ld(5, f32(3)), 3),
    "the last tensor_content": (FLOAT + ld(2, dim(1)) + ld(4, f32(1)) + ld(4, f32(2)), [2]),
    "the last size of a dim": (FLOAT + ld(2, dim(5, 2)) + ld(5, f32(1, 2)), [1, 2]),
}


@pytest.mark.parametrize("case", sorted(WIRE_CASES))
def test_fields_are_read_by_protobufs_rules(case: str) -> None:
    data, expected = WIRE_CASES[case]
    assert same(tfr.parse_tensor(data, "float32"), np.array(expected, np.float32))
    if reference.SOUND_ON_MALFORMED_INPUT:
        check_parse(data, runtime=True)


def test_packed_and_unpacked_varints_add_up() -> None:
    data = key(1, 0) + b"\x09" + ld(2, dim(3)) + ld(10, b"\x01\x02") + key(10, 0) + b"\x7f"
    assert tfr.parse_tensor(data, "int64").tolist() == [1, 2, 127]


# --------------------------------------------------------------------------- bad input


def test_the_dtype_asked_for_must_be_the_stored_one() -> None:
    data = tfr.serialize_tensor(np.zeros(2, np.float32))
    with pytest.raises(tfr.DecodeError, match=r"expected dtype int32 \(DT_INT32\), found float32 \(DT_FLOAT\)"):
        tfr.parse_tensor(data, "int32")
    with pytest.raises(tfr.DecodeError, match=r"expected dtype float32 \(DT_FLOAT\), found DT_BFLOAT16"):
        tfr.parse_tensor(proto("DT_BFLOAT16", [1], half_val=[1]), "float32")
    with pytest.raises(tfr.DecodeError, match="found DataType 99"):
        tfr.parse_tensor(b"\x08\x63", "float32")
    with pytest.raises(ValueError, match="cannot make 'bfloat16' tensors: use one of bool, int8"):
        tfr.parse_tensor(data, "bfloat16")


HOSTILE = [
    (proto("DT_FLOAT", [2**30, 2**30]), "float32", "repeating the last is refused past"),
    (proto("DT_FLOAT", [2**60], float_val=[1.0]), "float32", "repeating the last is refused past"),
    (proto("DT_STRING", [2**40]), "string", "repeating the last is refused past"),
    (proto("DT_FLOAT", [2**60], tensor_content=b"\0" * 8), "float32", "holds 8 bytes, but shape"),
    (proto("DT_STRING", [2**40], tensor_content=b"\0" * 8), "string", "too few for 1099511627776 strings"),
    (proto("DT_FLOAT", [0, 2**40, 2**40]), "float32", "larger than any array can be"),
    (proto("DT_FLOAT", [2**62]), "float32", "larger than any array can be"),
    (proto("DT_FLOAT", [2, -1]), "float32", r"shape \[2, -1\] has a negative dimension"),
    (proto("DT_FLOAT", [1] * 100), "float32", "100 dimensions"),
]


@pytest.mark.parametrize(("data", "dtype", "message"), HOSTILE, ids=range(len(HOSTILE)))
def test_a_shape_the_data_cannot_fill_is_an_error_before_any_allocation(data: bytes, dtype: str, message: str) -> None:
    with pytest.raises(tfr.DecodeError, match=message):
        tfr.parse_tensor(data, dtype)


MALFORMED = [
    (proto("DT_FLOAT", [2], tensor_content=b"\0" * 12), "float32", "holds 12 bytes, but shape [2] of float32 takes 8"),
    (proto("DT_FLOAT", [0], tensor_content=b"\0" * 4), "float32", "holds 4 bytes, but shape [0] of float32 takes 0"),
    (
        proto("DT_INT64", [1], int_val=[5]),
        "int64",
        "in tensor_content or int64_val, but this one has values in int_val",
    ),
    (proto("DT_FLOAT", [1], float_val=[1, 2]), "float32", "float_val holds 2 values, more than the 1 of shape [1]"),
    (proto("DT_FLOAT", [1], float_val=[1], tensor_content=b"\0" * 4), "float32", "in tensor_content and in float_val"),
    (proto("DT_BOOL", [1], tensor_content=b"\x02"), "bool", "a byte other than 0 and 1"),
    (proto("DT_COMPLEX64", [2], scomplex_val=[1, 2, 3]), "complex64", "holds 3 numbers, not (real, imag) pairs"),
    (b"\xff\xff", "float32", "not a serialized TensorProto"),
    (b"", "float32", "found DT_INVALID"),
]


@pytest.mark.parametrize(("data", "dtype", "message"), MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_protos_say_what_is_wrong(data: bytes, dtype: str, message: str) -> None:
    with pytest.raises(tfr.DecodeError) as info:
        tfr.parse_tensor(data, dtype)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.array(["2020-01-01"], "datetime64[D]"), r"cannot write a datetime64\[D\] array"),
        (np.zeros(1, np.longdouble), "cannot write a"),
        (np.array([[b"a", 1]], dtype=object), r"element \[0, 1\] is int, not bytes or str"),
        (np.array([None], dtype=object), r"element \[0\] is NoneType"),
    ],
)
def test_serialize_refuses_what_tensorflow_cannot_hold(value: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        tfr.serialize_tensor(value)


def test_parse_takes_bytes() -> None:
    with pytest.raises(TypeError, match="takes bytes, found str"):
        tfr.parse_tensor("abc", "float32")
    with pytest.raises(TypeError, match="takes bytes, found list"):
        tfr.parse_tensor([b"abc"], "float32")
    assert tfr.parse_tensor(memoryview(tfr.serialize_tensor(np.int8(3))), "int8") == 3


def flipped(data: bytes, changes: list[tuple[int, int]], cut: int) -> bytes:
    out = bytearray(data)
    for at, value in changes:
        out[at % len(out)] = value
    return bytes(out[: len(out) - cut])


valid_tensors = numeric_arrays().map(tfr.serialize_tensor) | st.sampled_from(TENSOR_DTYPES).flatmap(
    lambda name: st.tuples(SHAPES, typed_values(name, 3)).map(
        lambda t: proto(enum_name(name), list(t[0]), **typed_field(name, t[1]))
    )
)
damaged_tensors = st.builds(
    flipped, valid_tensors, st.lists(st.tuples(st.integers(0, 99), st.integers(0, 255))), st.integers(0, 2)
)


# The protobuf runtime is the reference where it is sound on malformed input (it is not on 4.21).
@given(damaged_tensors | st.binary(max_size=48))
def test_any_bytes_give_an_array_or_a_decode_error_as_protobuf_reads_them(data: bytes) -> None:
    check_parse(data, runtime=reference.SOUND_ON_MALFORMED_INPUT)


@given(
    st.sampled_from(NUMERIC),
    st.lists(st.integers(-1, 4) | st.integers(2**31 + 1, 2**62), max_size=4),  # tiny, or past FILL_LIMIT
    st.integers(0, 3),
    st.binary(max_size=32),
)
def test_any_shape_with_any_content_gives_an_array_or_a_decode_error(
    name: str, shape: list[int], values: int, content: bytes
) -> None:
    field = typed_field(name, np.ones(values, name))
    data = proto(enum_name(name), shape, **(field if values else {"tensor_content": content}))
    try:
        found = tfr.parse_tensor(data, name)
    except tfr.DecodeError:
        return
    assert found.nbytes <= max(FILL_LIMIT, len(content))
