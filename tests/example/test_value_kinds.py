"""Encoding keeps kinds: every accepted value is written with the kind the values table of
docs/errors-and-values.md promises (checked with the protobuf runtime) and comes back exactly
(floats through float32), or encoding raises a FeatureError naming the feature."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tfrecord_lite as tfr

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
I64 = st.integers(INT64_MIN, INT64_MAX)
BIG = st.one_of(st.integers(INT64_MAX + 1, 2**70), st.integers(-(2**70), INT64_MIN - 1))
FLOATS = st.floats(allow_nan=True, allow_infinity=True)
TEXT = st.one_of(st.binary(max_size=12), st.text(max_size=6))

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


# The model: (value, kind, expected decoded values), built from the documented table alone.
def as_int64(values: list[Any]) -> tuple[str, np.ndarray]:
    return "int64_list", np.array([int(v) for v in values], dtype=np.int64)


def as_float32(values: list[Any]) -> tuple[str, np.ndarray]:
    with np.errstate(over="ignore"):
        return "float_list", np.array([float(v) for v in values], dtype=np.float64).astype(np.float32)


def as_bytes(values: list[Any]) -> tuple[str, list[bytes]]:
    return "bytes_list", [v.encode() if isinstance(v, str) else bytes(v) for v in values]


def case(value: Any, model: tuple[str, Any]) -> tuple[Any, str, Any]:
    return (value, *model)


def int_array(dtype: str) -> st.SearchStrategy[np.ndarray]:
    elements = st.integers(0, INT64_MAX) if dtype == "uint64" else None  # uint64 above int64: see the error tests
    return hnp.arrays(dtype, SHAPES, elements=elements)


def numpy_scalar(dtype: str) -> st.SearchStrategy[Any]:
    return hnp.from_dtype(np.dtype(dtype)).filter(lambda v: dtype != "uint64" or v <= INT64_MAX)


scalars = st.one_of(
    I64.map(lambda v: case(v, as_int64([v]))),
    st.booleans().map(lambda v: case(v, as_int64([v]))),
    FLOATS.map(lambda v: case(v, as_float32([v]))),
    TEXT.map(lambda v: case(v, as_bytes([v]))),
    st.sampled_from(INT_DTYPES + ["bool"]).flatmap(numpy_scalar).map(lambda v: case(v, as_int64([v]))),
    st.sampled_from(FLOAT_DTYPES).flatmap(numpy_scalar).map(lambda v: case(v, as_float32([v]))),
    st.binary(max_size=8).map(lambda v: case(np.bytes_(v.rstrip(b"\0")), as_bytes([v.rstrip(b"\0")]))),
    st.text(max_size=5).map(lambda v: case(np.str_(v.rstrip("\0")), as_bytes([v.rstrip("\0")]))),
)

lists = st.one_of(
    st.lists(st.one_of(I64, st.booleans()), min_size=1, max_size=20).map(lambda v: case(v, as_int64(v))),
    # numbers with at least one float among them: a float_list, every value rounded to float32
    st.tuples(st.lists(st.one_of(I64, BIG, st.booleans(), FLOATS), max_size=10), FLOATS, st.integers(0, 10)).map(
        lambda t: (lambda v: case(v, as_float32(v)))(t[0][: t[2]] + [t[1]] + t[0][t[2] :])
    ),
    st.lists(TEXT, min_size=1, max_size=8).map(lambda v: case(v, as_bytes(v))),
    st.lists(TEXT, min_size=1, max_size=8).map(lambda v: case(tuple(v), as_bytes(v))),
)


def _has_surrogate(a: np.ndarray) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for text in a.ravel().tolist() for c in text)


arrays = st.one_of(
    st.sampled_from(INT_DTYPES + ["bool"]).flatmap(int_array).map(lambda a: case(a, as_int64(a.ravel().tolist()))),
    st.sampled_from(FLOAT_DTYPES + ["longdouble"])
    .flatmap(lambda d: hnp.arrays(d, SHAPES))
    .map(lambda a: case(a, as_float32(a.ravel().tolist()))),
    # lone surrogates fit a numpy str array but are no text UTF-8 can encode: leave them out
    hnp.arrays(hnp.unicode_string_dtypes(max_len=4), SHAPES)
    .filter(lambda a: not _has_surrogate(a))
    .map(lambda a: case(a, as_bytes(a.ravel().tolist()))),
    hnp.arrays(hnp.byte_string_dtypes(max_len=4), SHAPES).map(lambda a: case(a, as_bytes(a.ravel().tolist()))),
    st.lists(st.one_of(I64, st.booleans()), min_size=1, max_size=8).map(
        lambda v: case(np.array(v, dtype=object), as_int64(v))
    ),
    st.lists(TEXT, max_size=8).map(lambda v: case(np.array(v, dtype=object), as_bytes(v))),
)

accepted = st.one_of(scalars, lists, arrays)


def read_back(features: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """Write one Example to a real file and read it back."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "values.tfrecord"
        with tfr.TFRecordWriter(path) as writer:
            writer.write_example(features)
        (record,) = tfr.iter_records(path)
    return record, tfr.decode_example(record)


