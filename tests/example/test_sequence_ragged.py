"""RaggedFeature in SequenceExamples without TensorFlow (tests/end_to_end/test_tf_sequence_ragged.py
holds TensorFlow's word on the values): decode_sequence_examples' column is, record by record,
decode_sequence_example's value, whether a record takes the batch path or the single-record path;
feature lists whose steps disagree, or a step's partition that does not fit its values, are a
FeatureError saying where; SparseFeature stays refused in both parts, as in TensorFlow."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr

R = tfr.RaggedFeature
DTYPES = {"int64": np.int64, "float32": np.float32, "bytes": object}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        shift += 7
        if byte < 0x80:
            return value, pos


def lists_first(record: bytes) -> bytes:
    """The same SequenceExample with its feature_lists field ahead of its context: valid protobuf
    that the batch path leaves to the single-record decoder."""
    fields, pos = [], 0
    while pos < len(record):
        length, start = _varint(record, pos + 1)
        fields.append(record[pos : start + length])
        pos = start + length
    return b"".join(reversed(fields))


@st.composite
def records(draw: Any, dtype: str) -> bytes:
    """A SequenceExample with nested rows in each step of `v` (row lengths in `len`, rows grouped
    by `grp`) and in its context (`cv`, row lengths `cl`)."""
    steps = []
    for _ in range(draw(st.integers(0, 3))):
        lengths = draw(st.lists(st.integers(0, 3), max_size=3))
        groups, rows = [], len(lengths)
        while rows:
            groups.append(draw(st.integers(0, rows)))
            rows -= groups[-1]
        values = draw(st.lists(st.integers(0, 200), min_size=sum(lengths), max_size=sum(lengths)))
        steps.append((lengths, groups, values))
    context_lengths = draw(st.lists(st.integers(0, 2), max_size=3))

    def typed(values: list[int]) -> np.ndarray:
        if dtype == "bytes":
            return np.array([bytes([v % 256]) * (v % 3) for v in values], dtype=object)
        return np.array(values, dtype=DTYPES[dtype])

    lists = {
        "v": [typed(v) for _, _, v in steps],
        "len": [np.array(s, np.int64) for s, _, _ in steps],
        "grp": [np.array(g, np.int64) for _, g, _ in steps],
    }
    context = {"cv": typed(list(range(sum(context_lengths)))), "cl": np.array(context_lengths, np.int64)}
    record = tfr.encode_sequence_example(context, lists if steps else {})
    return lists_first(record) if draw(st.integers(0, 3)) == 0 else record


def _specs(dtype: str) -> tuple[dict[str, Any], dict[str, Any]]:
    context = {"c": R(dtype, value_key="cv", partitions=[R.RowLengths("cl")]), "cl": tfr.VarLenFeature("int64")}
    sequence = {
        "rows": R(dtype, value_key="v", partitions=[R.RowLengths("len")]),
        "groups": R(dtype, value_key="v", partitions=[R.RowLengths("grp"), R.RowLengths("len")]),
        "v": R(dtype),
        "len": tfr.VarLenFeature("int64"),
    }
    return context, sequence


def _plain(value: Any) -> Any:
    if isinstance(value, tfr.Ragged):
        return _plain(value.to_list())
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return bytes(value) if isinstance(value, memoryview) else value


@pytest.mark.parametrize("copy", [True, False])
@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(list(DTYPES)).flatmap(lambda d: st.tuples(st.just(d), st.lists(records(d), max_size=5))))
def test_batch_is_the_single_decoder_record_by_record(case: Any, copy: bool) -> None:
    dtype, batch = case
    context_specs, sequence_specs = _specs(dtype)
    context, lists, lengths = tfr.decode_sequence_examples(batch, context_specs, sequence_specs, copy=copy)
    assert lengths == {}
    for i, record in enumerate(batch):
        want_context, want_lists = tfr.decode_sequence_example(record, context_specs, sequence_specs)
        assert _plain(context["c"].row(i)) == _plain(want_context["c"])
        for key in ("rows", "groups", "v"):
            assert _plain(lists[key].row(i)) == _plain(want_lists[key]), key
        assert lists["v"].row(i).row_splits.dtype == np.int64  # row_splits_dtype's default
    assert len(lists["rows"].row_splits) == len(batch) + 1


def test_values_in_nested_rows_step_by_step() -> None:
    record = tfr.encode_sequence_example(
        {}, {"v": [[1, 2, 3], [4]], "len": [[2, 1], [0, 1]], "pairs": [[1, 2, 3, 4], [5, 6]]}
    )
    sequence = {
        "rows": R("int64", value_key="v", partitions=[R.RowLengths("len")]),
        "pairs": R("int64", partitions=[R.UniformRowLength(2)]),
    }
    _, lists = tfr.decode_sequence_example(record, None, sequence)
    assert lists["rows"].to_list() == [[[1, 2], [3]], [[], [4]]]
    assert lists["pairs"].to_list() == [[[1, 2], [3, 4]], [[5, 6]]]
    _, batched, _ = tfr.decode_sequence_examples([record, tfr.encode_sequence_example({}, {})], None, sequence)
    assert batched["rows"].to_list() == [[[[1, 2], [3]], [[], [4]]], []]
    assert batched["pairs"].values.values.shape == (3, 2)  # trailing uniform rows stay dense


def test_lists_with_other_steps_than_the_values_are_an_error() -> None:
    good = tfr.encode_sequence_example({}, {"v": [[1]], "len": [[1]]})
    short = tfr.encode_sequence_example({}, {"v": [[1, 2], [3]], "len": [[2]]})
    spec = {"rows": R("int64", value_key="v", partitions=[R.RowLengths("len")])}
    with pytest.raises(tfr.FeatureError, match=r"'len' has 1 steps, but 'v' has 2.*\(record 1 of the batch\)"):
        tfr.decode_sequence_examples([good, short], None, spec)
    with pytest.raises(tfr.FeatureError, match=r"'len' has 1 steps, but 'v' has 2: a RaggedFeature") as info:
        tfr.decode_sequence_example(short, None, spec)
    assert info.value.key == "rows" and "record" not in str(info.value)


def test_a_partition_that_does_not_fit_its_step_names_the_step() -> None:
    good = tfr.encode_sequence_example({}, {"v": [[1]], "len": [[1]]})
    bad = tfr.encode_sequence_example({}, {"v": [[1, 2], [3]], "len": [[1, 1], [2]]})
    spec = {"rows": R("int64", value_key="v", partitions=[R.RowLengths("len")])}
    with pytest.raises(tfr.FeatureError, match=r"row lengths \[2\] .*\(step 1 of record 1 of the batch\)"):
        tfr.decode_sequence_examples([good, bad], None, spec)
    with pytest.raises(tfr.FeatureError, match=r"row lengths \[2\] .*\(step 1\)$"):
        tfr.decode_sequence_example(bad, None, spec)


def test_a_key_read_two_ways_is_a_value_error() -> None:
    spec = {"rows": R("int64", value_key="v"), "v": tfr.FixedLenSequenceFeature([], "int64")}
    with pytest.raises(ValueError, match="a key can be read only one way"):
        tfr.decode_sequence_examples([], None, spec)


@pytest.mark.parametrize("part", ["context", "sequence"])
def test_sparse_features_stay_refused(part: str) -> None:
    sparse = {"s": tfr.SparseFeature("i", "v", "int64", 4)}
    specs = (sparse, None) if part == "context" else (None, sparse)
    record = tfr.encode_sequence_example({}, {})
    for decode in (
        lambda: tfr.decode_sequence_examples([record], *specs),
        lambda: tfr.decode_sequence_example(record, *specs),
    ):
        with pytest.raises(tfr.FeatureError, match="SparseFeature"):
            decode()


def test_iter_sequence_example_batches_takes_ragged_features(tmp_path: Any) -> None:
    batch = [
        tfr.encode_sequence_example(
            {"cv": [1, 2], "cl": [1, 1]}, {"v": [[1, 2, 3], [4]], "len": [[2, 1], [0, 1]], "grp": [[2], [1, 1]]}
        ),
        tfr.encode_sequence_example({"cv": [3], "cl": [1]}, {"v": [[5]], "len": [[1]], "grp": [[1]]}),
    ] * 3
    path = tmp_path / "sequences.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        for record in batch:
            writer.write(record)
    context_specs, sequence_specs = _specs("int64")
    batches = list(
        tfr.iter_sequence_example_batches(
            path, context_features=context_specs, sequence_features=sequence_specs, batch_size=4
        )
    )
    assert [b[1]["rows"].nrows for b in batches] == [4, 2]
    for i, (context, lists, _) in enumerate(batches):
        want_context, want_lists, _ = tfr.decode_sequence_examples(batch[4 * i : 4 * i + 4], *_specs("int64"))
        assert context["c"].to_list() == want_context["c"].to_list()
        assert lists["rows"].to_list() == want_lists["rows"].to_list()
        assert lists["groups"].to_list() == want_lists["groups"].to_list()
