"""decode_raw: packed numbers in bytes values back to arrays, with tf.io.decode_raw's rules.

The tests marked `tf` use TensorFlow as the oracle (run in the tf environment); the others
check the same rules against numpy's own tobytes(), through real TFRecord files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tfrecord_lite as tfr
from tfrecord_lite._example.raw import RAW_DTYPES

ORDERS = [True, False]


@pytest.fixture(scope="module")
def tf() -> Any:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return pytest.importorskip("tensorflow")


def stored(arr: np.ndarray, little_endian: bool) -> bytes:
    """The bytes of `arr` in the given byte order, as a writer on such a machine stores them."""
    return arr.astype(arr.dtype.newbyteorder("<" if little_endian else ">")).tobytes()


def through_file(path: Path, values: list[bytes]) -> list[bytes]:
    """Write each value as an Example's bytes feature and read the values back."""
    with tfr.TFRecordWriter(path) as writer:
        for value in values:
            writer.write_example({"raw": value})
    batch = next(tfr.iter_example_batches(path, features={"raw": tfr.FixedLenFeature([], "bytes")}))["raw"]
    return batch


arrays = st.sampled_from(RAW_DTYPES).flatmap(
    lambda d: st.tuples(st.integers(0, 4), st.integers(0, 6)).flatmap(lambda n: hnp.arrays(d, (max(n[0], 1), n[1])))
)


def same(found: np.ndarray, expected: np.ndarray) -> bool:
    return found.dtype == expected.dtype and found.shape == expected.shape and found.tobytes() == expected.tobytes()


@settings(deadline=None)  # file I/O on a shared machine
@given(arrays, st.sampled_from(ORDERS))
def test_a_batch_read_from_a_file_is_the_array_that_was_packed(tmp_path_factory, arr, little_endian):
    path = tmp_path_factory.mktemp("raw") / "raw.tfrecord"
    values = through_file(path, [stored(row, little_endian) for row in arr])
    found = tfr.decode_raw(values, arr.dtype, little_endian=little_endian)
    assert same(found, arr)
    assert found.flags.writeable and found.dtype.isnative
    for i, row in enumerate(arr):
        assert same(tfr.decode_raw(values[i], arr.dtype.name, little_endian=little_endian), row)


def test_shape_reshapes_each_value_and_nested_batches_keep_their_shape():
    image = np.arange(24, dtype=np.uint16).reshape(2, 3, 4)
    assert same(tfr.decode_raw(image.tobytes(), "uint16", shape=[2, 3, 4]), image)
    assert same(tfr.decode_raw(image.tobytes(), np.uint16, shape=(-1, 4)), image.reshape(6, 4))
    batch = [[image[0].tobytes(), image[1].tobytes()]]
    assert tfr.decode_raw(batch, "uint16").shape == (1, 2, 12)
    assert tfr.decode_raw(batch, "uint16", shape=[3, 4]).shape == (1, 2, 3, 4)
    with pytest.raises(ValueError, match=r"holds 24 uint16 numbers, which shape \[5, 5\] cannot hold"):
        tfr.decode_raw(image.tobytes(), "uint16", shape=[5, 5])


@pytest.mark.parametrize(
    ("data", "dtype", "error", "message"),
    [
        (b"abc", "uint16", ValueError, "3 bytes is not a multiple of 2, the size of uint16"),
        ([b"ab", b"abc"], "uint8", ValueError, "value 1 has 3 bytes and value 0 has 2"),
        (b"abcd", "uint32", ValueError, "cannot make 'uint32' values: use one of float16"),
        (b"abcd", "string", ValueError, "cannot make 'string' values"),
        ("text", "uint8", TypeError, "found str: encode the text first"),
        (np.arange(3), "int64", TypeError, "an array of int64: use arr.tobytes"),
        ([b"ab", 3], "uint8", TypeError, r"element \[1\] is int, not bytes"),
        (3.5, "uint8", TypeError, "found float"),
    ],
)
def test_bad_input_says_what_is_wrong(data, dtype, error, message):
    with pytest.raises(error, match=message):
        tfr.decode_raw(data, dtype)


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("float", "float32"),
        (float, "float32"),
        ("int", "int64"),
        (int, "int64"),
        ("double", "float64"),
        ("half", "float16"),
        (bool, "bool"),
        (np.int8, "int8"),
        (np.dtype("<u2"), "uint16"),
    ],
)
def test_dtype_aliases_are_the_specs_aliases(alias, name):
    assert tfr.decode_raw(bytes(8), alias).dtype == np.dtype(name)


