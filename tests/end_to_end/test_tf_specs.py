"""TensorFlow as the oracle for SparseFeature, TensorFlow's own spec objects, default values and
decode_raw(fixed_length=): the spec objects are tf.io's, passed to TensorFlow's parser and to ours.

Skipped as a whole without TensorFlow. Among entries with equal indices TensorFlow's order is
unspecified (its sort is not stable past 16 entries), ours is the record's: those runs are
compared as multisets, and in order where there are at most 16 entries.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tf = pytest.importorskip("tensorflow")

import tfrecord_lite as tfr
from tests.example.test_sparse import encode, sparse_records

pytestmark = pytest.mark.tf

TF_DTYPES = {"int64": tf.int64, "float32": tf.float32, "bytes": tf.string}
TF_ERRORS = (tf.errors.InvalidArgumentError, ValueError, TypeError)


def tf_spec(spec: tfr.SparseFeature) -> Any:
    keys = spec.index_key if isinstance(spec.index_key, str) else list(spec.index_key)
    size = spec.size if isinstance(spec.size, int) else list(spec.size)
    return tf.io.SparseFeature(keys, spec.value_key, TF_DTYPES[spec.dtype], size, spec.already_sorted)


def runs(indices: list[list[int]], values: list[Any]) -> list[tuple[Any, list[Any]]]:
    """(index, the values there, sorted): one run per index, in order."""
    pairs = zip(map(tuple, indices), values, strict=True)
    return [(index, sorted(v for _, v in run)) for index, run in itertools.groupby(pairs, key=lambda p: p[0])]


def assert_same(ours: tfr.Sparse, theirs: Any) -> None:
    assert ours.indices.dtype == np.int64 and ours.dense_shape.dtype == np.int64
    assert ours.indices.tolist() == theirs.indices.numpy().tolist()
    assert ours.dense_shape.tolist() == theirs.dense_shape.numpy().tolist()
    values = theirs.values.numpy()
    if values.dtype == object:
        assert isinstance(ours.values, list)
    else:
        assert ours.values.dtype == values.dtype
    assert runs(ours.indices.tolist(), list(ours.values)) == runs(ours.indices.tolist(), list(values))
    if len(values) <= 16:  # TensorFlow's sort of so few entries is an insertion sort: stable, as ours
        assert list(ours.values) == list(values)


@given(sparse_records())
@settings(max_examples=60)
def test_sparse_features_decode_as_tensorflow_parses_them(case: Any) -> None:
    spec, records = case
    theirs_spec = {"s": tf_spec(spec)}
    data = [encode(r, spec.dtype) for r in records]
    for raw in data:
        theirs = tf.io.parse_single_example(raw, theirs_spec)["s"]
        assert_same(tfr.decode_example(raw, theirs_spec)["s"], theirs)
        assert_same(tfr.decode_example(raw, {"s": spec})["s"], theirs)
    if data:  # TensorFlow cannot parse an empty batch of SparseFeatures
        theirs = tf.io.parse_example(data, theirs_spec)["s"]
        assert_same(tfr.decode_examples(data, theirs_spec)["s"], theirs)
        assert_same(tfr.decode_examples(data, {"s": spec})["s"], theirs)


def test_to_dense_is_tensorflows_dense() -> None:
    spec = tf.io.SparseFeature(["i", "j"], "v", tf.float32, [3, 4])
    data = [tfr.encode_example({"i": [2, 0, 1], "j": [3, 1, 0], "v": np.array([1, 2, 3], np.float32)})] * 2
    ours = tfr.decode_examples(data, {"s": spec})["s"]
    theirs = tf.io.parse_example(data, {"s": spec})["s"]
    assert np.array_equal(ours.to_dense(), tf.sparse.to_dense(theirs).numpy())
    assert np.array_equal(ours.to_dense(7), tf.sparse.to_dense(theirs, default_value=7.0).numpy())


@pytest.mark.parametrize(
    ("features", "spec"),
    [
        ({"i": [0, 1], "v": [1.0]}, tf.io.SparseFeature("i", "v", tf.float32, 3)),
        ({"i": [0]}, tf.io.SparseFeature("i", "v", tf.float32, 3)),
        ({"v": [1.0]}, tf.io.SparseFeature("i", "v", tf.float32, 3)),
        ({"i": [0], "j": [0, 1], "v": [1.0]}, tf.io.SparseFeature(["i", "j"], "v", tf.float32, [3, 3])),
        ({"i": [0.5], "v": [1.0]}, tf.io.SparseFeature("i", "v", tf.float32, 3)),
        ({"i": [0], "v": [1]}, tf.io.SparseFeature("i", "v", tf.float32, 3)),
    ],
)
def test_records_tensorflow_refuses_are_feature_errors(features: dict[str, Any], spec: Any) -> None:
    record = tfr.encode_example(
        {k: np.array(v, np.float32) if isinstance(v[0], float) else v for k, v in features.items()}
    )
    with pytest.raises(TF_ERRORS):
        tf.io.parse_single_example(record, {"s": spec})
    with pytest.raises(tfr.FeatureError, match="feature 's'"):
        tfr.decode_example(record, {"s": spec})
    with pytest.raises(tfr.FeatureError, match="feature 's'"):
        tfr.decode_examples([record], {"s": spec})


@pytest.mark.parametrize(
    "extra",
    [
        {"i": tf.io.FixedLenFeature([1], tf.int64)},
        {"v": tf.io.VarLenFeature(tf.int64)},
        {"v": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True)},
    ],
)
def test_specs_tensorflow_refuses_are_refused(extra: dict[str, Any]) -> None:
    features = {"s": tf.io.SparseFeature("i", "v", tf.float32, 3), **extra}
    record = tfr.encode_example({"i": [0], "v": np.ones(1, np.float32)})
    with pytest.raises(TF_ERRORS):
        tf.io.parse_single_example(record, features)
    with pytest.raises(tfr.FeatureError):
        tfr.decode_example(record, features)


# --------------------------------------------------------------------------- tf.io spec objects

RECORD = tfr.encode_example(
    {"n": [5, 6], "s": [b"a", b"bc"], "f": np.arange(6, dtype=np.float32), "one": [b"x"], "v": np.ones(2, np.float32)}
)


def _numpy(value: Any) -> Any:
    if isinstance(value, tf.SparseTensor):
        return value.values.numpy().tolist()
    return np.asarray(value.numpy()).tolist()


def _ours(value: Any) -> Any:
    if isinstance(value, tfr.Ragged):
        return value.values.tolist()
    if isinstance(value, list) and value and isinstance(value[0], list):
        return [v for row in value for v in row]
    return np.asarray(value).tolist() if not isinstance(value, (bytes, list)) else value


@pytest.mark.parametrize(
    ("key", "spec"),
    [
        ("n", tf.io.FixedLenFeature([2], tf.int64)),
        ("n", tf.io.FixedLenFeature([1, 2], tf.int64, default_value=[[1, 2]])),
        ("missing", tf.io.FixedLenFeature([2], tf.string, default_value=["é", b"\xff"])),
        ("missing", tf.io.FixedLenFeature([], tf.float32, default_value=2**70)),
        ("one", tf.io.FixedLenFeature([], tf.string)),
        ("s", tf.io.VarLenFeature(tf.string)),
        ("f", tf.io.VarLenFeature(tf.float32)),
        ("f", tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True)),
        ("missing", tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True, default_value=3)),
    ],
)
def test_tensorflow_spec_objects_decode_as_tensorflow_parses_them(key: str, spec: Any) -> None:
    theirs = tf.io.parse_single_example(RECORD, {key: spec})[key]
    assert _ours(tfr.decode_example(RECORD, {key: spec})[key]) == _numpy(theirs)
    batch = tf.io.parse_example([RECORD, RECORD], {key: spec})[key]
    assert _ours(tfr.decode_examples([RECORD, RECORD], {key: spec})[key]) == _numpy(batch)


# --------------------------------------------------------------------------- default values

# Deliberately stricter than TensorFlow: a float default for an int64 feature (TensorFlow truncates
# numpy floats) and a numpy uint64 beyond int64 (TensorFlow wraps it) are refused.
DEFAULTS = [
    ([2], tf.string, ["é", b"\xff"]),
    ([2, 2], tf.string, [["a", b"b"], [b"c", "d"]]),
    ([2], tf.string, np.array(["a", "é"])),
    ([], tf.string, np.bytes_(b"ab")),
    ([], tf.string, np.str_("é")),
    ([], tf.string, 5),
    ([2], tf.string, [b"a", 1]),
    ([], tf.float32, 2**70),
    ([2], tf.float32, [2**70, 2.5]),
    ([2], tf.float32, [[1, 2**70]]),
    ([], tf.float32, np.uint64(2**64 - 1)),
    ([], tf.float32, np.array(2**70, dtype=object)),
    ([], tf.float32, 10**400),
    ([], tf.float32, "1.5"),
    ([2], tf.float32, [1, "a"]),
    ([], tf.float32, True),
    ([], tf.float32, np.float16(1.5)),
    ([2, 1], tf.float32, [1, 2]),
    ([], tf.int64, 2**63 - 1),
    ([], tf.int64, -(2**63)),
    ([], tf.int64, 2**63),
    ([2], tf.int64, [1, 2**64]),
    ([], tf.int64, 3.5),
    ([], tf.int64, np.bool_(True)),
    ([], tf.int64, np.int32(5)),
    ([2], tf.int64, [True, 2]),
]


@pytest.mark.parametrize(("shape", "dtype", "default"), DEFAULTS, ids=[repr(d)[:30] for *_, d in DEFAULTS])
def test_default_values_are_tensorflows(shape: list[int], dtype: Any, default: Any) -> None:
    record = tfr.encode_example({"other": [1]})
    try:
        theirs = tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature(shape, dtype, default)})["x"].numpy()
    except (*TF_ERRORS, OverflowError):
        with pytest.raises(ValueError, match="default_value"):
            tfr.FixedLenFeature(shape, dtype, default)
        return
    ours = tfr.decode_example(record, {"x": tfr.FixedLenFeature(shape, dtype, default)})["x"]
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert np.asarray(ours).tolist() == np.asarray(theirs).tolist()


# --------------------------------------------------------------------------- decode_raw(fixed_length=)

# float16 has no DecodePaddedRaw kernel in TensorFlow (ours decodes it all the same)
RAW_DTYPES = ["float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "int64"]


@given(
    st.sampled_from(RAW_DTYPES),
    st.lists(st.binary(max_size=20), min_size=1, max_size=4),
    st.integers(1, 4),
    st.booleans(),
)
@settings(max_examples=60)
def test_decode_raw_fixed_length_is_tensorflows(dtype: str, values: list[bytes], items: int, little: bool) -> None:
    length = np.dtype(dtype).itemsize * items
    theirs = tf.io.decode_raw(values, getattr(tf, dtype), little_endian=little, fixed_length=length).numpy()
    ours = tfr.decode_raw(values, dtype, little_endian=little, fixed_length=length)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert ours.tobytes() == theirs.tobytes()
    one = tfr.decode_raw(values[0], dtype, little_endian=little, fixed_length=length)
    assert one.tobytes() == tf.io.decode_raw(values[0], getattr(tf, dtype), little, length).numpy().tobytes()


@pytest.mark.parametrize("length", [0, -2, 3, 5])
def test_decode_raw_refuses_the_fixed_lengths_tensorflow_refuses(length: int) -> None:
    with pytest.raises(TF_ERRORS):
        tf.io.decode_raw([b"\x01\x00"], tf.int16, fixed_length=length)
    with pytest.raises(ValueError, match="fixed_length"):
        tfr.decode_raw([b"\x01\x00"], "int16", fixed_length=length)