def same_values(found: Any, expected: Any) -> bool:
    if isinstance(expected, list):
        return found == expected
    if expected.dtype == np.float32:  # bit for bit, NaN payloads included
        return found.dtype == np.float32 and found.view(np.uint32).tolist() == expected.view(np.uint32).tolist()
    return found.dtype == expected.dtype and found.tolist() == expected.tolist()


@given(st.dictionaries(st.text(max_size=6), accepted, max_size=5))
def test_every_accepted_value_keeps_its_kind_and_round_trips(cases):
    record, decoded = read_back({key: value for key, (value, _, _) in cases.items()})
    message = tfr.Example.FromString(record).features.feature
    for key, (_, kind, expected) in cases.items():
        assert message[key].WhichOneof("kind") == kind, key
        assert same_values(decoded[key], expected), (key, decoded[key], expected)


@given(st.lists(accepted, min_size=1, max_size=4))
def test_feature_list_steps_keep_their_kinds(steps):
    record = tfr.encode_sequence_example({}, {"steps": [value for value, _, _ in steps]})
    found = tfr.SequenceExample.FromString(record).feature_lists.feature_list["steps"].feature
    _, lists = tfr.decode_sequence_example(record)
    for i, (_, kind, expected) in enumerate(steps):
        assert found[i].WhichOneof("kind") == kind
        assert same_values(lists["steps"][i], expected)


# An int that cannot be an int64, among ints and bools only: never a float, always an error.
out_of_range_lists = st.tuples(st.lists(st.one_of(I64, st.booleans()), max_size=8), BIG, st.integers(0, 8)).map(
    lambda t: t[0][: t[2]] + [t[1]] + t[0][t[2] :]
)


@given(out_of_range_lists)
def test_int_lists_outside_int64_raise_instead_of_becoming_floats(values):
    with pytest.raises(tfr.FeatureError, match="outside the int64 range") as info:
        tfr.encode_example({"ids": values})
    assert info.value.key == "ids"
    with pytest.raises(tfr.FeatureError, match=r"'ids'.*outside the int64 range"):
        tfr.encode_sequence_example({}, {"ids": [[1], values]})


@pytest.mark.parametrize(
    "value",
    [
        [1, 2**63],
        [-1, 2**63 - 1, 2**63],
        [2**63],
        [-1, 2**64],
        [True, -(2**63) - 1],
        np.array([1, 2**63], dtype=np.uint64),
        np.array([1, 2**63], dtype=object),
        np.uint64(2**63),
    ],
)
def test_the_reported_silent_conversions_now_raise(value):
    with pytest.raises(tfr.FeatureError, match=r"feature 'v': integer -?\d+ is outside the int64 range"):
        tfr.encode_example({"v": value})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1, b"x"], "mixed list of bytes, int"),
        ([1.5, "a"], "mixed list of float, str"),
        ([1, None], "mixed list of NoneType, int"),
        (np.array([1, 2.5, b"x"], dtype=object), "mixed list of bytes, float, int"),
        ([10**400, 1.5], r"integer 100000000000\.\.\.000000 \(401 digits\) in a list of floats is too large"),
        ([[1], [2, 3]], "nested or ragged"),
        (np.array([np.datetime64("2020-01-01")]), "dtype datetime64"),
        (np.array([1 + 2j]), "dtype complex128"),
        ({1, 2}, "cannot encode a value of type set"),
    ],
)
def test_values_without_a_kind_raise_naming_the_feature(value, message):
    with pytest.raises(tfr.FeatureError, match=message) as info:
        tfr.encode_example({"v": value})
    assert info.value.key == "v"


def test_floats_beyond_float32_become_infinities_as_in_protobuf():
    values = [1e300, -1e300, 2**200]
    decoded = tfr.decode_example(tfr.encode_example({"f": values + [0.5]}))["f"]
    reference = tfr.FloatList(value=values + [0.5]).value
    assert decoded.tolist() == list(reference) == [np.inf, -np.inf, np.inf, 0.5]
