"""RawFeature: an array's raw bytes as a feature. Random arrays of every dtype and shape go
through real TFRecord files and come back equal, one record at a time and as batches (a batch
is the stack of its records), through decode_example(s), iter_example_batches, Arrow and the
saved spec; a value of the wrong length is an error naming the feature, the record and both
lengths. The tests marked `tf` hold records against TensorFlow both ways: ours read by
tf.io.decode_raw, and tf.train.Example records of `arr.tobytes()` read by RawFeature."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tfrecord_lite as tfr
from tfrecord_lite._datasets.schema import features_from_json, features_to_json

DTYPES = ["uint8", "int8", "uint16", "int16", "int32", "int64", "float16", "float32", "float64", "bool"]
LABEL = tfr.FixedLenFeature([], "int64")


@pytest.fixture(scope="module")
def tf() -> Any:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return pytest.importorskip("tensorflow")


@st.composite
def batches(draw: Any) -> tuple[np.ndarray, bool]:
    """A batch of arrays of one random dtype and shape (the first dimension: the records), and a byte order."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    n = draw(st.integers(1, 6))
    arr = draw(hnp.arrays(np.dtype(dtype), (n, *shape)))
    return arr, draw(st.booleans())


def write(path: Path, spec: tfr.RawFeature, arrays: Any) -> Path:
    with tfr.TFRecordWriter(path) as writer:
        for i, arr in enumerate(arrays):
            writer.write(tfr.encode_example({"x": spec.encode(arr), "label": i}))
    return path


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=batches())
def test_random_arrays_round_trip_alone_and_in_batches(tmp_path: Path, batch: tuple[np.ndarray, bool]) -> None:
    arr, little_endian = batch
    spec = tfr.RawFeature(arr.shape[1:], arr.dtype, little_endian=little_endian)
    path = write(tmp_path / "raw.tfrecord", spec, arr)
    records = list(tfr.iter_records(path))
    singles = [tfr.decode_example(r, {"x": spec})["x"] for r in records]
    for single, expected in zip(singles, arr, strict=True):
        assert same(single, expected) and single.flags.writeable
    stacked = np.stack(singles)
    for copy in (True, False):
        assert same(tfr.decode_examples(records, {"x": spec}, copy=copy)["x"], stacked)
    read = list(tfr.iter_example_batches(path, features={"x": spec, "label": LABEL}, batch_size=4))
    assert same(np.concatenate([b["x"] for b in read]), arr)
    assert np.concatenate([b["label"] for b in read]).tolist() == list(range(len(arr)))


@settings(max_examples=40, deadline=None)
@given(batch=batches(), cut=st.integers(1, 8))
def test_a_value_of_another_length_names_the_record_and_both_lengths(batch: tuple[np.ndarray, bool], cut: int) -> None:
    arr, _ = batch
    spec = tfr.RawFeature(arr.shape[1:], arr.dtype)
    records = [tfr.encode_example({"x": spec.encode(a)}) for a in arr]
    wrong = arr[-1].tobytes() + bytes(cut)
    records[-1] = tfr.encode_example({"x": wrong})
    expected = f"expected {spec.nbytes} bytes (shape {list(spec.shape)} of {spec.dtype}), found {len(wrong)} bytes"
    with pytest.raises(
        tfr.FeatureError, match=re.escape(f"feature 'x': record {len(arr) - 1} of the batch: {expected}")
    ):
        tfr.decode_examples(records, {"x": spec})
    with pytest.raises(tfr.FeatureError, match=re.escape(expected)):
        tfr.decode_example(records[-1], {"x": spec})


def test_the_error_names_the_record_of_the_batch(tmp_path: Path) -> None:
    spec = tfr.RawFeature([2, 2], "uint8")
    path = tmp_path / "raw.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        for i in range(7):
            writer.write_example({"x": bytes(4 if i != 5 else 3)})
    with pytest.raises(tfr.FeatureError) as err:
        list(tfr.iter_example_batches(path, features={"x": spec}, batch_size=4))
    assert "record 1 of the batch: expected 4 bytes (shape [2, 2] of uint8), found 3 bytes" in str(err.value)
    assert f"records 4 to 6 of those read; the file being read: {path}" in "".join(err.value.__notes__)


def test_a_missing_value_is_an_error_as_for_a_fixed_len_feature_without_default() -> None:
    spec = tfr.RawFeature([3], "uint8")
    records = [tfr.encode_example({"x": b"abc"}), tfr.encode_example({"y": 1})]
    with pytest.raises(tfr.FeatureError, match="feature 'x': required feature is missing"):
        tfr.decode_examples(records, {"x": spec})
    two = tfr.encode_example({"x": [b"abc", b"def"]})
    with pytest.raises(tfr.FeatureError, match="feature 'x': a RawFeature is one bytes value, found 2 values"):
        tfr.decode_example(two, {"x": spec})
    with pytest.raises(tfr.FeatureError, match="found 2 values") as err:
        tfr.decode_examples([records[0], two], {"x": spec})
    assert "record 1 of the batch" in str(err.value.__notes__)
    with pytest.raises(tfr.FeatureError, match=r"expected bytes_list \(bytes\), found int64_list"):
        tfr.decode_example(tfr.encode_example({"x": 1}), {"x": spec})


