"""RaggedFeature and nested Ragged without TensorFlow: nested lists drawn at random, written as
values plus partition features of every kind, must decode back to themselves, one record at a
time and in batches (by every path of the batch decoder, and as Arrow columns); bad partitions
are FeatureErrors naming the feature; the spec objects and TensorFlow-shaped look-alikes."""

from __future__ import annotations

import collections
import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tfrecord_lite._example.ragged_build import MAX_EMPTY_ROWS

R = tfr.RaggedFeature
KINDS = ("splits", "lengths", "starts", "limits", "rowids", "uniform")
NAMES = {"splits": R.RowSplits, "lengths": R.RowLengths, "starts": R.RowStarts, "limits": R.RowLimits}


def _encode(kind: str, lengths: list[int]) -> list[int]:
    ends = np.cumsum([0, *lengths]).tolist()
    return {
        "splits": ends,
        "lengths": lengths,
        "starts": ends[:-1],
        "limits": ends[1:],
        "rowids": np.repeat(np.arange(len(lengths)), lengths).tolist(),
    }[kind]


@st.composite
def nested(draw: Any, parts: list[tuple[str, int]], dtype: str) -> tuple[Any, dict[str, Any]]:
    """A nested list shaped by `parts` (outermost first) and the features that encode it."""
    features: dict[str, Any] = {}
    rows = draw(st.integers(0, 3))
    levels = []
    for level, (kind, k) in enumerate(parts):
        lengths = [k] * rows if kind == "uniform" else draw(st.lists(st.integers(0, 3), min_size=rows, max_size=rows))
        if kind == "rowids" and lengths and lengths[-1] == 0:
            lengths[-1] = 1
        if kind != "uniform":
            features[f"p{level}"] = np.array(_encode(kind, lengths), np.int64)
        levels.append(lengths)
        rows = sum(lengths)
    if dtype == "bytes":
        flat: list[Any] = [b"v%d" % i for i in range(rows)]
        features["v"] = np.array(flat, dtype=object)
    else:
        flat = (np.arange(rows) * 3 - 5).astype(dtype).tolist()
        features["v"] = np.array(flat, dtype=dtype)
    out: Any = flat
    for lengths in reversed(levels):
        bounds = np.cumsum([0, *lengths]).tolist()
        out = [out[a:b] for a, b in itertools.pairwise(bounds)]
    return out, features


def _spec(parts: list[tuple[str, int]], dtype: str, splits: str = "int64") -> R:
    partitions = [
        R.UniformRowLength(k) if kind == "uniform" else (R.ValueRowIds if kind == "rowids" else NAMES[kind])(f"p{i}")
        for i, (kind, k) in enumerate(parts)
    ]
    return R(dtype, value_key="v", partitions=partitions, row_splits_dtype=splits)


def _as_list(value: Any) -> Any:
    if isinstance(value, tfr.Ragged):
        return value.to_list()
    return value if isinstance(value, list) else value.tolist()


layouts = st.tuples(
    st.lists(st.tuples(st.sampled_from(KINDS), st.integers(1, 3)), max_size=3),
    st.sampled_from(["int64", "float32", "bytes"]),
)


@settings(max_examples=60, deadline=None)
@given(st.data(), layouts, st.integers(0, 5))
def test_nested_lists_come_back(data: Any, layout: Any, n: int) -> None:
    parts, dtype = layout
    drawn = [data.draw(nested(parts, dtype)) for _ in range(n)]
    records = [tfr.encode_example({**features, "pad": np.array([i])}) for i, (_, features) in enumerate(drawn)]
    spec = {"x": _spec(parts, dtype, data.draw(st.sampled_from(["int32", "int64"])))}
    expected = [value for value, _ in drawn]
    assert [_as_list(tfr.decode_example(r, spec)["x"]) for r in records] == expected
    batch = tfr.decode_examples(records, spec)["x"]
    assert isinstance(batch, tfr.Ragged) and batch.to_list() == expected
    assert all(s.dtype == np.dtype(spec["x"].row_splits_dtype) for s in batch.nested_row_splits)
    assert tfr.decode_examples(records * 20, spec)["x"].to_list() == expected * 20  # shared layouts too


