"""TensorFlow as the oracle of RaggedFeature in SequenceExamples: random records whose feature
lists hold nested rows step by step (and whose context holds nested rows as an Example does),
described by every kind of partition, decoded by tf.io.parse_sequence_example /
parse_single_sequence_example and by decode_sequence_examples / decode_sequence_example with
the same tf.io.RaggedFeature objects: the nested lists, every level's row splits (and their
dtype) and the flat values must be equal. The data is consistent (each step's partitions fit
that step's values): where they do not, TensorFlow does not check and mixes records, where we
raise (tests/example/test_sequence_ragged.py). Skipped when TensorFlow is not installed."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tf = pytest.importorskip("tensorflow")

import tfrecord_lite as tfr

pytestmark = pytest.mark.tf

RF = tf.io.RaggedFeature
DTYPES = {"int64": (tf.int64, np.int64), "float32": (tf.float32, np.float32), "bytes": (tf.string, object)}
PARTITIONS = {
    "len": RF.RowLengths,
    "spl": RF.RowSplits,
    "sta": RF.RowStarts,
    "lim": RF.RowLimits,
    "ids": RF.ValueRowIds,
}


def _values(draw: Any, dtype: str, count: int) -> np.ndarray:
    element = {"int64": st.integers(-(2**63), 2**63 - 1), "float32": st.floats(-1e6, 1e6, width=32)}.get(
        dtype, st.binary(max_size=3)
    )
    return np.array(draw(st.lists(element, min_size=count, max_size=count)), dtype=DTYPES[dtype][1])


def _ints(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


@st.composite
def step(draw: Any, dtype: str) -> dict[str, np.ndarray]:
    """One step of every list: values `v` in rows (each partition kind of them), rows grouped in
    `grp`, and values `w` in pairs."""
    lengths = _ints(draw(st.lists(st.integers(0, 3), max_size=3)))
    splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    groups = []
    rows = len(lengths)
    while rows:
        groups.append(draw(st.integers(0, rows)))
        rows -= groups[-1]
    return {
        "v": _values(draw, dtype, int(splits[-1])),
        "len": lengths,
        "spl": splits,
        "sta": splits[:-1],
        "lim": splits[1:],
        "ids": np.repeat(np.arange(len(lengths)), lengths).astype(np.int64),
        "grp": _ints(groups),
        "w": _values(draw, dtype, 2 * draw(st.integers(0, 2))),
    }


@st.composite
def cases(draw: Any) -> tuple[list[bytes], dict[str, Any], dict[str, Any]]:
    dtype = draw(st.sampled_from(list(DTYPES)))
    tf_dtype = DTYPES[dtype][0]
    splits_dtype = draw(st.sampled_from([tf.int32, tf.int64]))

    def ragged(value_key: str, *partitions: Any) -> Any:
        return RF(tf_dtype, value_key=value_key, partitions=partitions, row_splits_dtype=splits_dtype)

    records = []
    for _ in range(draw(st.integers(0, 4))):
        steps = [draw(step(dtype)) for _ in range(draw(st.integers(0, 3)))]
        lists = {key: [s[key] for s in steps] for key in (steps[0] if steps else {})}
        context = draw(step(dtype))
        records.append(tfr.encode_sequence_example({"cv": context["v"], "cl": context["len"]}, lists))
    sequence = {f"by_{p}": ragged("v", cls(p)) for p, cls in PARTITIONS.items()}
    sequence["pairs"] = ragged("w", RF.UniformRowLength(2))
    sequence["nested"] = ragged("v", RF.RowLengths("grp"), RF.RowSplits("spl"))
    sequence["v"] = RF(tf_dtype, row_splits_dtype=splits_dtype)  # no partition: steps of values
    sequence = {k: s for k, s in sequence.items() if draw(st.booleans())}
    context_specs = {"c": ragged("cv", RF.RowLengths("cl")), "cv": RF(tf_dtype, row_splits_dtype=splits_dtype)}
    return records, context_specs, sequence


def _assert_same(got: Any, want: Any) -> None:
    """Our value (a Ragged, or an array) equals TensorFlow's (a RaggedTensor, or a Tensor)."""
    if isinstance(want, tf.RaggedTensor):
        assert isinstance(got, tfr.Ragged)
        assert len(got.nested_row_splits) == len(want.nested_row_splits)
        for ours, theirs in zip(got.nested_row_splits, want.nested_row_splits, strict=True):
            assert ours.dtype == theirs.dtype.as_numpy_dtype and np.array_equal(ours, theirs.numpy())
        got_flat, want_flat = got.flat_values, want.flat_values.numpy()
    else:
        got_flat, want_flat = np.asarray(got, dtype=object if want.dtype == tf.string else None), want.numpy()
    assert got_flat.shape == want_flat.shape
    assert got_flat.tolist() == want_flat.tolist()


@settings(max_examples=60, deadline=None)
@given(cases())
def test_ragged_features_match_parse_sequence_example(case: Any) -> None:
    records, context_specs, sequence_specs = case
    serialized = tf.constant(records, dtype=tf.string, shape=[len(records)])
    want_context, want_lists, _ = tf.io.parse_sequence_example(serialized, context_specs, sequence_specs)
    context, lists, lengths = tfr.decode_sequence_examples(records, context_specs, sequence_specs)
    assert lengths == {}  # as TensorFlow's: no lengths for a RaggedFeature
    for key in context_specs:
        _assert_same(context[key], want_context[key])
    assert set(lists) == set(sequence_specs)
    for key in sequence_specs:
        _assert_same(lists[key], want_lists[key])


@settings(max_examples=40, deadline=None)
@given(cases())
def test_ragged_features_match_parse_single_sequence_example(case: Any) -> None:
    records, context_specs, sequence_specs = case
    for record in records:
        want_context, want_lists = tf.io.parse_single_sequence_example(record, context_specs, sequence_specs)
        context, lists = tfr.decode_sequence_example(record, context_specs, sequence_specs)
        for key in context_specs:
            _assert_same(context[key], want_context[key])
        for key in sequence_specs:
            _assert_same(lists[key], want_lists[key])