def test_bytes_like_values_and_empty_input():
    data = np.arange(4, dtype=np.int32).tobytes()
    for value in (bytearray(data), memoryview(data), np.bytes_(data)[:16]):
        assert tfr.decode_raw(value, "int32").tolist() == [0, 1, 2, 3]
    assert tfr.decode_raw(b"", "float64").shape == (0,)
    assert tfr.decode_raw([], "float64").shape == (0, 0)
    assert tfr.decode_raw(np.array([data, data], dtype=object), "int32").shape == (2, 4)


# --------------------------------------------------------------------------- TensorFlow as the oracle


@pytest.mark.tf
@pytest.mark.parametrize("little_endian", ORDERS)
@pytest.mark.parametrize("dtype", RAW_DTYPES)
def test_matches_tensorflow_for_every_dtype_and_byte_order(tf, dtype, little_endian):
    rng = np.random.default_rng(len(dtype))
    values = [rng.integers(0, 256, 48, dtype=np.uint8).tobytes() for _ in range(5)]
    theirs = tf.io.decode_raw(values, tf.as_dtype(dtype), little_endian=little_endian).numpy()
    ours = tfr.decode_raw(values, dtype, little_endian=little_endian)
    if dtype == "bool":  # TF copies the bytes into its bools; compare truth values
        theirs = theirs.view(np.uint8) != 0
    assert same(ours, theirs)
    assert same(tfr.decode_raw(values[0], dtype, little_endian=little_endian), theirs[0])


@pytest.mark.tf
@settings(deadline=None)  # a TF op call
@given(st.sampled_from(RAW_DTYPES), st.lists(st.binary(min_size=16, max_size=16), max_size=4), st.sampled_from(ORDERS))
def test_matches_tensorflow_on_random_batches(tf, dtype, values, little_endian):
    theirs = tf.io.decode_raw(tf.constant(values, dtype=tf.string), tf.as_dtype(dtype), little_endian=little_endian)
    theirs = theirs.numpy()
    if dtype == "bool":
        theirs = theirs.view(np.uint8) != 0
    ours = tfr.decode_raw(values, dtype, little_endian=little_endian)
    assert ours.shape == theirs.shape
    assert same(ours, theirs.reshape(ours.shape))


@pytest.mark.tf
@pytest.mark.parametrize(("data", "dtype"), [(b"abc", "uint16"), ([b"ab", b"abc"], "uint8"), (b"abcde", "float32")])
def test_errors_where_tensorflow_errors(tf, data, dtype):
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.decode_raw(data, tf.as_dtype(dtype))
    with pytest.raises(ValueError, match="decode_raw: "):
        tfr.decode_raw(data, dtype)


@given(
    st.sampled_from(RAW_DTYPES),
    st.lists(st.binary(max_size=20), max_size=4),
    st.integers(1, 4),
    st.sampled_from(ORDERS),
)
@settings(max_examples=50)
def test_fixed_length_cuts_or_pads_each_value_with_zero_bytes(
    dtype: str, values: list[bytes], items: int, little_endian: bool
) -> None:
    dt = np.dtype(dtype)
    length = dt.itemsize * items
    out = tfr.decode_raw(values, dtype, little_endian=little_endian, fixed_length=length)
    assert out.shape == (len(values), items) and out.dtype == dt
    for row, value in zip(out, values, strict=True):
        fitted = value[:length].ljust(length, b"\x00")
        stored = dt if dt.kind == "b" else dt.newbyteorder("<" if little_endian else ">")
        expected = np.frombuffer(fitted, np.uint8) != 0 if dt.kind == "b" else np.frombuffer(fitted, stored)
        assert row.tobytes() == expected.astype(dt).tobytes()


@pytest.mark.parametrize(
    ("length", "error", "message"),
    [
        (0, ValueError, "greater than zero"),
        (-4, ValueError, "greater than zero"),
        (3, ValueError, "not a multiple of 2, the size of int16"),
        (2.0, TypeError, "must be an int"),
        (True, TypeError, "must be an int"),
    ],
)
def test_fixed_length_is_a_positive_multiple_of_the_item_size(length: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        tfr.decode_raw(b"\x01\x00", "int16", fixed_length=length)
