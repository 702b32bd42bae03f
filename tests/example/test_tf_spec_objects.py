"""TensorFlow's spec objects taken without TensorFlow, and default values converted as TensorFlow
converts them. TensorFlow's specs are namedtuples: here they are made the same way (class name and
fields as tf.io has them, a dtype object with a `.name` as tf.DType has); the tf environment checks
the real ones against TensorFlow's parser in tests/end_to_end/test_tf_specs.py."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr

FixedLenFeature = collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])
VarLenFeature = collections.namedtuple("VarLenFeature", ["dtype"])
FixedLenSequenceFeature = collections.namedtuple(
    "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"]
)
SparseFeature = collections.namedtuple("SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])


class DType:
    """What the conversion reads of a tf.DType: its name."""

    def __init__(self, name: str) -> None:
        self.name = name


INT64, FLOAT32, STRING = DType("int64"), DType("float32"), DType("string")


RECORD = tfr.encode_example({"n": [5, 6], "s": [b"a"], "f": np.ones(3, np.float32), "i": [1], "j": [2], "v": [0.5]})


@pytest.mark.parametrize(
    ("key", "theirs", "ours"),
    [
        ("n", FixedLenFeature([2], INT64, [1, 2]), tfr.FixedLenFeature([2], "int64", [1, 2])),
        ("s", FixedLenFeature([], STRING, None), tfr.FixedLenFeature([], "bytes")),
        ("s", VarLenFeature(STRING), tfr.VarLenFeature("bytes")),
        ("f", FixedLenSequenceFeature([3], FLOAT32, True, 0.5), tfr.FixedLenSequenceFeature([3], "float32", True, 0.5)),
        (
            "x",
            SparseFeature(["i", "j"], "v", FLOAT32, [3, 4], True),
            tfr.SparseFeature(["i", "j"], "v", "float32", [3, 4], True),
        ),
    ],
)
def test_a_tensorflow_spec_decodes_as_ours(key: str, theirs: Any, ours: Any) -> None:
    theirs_out = [tfr.decode_example(RECORD, {key: theirs}), tfr.decode_examples([RECORD], {key: theirs})]
    ours_out = [tfr.decode_example(RECORD, {key: ours}), tfr.decode_examples([RECORD], {key: ours})]
    assert repr(theirs_out) == repr(ours_out)


def test_a_dataset_takes_tensorflow_specs_once(tmp_path: Any) -> None:
    path = tmp_path / "a.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        w.write_example({"x": [5, 6]})
    batch = next(tfr.iter_example_batches(path, features={"x": FixedLenFeature([2], INT64, None)}))
    assert batch["x"].tolist() == [[5, 6]]


def test_other_tuples_are_not_taken_for_specs() -> None:
    lookalike = collections.namedtuple("FixedLenFeature", ["shape", "dtype"])([2], INT64)
    for spec in (lookalike, ([2], "int64"), FixedLenFeature):
        with pytest.raises(tfr.FeatureError, match="unsupported spec"):
            tfr.decode_example(tfr.encode_example({"x": [1]}), {"x": spec})


def test_a_tensorflow_spec_ours_cannot_take_names_the_feature() -> None:
    with pytest.raises(tfr.FeatureError, match="'x': FixedLenFeature from TensorFlow: unsupported dtype"):
        tfr.decode_examples([], {"x": FixedLenFeature([], DType("float64"), None)})


# --------------------------------------------------------------------------- default values


@pytest.mark.parametrize(
    ("shape", "default", "expected"),
    [
        ([2], ["é", b"\xff"], ["é".encode(), b"\xff"]),
        ([2, 2], [["a", b"b"], [b"c", "d"]], [[b"a", b"b"], [b"c", b"d"]]),
        ([], np.bytes_(b"ab"), b"ab"),
        ([], np.str_("é"), "é".encode()),
        ([2], np.array(["a", "é"]), [b"a", "é".encode()]),
    ],
)
def test_bytes_defaults_mix_str_and_bytes(shape: list[int], default: Any, expected: Any) -> None:
    value = tfr.FixedLenFeature(shape, "bytes", default_value=default).default_value
    assert (value.tolist() if isinstance(value, np.ndarray) else value) == expected
    assert type(value) is (np.ndarray if shape else bytes)


@pytest.mark.parametrize(
    "default", [2**70, 2**64, [2**70, 1], np.array(2**70, dtype=object), np.uint64(2**64 - 1), [[1, 2**70]]]
)
def test_float_defaults_take_ints_beyond_64_bits(default: Any) -> None:
    shape = list(np.shape(np.asarray(default, dtype=object)))
    value = tfr.FixedLenFeature(shape, "float32", default_value=default).default_value
    numbers = np.asarray(default, dtype=object).ravel().tolist()
    assert np.asarray(value).ravel().tolist() == [float(np.float32(float(v))) for v in numbers]


@pytest.mark.parametrize(
    ("dtype", "default", "message"),
    [
        ("int64", 2**63, "outside the int64 range"),
        ("int64", [1, 2**64], "outside the int64 range"),
        ("int64", np.uint64(2**63), "outside the int64 range"),
        ("int64", 3.0, "not an integer value"),
        ("int64", [1, "2"], "not an integer value"),
        ("float32", 10**400, "outside the float range"),
        ("float32", "1.5", "not a number"),
        ("float32", [1, b"x"], "not a number"),
        ("float32", 1 + 0j, "not a number"),
        ("bytes", [b"a", 1], "not bytes/str"),
        ("bytes", [["a"], ["b", "c"]], "one shape"),
    ],
)
def test_defaults_that_do_not_convert_are_refused(dtype: str, default: Any, message: str) -> None:
    shape = [] if np.ndim(np.asarray(default, dtype=object)) == 0 else [2]
    with pytest.raises(ValueError, match=message):
        tfr.FixedLenFeature(shape, dtype, default_value=default)