def test_tensorflow_documented_example() -> None:
    first = tfr.encode_example(
        {"v": np.array([3, 1, 4, 1, 5, 9]), "s1": np.array([0, 2, 3, 3, 6]), "s2": np.array([0, 2, 3, 4])}
    )
    spec = {
        "f1": R(np.int64, value_key="v"),
        "f2": R("int", value_key="v", partitions=[R.RowSplits("s1")]),
        "f3": R(int, value_key="v", partitions=[R.RowSplits("s2"), R.RowSplits("s1")]),
    }
    one = tfr.decode_example(first, spec)
    assert one["f1"].tolist() == [3, 1, 4, 1, 5, 9]
    assert one["f2"].to_list() == [[3, 1], [4], [], [1, 5, 9]]
    assert one["f3"].to_list() == [[[3, 1], [4]], [[]], [[1, 5, 9]]]
    assert one["f3"].ragged_rank == 2 and [s.tolist() for s in one["f3"].nested_row_splits] == [
        [0, 2, 3, 4],
        [0, 2, 3, 3, 6],
    ]


def test_value_key_defaults_to_the_key_and_bytes_without_partitions_are_a_list() -> None:
    record = tfr.encode_example({"x": np.array([b"a", b"bc"], dtype=object), "n": np.array([1.5], np.float32)})
    got = tfr.decode_example(record, {"x": R("bytes"), "n": R("float32")})
    assert got["x"] == [b"a", b"bc"] and got["n"].dtype == np.float32
    batch = tfr.decode_examples([record, record], {"x": R("bytes")})["x"]
    assert batch.to_list() == [[b"a", b"bc"]] * 2


def test_uniform_innermost_reshapes_as_tensorflow() -> None:
    record = tfr.encode_example({"v": np.arange(6), "s": np.array([0, 1, 3])})
    dense = tfr.decode_example(record, {"x": R("int64", "v", [R.UniformRowLength(2)])})["x"]
    assert isinstance(dense, np.ndarray) and dense.shape == (3, 2)
    mixed = tfr.decode_example(record, {"x": R("int64", "v", [R.RowSplits("s"), R.UniformRowLength(2)])})["x"]
    assert mixed.ragged_rank == 1 and mixed.flat_values.shape == (3, 2)
    assert mixed.to_list() == [[[0, 1]], [[2, 3], [4, 5]]]
    assert repr(mixed) == "Ragged(shape=[2, None, 2], dtype=int64, rows=[[[0, 1]], [[2, 3], [4, 5]]])"


@pytest.mark.parametrize(
    ("partition", "values", "message"),
    [
        (R.RowSplits("p"), [0, 2], "end at 2, but there are 3 values"),
        (R.RowSplits("p"), [1, 3], "row splits [1, 3] must start at 0"),
        (R.RowSplits("p"), [0, 3, 2, 3], "must not decrease"),
        (R.RowSplits("p"), [], "no row splits given for 3 values"),
        (R.RowLengths("p"), [1, 1], "sum to 2, but there are 3 values"),
        (R.RowLengths("p"), [4, -1], "row lengths"),
        (R.RowStarts("p"), [0, 5], "row starts [0, 5] must be in 0..3"),
        (R.RowLimits("p"), [1, 2], "end at 2"),
        (R.ValueRowIds("p"), [0, 1], "2 row ids for 3 values"),
        (R.ValueRowIds("p"), [1, 0, 0], "must not decrease"),
        (R.ValueRowIds("p"), [0, 0, MAX_EMPTY_ROWS + 3], "row ids"),
        (R.UniformRowLength(2), None, "3 values are not a multiple of 2"),
    ],
)
@pytest.mark.parametrize("validate", [False, True])
def test_inconsistent_partitions_raise_feature_errors(
    partition: Any, values: Any, message: str, validate: bool
) -> None:
    features: dict[str, Any] = {"v": np.array([1, 2, 3])}
    if values is not None:
        features["p"] = np.array(values, np.int64)
    fits = {"v": np.array([1, 2, 3, 4]), "p": np.array(_fitting(partition), np.int64)}
    good = tfr.encode_example(fits)
    bad = tfr.encode_example(features)
    spec = {"tokens": R("int64", "v", [partition], validate=validate)}
    with pytest.raises(tfr.FeatureError, match="'tokens'") as single:
        tfr.decode_example(bad, spec)
    assert message in str(single.value)
    with pytest.raises(tfr.FeatureError, match="'tokens'") as batched:
        tfr.decode_examples([good] * 20 + [bad], spec)
    assert message in str(batched.value) and "record 20 of the batch" in str(batched.value)


