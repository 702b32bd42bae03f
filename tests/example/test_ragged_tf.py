"""RaggedFeature against TensorFlow: random partitions of every kind (nested, uniform, empty rows,
no values), every dtype, decoded one record and a batch at a time, compared value for value and
split for split with tf.io.parse_single_example / tf.io.parse_example."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr

KINDS = ("splits", "lengths", "starts", "limits", "rowids", "uniform")
DTYPES = {"int64": tf.int64, "float32": tf.float32, "bytes": tf.string}


@st.composite
def layouts(draw: Any) -> tuple[list[tuple[str, int]], str, str]:
    """Partitions (kind, uniform length), outermost first; the dtype; row_splits_dtype."""
    depth = draw(st.integers(0, 3))
    parts = [(draw(st.sampled_from(KINDS)), draw(st.integers(1, 3))) for _ in range(depth)]
    return parts, draw(st.sampled_from(sorted(DTYPES))), draw(st.sampled_from(["int32", "int64"]))


def _record(draw: Any, parts: list[tuple[str, int]], dtype: str) -> bytes:
    """One Example whose partition features fit its values: drawn from the outermost rows in."""
    features: dict[str, Any] = {}
    items = draw(st.integers(0, 3))  # rows of the outermost partition
    for level, (kind, k) in enumerate(parts):
        if kind == "uniform":
            lengths = [k] * items
        else:
            lengths = draw(st.lists(st.integers(0, 3), min_size=items, max_size=items))
            if kind == "rowids" and lengths and lengths[-1] == 0:
                lengths[-1] = 1  # row ids cannot say that the last rows are empty
        ends = np.cumsum([0, *lengths]).tolist()
        encoded = {
            "splits": ends,
            "lengths": lengths,
            "starts": ends[:-1],
            "limits": ends[1:],
            "rowids": np.repeat(np.arange(items), lengths).tolist(),
        }.get(kind)
        if encoded is not None and (encoded or draw(st.booleans())):  # an empty one is sometimes left out
            features[f"p{level}"] = np.array(encoded, dtype=np.int64)
        items = int(sum(lengths))
    if dtype == "bytes" and (items or draw(st.booleans())):
        features["v"] = np.array([bytes([65 + i % 26]) * (i % 3) for i in range(items)], dtype=object)
    elif items or draw(st.booleans()):
        features["v"] = (np.arange(items) * (1.5 if dtype == "float32" else 7)).astype(dtype)
    features.setdefault("other", np.array([1], np.int64))
    return tfr.encode_example(features)


def _specs(parts: list[tuple[str, int]], dtype: str, splits: str) -> tuple[Any, Any]:
    def partitions(ns: Any) -> list[Any]:
        names = {
            "splits": "RowSplits",
            "lengths": "RowLengths",
            "starts": "RowStarts",
            "limits": "RowLimits",
            "rowids": "ValueRowIds",
        }
        return [
            ns.UniformRowLength(k) if kind == "uniform" else getattr(ns, names[kind])(f"p{level}")
            for level, (kind, k) in enumerate(parts)
        ]

    ours = tfr.RaggedFeature(dtype, value_key="v", partitions=partitions(tfr.RaggedFeature), row_splits_dtype=splits)
    theirs = tf.io.RaggedFeature(
        DTYPES[dtype],
        value_key="v",
        partitions=partitions(tf.io.RaggedFeature),
        row_splits_dtype=getattr(tf, splits),
    )
    return ours, theirs


def _same(ours: Any, theirs: Any, splits: str) -> None:
    if isinstance(theirs, tf.RaggedTensor):
        assert isinstance(ours, tfr.Ragged)
        assert ours.to_list() == theirs.to_list()
        assert ours.ragged_rank == theirs.ragged_rank
        assert [s.tolist() for s in ours.nested_row_splits] == [s.numpy().tolist() for s in theirs.nested_row_splits]
        assert all(s.dtype == np.dtype(splits) for s in ours.nested_row_splits)
        assert ours.flat_values.shape == tuple(theirs.flat_values.shape)
    else:
        mine = ours if isinstance(ours, list) else ours.tolist()
        assert mine == theirs.numpy().tolist()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), layouts())
def test_one_record_as_parse_single_example(data: Any, layout: Any) -> None:
    parts, dtype, splits = layout
    record = _record(data.draw, parts, dtype)
    ours, theirs = _specs(parts, dtype, splits)
    expected = tf.io.parse_single_example(record, {"x": theirs})["x"]
    _same(tfr.decode_example(record, {"x": ours})["x"], expected, splits)
    _same(tfr.decode_example(record, {"x": theirs})["x"], expected, splits)  # TensorFlow's spec object too


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), layouts(), st.integers(0, 6))
def test_a_batch_as_parse_example(data: Any, layout: Any, n: int) -> None:
    parts, dtype, splits = layout
    records = [_record(data.draw, parts, dtype) for _ in range(n)]
    ours, theirs = _specs(parts, dtype, splits)
    if not n:
        got = tfr.decode_examples(records, {"x": ours})["x"]
        ragged = list(parts)
        while ragged and ragged[-1][0] == "uniform":  # innermost uniform lengths are dense dimensions
            ragged.pop()
        assert got.to_list() == [] and got.ragged_rank == len(ragged) + 1
        return
    expected = tf.io.parse_example(records, {"x": theirs})["x"]
    _same(tfr.decode_examples(records, {"x": ours})["x"], expected, splits)
    # the same records among many, so that the batch parser's layout matching takes them too
    many = tfr.decode_examples(records * 20, {"x": ours})["x"]
    assert many.to_list() == expected.to_list() * 20


def test_documented_example_and_inconsistent_partitions_as_tensorflow() -> None:
    first = tfr.encode_example({"v": np.array([3, 1, 4, 1, 5, 9]), "s1": np.array([0, 2, 3, 3, 6])})
    spec = {"x": tf.io.RaggedFeature(tf.int64, value_key="v", partitions=[tf.io.RaggedFeature.RowSplits("s1")])}
    assert tfr.decode_examples([first], spec)["x"].to_list() == tf.io.parse_example([first], spec)["x"].to_list()
    short = tfr.encode_example({"v": np.array([1, 2, 3]), "s1": np.array([0, 2])})
    checked = {"x": tf.io.RaggedFeature(tf.int64, "v", [tf.io.RaggedFeature.RowSplits("s1")], validate=True)}
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.parse_single_example(short, checked)
    with pytest.raises(tfr.FeatureError, match=r"'x'.*end at 2, but there are 3 values"):
        tfr.decode_example(short, checked)