def test_the_spec_is_checked_shown_and_saved() -> None:
    spec = tfr.RawFeature([2, 3], np.uint16, little_endian=False)
    assert repr(spec) == "RawFeature(shape=(2, 3), dtype='uint16', little_endian=False)"
    assert spec.nbytes == 12 and spec == tfr.RawFeature((2, 3), "uint16", False)
    assert features_from_json(features_to_json({"x": spec})) == {"x": spec}
    with pytest.raises(ValueError, match="decode_raw cannot make 'bytes'"):
        tfr.RawFeature([2], "bytes")
    with pytest.raises(ValueError, match="non-negative"):
        tfr.RawFeature([-1], "uint8")
    with pytest.raises(ValueError, match=r"shape is \[3\]"):
        spec.encode(np.zeros(3, np.uint16))
    with pytest.raises(ValueError, match="do not fit"):
        tfr.RawFeature([2], "uint8").encode([1, 300])
    assert tfr.RawFeature([2], "uint8").encode([1, 255]) == b"\x01\xff"
    assert spec.encode(np.arange(6, dtype=np.uint16).reshape(2, 3))[:2] == b"\x00\x00"
    assert spec.encode(np.arange(6, dtype=np.uint16).reshape(2, 3))[2:4] == b"\x00\x01"  # big-endian


def test_arrow_columns_are_fixed_size_lists(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    from tfrecord_lite.arrow import arrow_type, read_arrow

    arr = np.random.default_rng(0).integers(0, 255, (5, 2, 3), dtype=np.uint8)
    spec = tfr.RawFeature([2, 3], "uint8")
    table = read_arrow(write(tmp_path / "raw.tfrecord", spec, arr), features={"x": spec})
    assert table.schema.field("x").type == arrow_type(spec) == pa.list_(pa.list_(pa.uint8(), 3), 2)
    assert np.array(table.column("x").to_pylist(), dtype=np.uint8).tolist() == arr.tolist()


def test_statistics_summarise_the_arrays_numbers(tmp_path: Path) -> None:
    arr = np.arange(4 * 6, dtype=np.int16).reshape(4, 2, 3) - 5
    spec = tfr.RawFeature([2, 3], "int16")
    stats = tfr.statistics(write(tmp_path / "raw.tfrecord", spec, arr), features={"x": spec})
    (x,) = stats.features
    assert x.kind == "int64" and x.present == 4
    assert x.value_counts.min == x.value_counts.max == 6
    assert (x.numbers.min, x.numbers.max, x.numbers.count) == (-5, 18, 24)
    with pytest.raises(TypeError, match="RawFeature"):
        tfr.statistics(tmp_path / "raw.tfrecord", features={"x": LABEL})


@pytest.mark.tf
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensorflow_reads_ours_and_we_read_tensorflows(tf: Any, tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(1)
    arr = (rng.random((3, 4, 5, 2)) * 100).astype(dtype)
    spec = tfr.RawFeature([4, 5, 2], dtype)
    ours = write(tmp_path / "ours.tfrecord", spec, arr)
    parse = {"x": tf.io.FixedLenFeature([], tf.string)}
    tf_dtype = tf.as_dtype(np.dtype(dtype))
    for record, expected in zip(tf.data.TFRecordDataset(str(ours)), arr, strict=True):
        image = tf.reshape(tf.io.decode_raw(tf.io.parse_single_example(record, parse)["x"], tf_dtype), [4, 5, 2])
        assert same(image.numpy(), expected)
    theirs = tmp_path / "theirs.tfrecord"
    with tf.io.TFRecordWriter(str(theirs)) as writer:
        for a in arr:
            value = tf.train.Feature(bytes_list=tf.train.BytesList(value=[a.tobytes()]))
            writer.write(tf.train.Example(features=tf.train.Features(feature={"x": value})).SerializeToString())
    (batch,) = tfr.iter_example_batches(theirs, features={"x": spec}, batch_size=8)
    assert same(batch["x"], arr)


def test_an_empty_batch_has_the_shape_and_dtype() -> None:
    out = tfr.decode_examples([], {"x": tfr.RawFeature([2, 3], "int16")})["x"]
    assert out.shape == (0, 2, 3) and out.dtype == np.int16


@pytest.mark.parametrize("size", [100, 40_000])  # records joined, and records past the sparse threshold
def test_large_records_and_records_of_other_layouts_mix(tmp_path: Path, size: int) -> None:
    spec = tfr.RawFeature([size], "uint8")
    rng = np.random.default_rng(2)
    arrays = rng.integers(0, 256, (9, size), dtype=np.uint8)
    records = []
    for i, arr in enumerate(arrays):  # three layouts: other keys around the value, in another order
        values = {"x": arr.tobytes(), "label": i} if i % 3 else {"label": i, "pad": b"p" * i, "x": arr.tobytes()}
        records.append(tfr.encode_example(values))
    assert same(tfr.decode_examples(records, {"x": spec})["x"], arrays)
    path = tmp_path / "mixed.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    batches = tfr.iter_example_batches(path, features={"x": spec, "label": LABEL}, batch_size=4)
    assert same(np.concatenate([b["x"] for b in batches]), arrays)


def test_records_of_no_common_layout_are_read_in_lockstep_alike() -> None:
    spec = tfr.RawFeature([7], "uint8")
    rng = np.random.default_rng(3)
    arrays = rng.integers(0, 256, (64, 7), dtype=np.uint8)
    records = [
        tfr.encode_example(
            {"x": a.tobytes(), "label": int(rng.integers(0, 2**40)), "pad": b"p" * int(rng.integers(300))}
        )
        for a in arrays
    ]
    assert same(tfr.decode_examples(records, {"x": spec})["x"], arrays)