def _fitting(partition: Any) -> list[int]:
    kind = {
        R.RowSplits: "splits",
        R.RowLengths: "lengths",
        R.RowStarts: "starts",
        R.RowLimits: "limits",
        R.ValueRowIds: "rowids",
    }.get(type(partition))
    return _encode(kind, [1, 3]) if kind else []


def test_partition_of_the_wrong_kind_names_its_key() -> None:
    record = tfr.encode_example({"v": np.array([1, 2]), "p": np.array([0.0, 2.0], np.float32)})
    with pytest.raises(tfr.FeatureError, match=r"'p'.*int64_list"):
        tfr.decode_example(record, {"x": R("int64", "v", [R.RowSplits("p")])})
    with pytest.raises(tfr.FeatureError, match=r"'p'.*int64_list"):
        tfr.decode_examples([record] * 3, {"x": R("int64", "v", [R.RowSplits("p")])})


def test_row_splits_dtype_int32_is_kept_in_batches() -> None:
    record = tfr.encode_example({"v": np.zeros(3, np.int64)})
    got = tfr.decode_examples([record], {"x": R("int64", "v", row_splits_dtype="int32")})["x"]
    assert got.row_splits.dtype == np.int32


def test_spec_objects() -> None:
    spec = R("string", "v", (R.RowLengths("a"), R.UniformRowLength(3)), row_splits_dtype=np.int32)
    assert spec == R(bytes, "v", [R.RowLengths("a"), R.UniformRowLength(3)], "int32")
    assert (
        spec.dtype == "bytes"
        and spec.row_splits_dtype == "int32"
        and hash(spec) == hash(R("bytes", "v", spec.partitions, "int32"))
    )
    assert R("int64").row_splits_dtype == "int64" and R("int64").partitions == ()
    for bad, error in [
        (lambda: R("int16"), ValueError),
        (lambda: R("int64", row_splits_dtype="float32"), ValueError),
        (lambda: R("int64", partitions=R.RowSplits("s")), TypeError),
        (lambda: R("int64", partitions=["s"]), TypeError),
        (lambda: R("int64", value_key=""), ValueError),
        (lambda: R("int64", validate="yes"), TypeError),
        (lambda: R.UniformRowLength(0), ValueError),
        (lambda: R.RowSplits(""), ValueError),
    ]:
        with pytest.raises(error):
            bad()
    with pytest.raises(AttributeError):
        spec.dtype = "int64"  # type: ignore[misc]


def test_keys_read_two_ways_are_refused_as_in_tensorflow() -> None:
    record = tfr.encode_example({"v": np.array([1, 2])})
    with pytest.raises(ValueError, match="'v'"):
        tfr.decode_examples([record], {"x": R("int64", "v"), "v": tfr.FixedLenFeature([2], "int64")})
    with pytest.raises(ValueError, match="'v'"):
        tfr.decode_examples([record], {"x": R("int64", "v"), "y": R("float32", "v")})
    both = tfr.decode_examples([record], {"x": R("int64", "v"), "v": R("int64")})
    assert both["x"].to_list() == both["v"].to_list() == [[1, 2]]


def test_tensorflow_shaped_specs_are_converted() -> None:
    """Objects shaped as tf.io.RaggedFeature (a namedtuple of that name, its partitions
    namedtuples), as TensorFlow's own are, without importing TensorFlow."""
    tf_ragged = collections.namedtuple("RaggedFeature", "dtype value_key partitions row_splits_dtype validate")
    row_splits = collections.namedtuple("RowSplits", "key")
    uniform = collections.namedtuple("UniformRowLength", "length")
    dtype = collections.namedtuple("DType", "name")
    theirs = tf_ragged(dtype("int64"), "v", (row_splits("s"), uniform(1)), dtype("int32"), False)
    record = tfr.encode_example({"v": np.array([1, 2, 3]), "s": np.array([0, 1, 3])})
    expected = R("int64", "v", [R.RowSplits("s"), R.UniformRowLength(1)], "int32")
    assert tfr.decode_example(record, {"x": theirs})["x"].to_list() == [[[1]], [[2], [3]]]
    assert tfr.decode_examples([record], {"x": theirs})["x"].to_list() == [[[[1]], [[2], [3]]]]
    from tfrecord_lite._example.ragged_spec import from_tf

    assert from_tf(theirs) == expected and from_tf(row_splits("s")) is None


def test_ragged_values_nest_as_tensorflow() -> None:
    inner = tfr.Ragged(np.array([1, 2, 3, 4]), np.array([0, 2, 2, 4]))
    outer = tfr.Ragged(inner, np.array([0, 1, 3]))
    assert outer.flat_values.tolist() == [1, 2, 3, 4] and outer.ragged_rank == 2
    assert outer.to_list() == [[[1, 2]], [[], [3, 4]]]
    assert outer.row_lengths().tolist() == [1, 2]
    assert outer.row(1).to_list() == [[], [3, 4]] and outer.row(1).row_splits.tolist() == [0, 0, 2]
    values, splits = outer  # still a (values, row_splits) pair
    assert values is inner and splits.tolist() == [0, 1, 3]
    assert repr(outer) == "Ragged(shape=[2, None, None], dtype=int64, rows=[[[1, 2]], [[], [3, 4]]])"
    floats = tfr.Ragged(np.array([0.5], np.float32), np.array([0, 0, 1]))
    assert floats.to_list() == [[], [0.5]] and type(floats.to_list()[1][0]) is float


def test_spec_json_round_trip_and_arrow_columns() -> None:
    pa = pytest.importorskip("pyarrow")
    from tfrecord_lite._datasets.schema import features_from_json, features_to_json
    from tfrecord_lite.arrow import arrow_type, decode_arrow

    spec = {"x": R("float32", "v", [R.RowLengths("p0"), R.UniformRowLength(2)], "int32")}
    assert features_from_json(features_to_json(spec)) == spec
    records = [
        tfr.encode_example({"v": np.arange(4, dtype=np.float32), "p0": np.array([1, 0, 1])}),
        tfr.encode_example({"v": np.arange(2, dtype=np.float32), "p0": np.array([1])}),
    ]
    table = decode_arrow(records, spec)
    assert (
        table.schema.field("x").type
        == arrow_type(spec["x"])
        == pa.large_list(pa.large_list(pa.large_list(pa.float32())))
    )
    assert table.column("x").to_pylist() == tfr.decode_examples(records, spec)["x"].to_list()


def test_records_the_batch_parser_leaves_to_decode_example() -> None:
    records = [tfr.encode_example({"v": np.arange(i), "s": np.array([0, 1, i])}) for i in range(1, 40)]
    records[7] += b"\x10\x01"  # an unknown field: this record takes the single-record path
    spec = {"x": R("int64", "v", [R.RowSplits("s")])}
    expected = [tfr.decode_example(r, spec)["x"].to_list() for r in records]
    assert tfr.decode_examples(records, spec)["x"].to_list() == expected
    assert expected[7] == [[0], list(range(1, 8))]


def test_batches_read_from_a_file_and_large_records(tmp_path: Any) -> None:
    spec = {"x": R("bytes", "b", [R.RowLengths("n")]), "y": R("int64", "v", [R.UniformRowLength(2)])}
    records = [
        tfr.encode_example(
            {
                "b": np.array([bytes([i]) * 9000, b"s"], dtype=object),  # large: the sparse join path
                "n": np.array([1, 0, 1]),
                "v": np.arange(2 * (i % 3)),
            }
        )
        for i in range(10)
    ]
    path = str(tmp_path / "r.tfrecord")
    with tfr.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    expected = {key: [tfr.decode_example(r, spec)[key] for r in records] for key in spec}
    for got in (tfr.decode_examples(records, spec), next(tfr.iter_example_batches(path, features=spec, batch_size=10))):
        assert got["x"].to_list() == [v.to_list() for v in expected["x"]]
        assert got["y"].to_list() == [v.tolist() for v in expected["y"]]
        assert got["y"].flat_values.shape[1:] == (2,)
