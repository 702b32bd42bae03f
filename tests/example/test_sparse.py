"""SparseFeature and Sparse without TensorFlow: decode_example, decode_examples and
iter_example_batches against an independent reference (the entries of each record, sorted by
Python's stable sort), Sparse.to_dense against a dense array filled entry by entry, and the
errors of a misfit record or spec. TensorFlow as the oracle is tests/end_to_end/test_tf_specs.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr

DTYPES = {"int64": np.int64, "float32": np.float32, "bytes": object}
INDEX_KEYS = ["i", "j", "k"]


def _values(draw: Any, dtype: str, n: int) -> list[Any]:
    if dtype == "bytes":
        return draw(st.lists(st.binary(max_size=4), min_size=n, max_size=n))
    if dtype == "int64":
        return draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=n, max_size=n))
    return draw(st.lists(st.floats(width=32, allow_nan=False), min_size=n, max_size=n))


@st.composite
def sparse_records(draw: Any) -> tuple[tfr.SparseFeature, list[dict[str, Any]]]:
    """A SparseFeature of rank 1-3 and records for it: indices with repeats, out of order, out of
    range and negative; some records without the feature at all."""
    rank = draw(st.integers(1, 3))
    dtype = draw(st.sampled_from(sorted(DTYPES)))
    size = draw(st.lists(st.integers(0, 6), min_size=rank, max_size=rank))
    index = st.one_of(st.integers(-2, 7), st.integers(-(2**63), 2**63 - 1))
    records = []
    for _ in range(draw(st.integers(0, 6))):
        n = draw(st.integers(0, 6))
        record: dict[str, Any] = {"other": [1]}
        if n or draw(st.booleans()):
            for key in INDEX_KEYS[:rank]:
                record[key] = np.array(draw(st.lists(index, min_size=n, max_size=n)), dtype=np.int64)
            record["v"] = _values(draw, dtype, n)
        records.append(record)
    keys = INDEX_KEYS[0] if rank == 1 and draw(st.booleans()) else INDEX_KEYS[:rank]
    spec = tfr.SparseFeature(keys, "v", dtype, size[0] if isinstance(keys, str) else size, draw(st.booleans()))
    return spec, records


def encode(record: dict[str, Any], dtype: str) -> bytes:
    features = dict(record)
    if "v" in features and dtype == "float32":
        features["v"] = np.array(features["v"], dtype=np.float32)
    elif "v" in features and dtype == "int64":
        features["v"] = np.array(features["v"], dtype=np.int64)
    elif "v" in features and not features["v"]:
        features["v"] = np.array([], dtype=bytes)
    return tfr.encode_example(features)


def reference(spec: tfr.SparseFeature, records: list[dict[str, Any]], batch: bool) -> list[tuple[Any, ...]]:
    """(index, value) entries: each record's in order, else sorted by index (stably)."""
    entries = []
    for row, record in enumerate(records):
        ids = [record.get(key, []) for key in spec.index_keys]
        mine = [(tuple(int(i) for i in index), value) for *index, value in zip(*ids, record.get("v", []), strict=True)]
        if not spec.already_sorted:
            mine.sort(key=lambda entry: entry[0])
        entries += [(((row,) if batch else ()) + index, value) for index, value in mine]
    return entries


def entries(value: tfr.Sparse, dtype: str) -> list[tuple[Any, ...]]:
    values = list(value.values) if dtype == "bytes" else value.values.tolist()
    return [(tuple(index), v) for index, v in zip(value.indices.tolist(), values, strict=True)]


def check(value: tfr.Sparse, spec: tfr.SparseFeature, records: list[dict[str, Any]], batch: bool) -> None:
    rank = len(spec.index_keys) + batch
    assert value.indices.dtype == np.int64 and value.indices.shape == (len(value.indices), rank)
    assert value.dense_shape.dtype == np.int64
    assert value.dense_shape.tolist() == ([len(records)] if batch else []) + list(spec.shape)
    if spec.dtype == "bytes":
        assert isinstance(value.values, list) and all(isinstance(v, bytes) for v in value.values)
    else:
        assert value.values.dtype == DTYPES[spec.dtype]
    expected = reference(spec, records, batch)
    if spec.dtype == "float32":
        expected = [(index, float(np.float32(v))) for index, v in expected]
    assert entries(value, spec.dtype) == expected


@given(sparse_records())
def test_decode_example_and_decode_examples_match_the_reference(case: Any) -> None:
    spec, records = case
    data = [encode(r, spec.dtype) for r in records]
    for record, raw in zip(records, data, strict=True):
        check(tfr.decode_example(raw, {"s": spec})["s"], spec, [record], batch=False)
    check(tfr.decode_examples(data, {"s": spec})["s"], spec, records, batch=True)


@given(sparse_records())
@settings(max_examples=30)
def test_views_and_large_records_give_the_same_sparse(case: Any) -> None:
    spec, records = case
    big = [encode({**r, "blob": [bytes(40_000)]}, spec.dtype) for r in records]  # the large-record path
    check(tfr.decode_examples(big, {"s": spec})["s"], spec, records, batch=True)
    if spec.dtype == "bytes":
        views = tfr.decode_examples(big, {"s": spec}, copy=False)["s"]
        assert all(isinstance(v, memoryview) for v in views.values)
        assert [bytes(v) for v in views.values] == [v for _, v in reference(spec, records, batch=True)]


def _dense(value: tfr.Sparse, default: Any) -> np.ndarray:
    out = np.full(tuple(value.dense_shape.tolist()), default, dtype=object)
    for index, v in zip(value.indices.tolist(), value.values, strict=True):
        out[tuple(index)] = v
    return out


@given(st.data())
def test_to_dense_places_every_entry(data: Any) -> None:
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    cells = data.draw(st.sets(st.tuples(*(st.integers(0, d - 1) for d in shape)), max_size=8))
    cells = data.draw(st.permutations(sorted(cells)))
    ids = {key: np.array([c[j] for c in cells], dtype=np.int64) for j, key in enumerate(INDEX_KEYS[: len(shape)])}
    values = np.arange(1, len(cells) + 1, dtype=np.float32)
    spec = tfr.SparseFeature(list(ids), "v", "float32", shape)
    value = tfr.decode_example(tfr.encode_example({**ids, "v": values}), {"s": spec})["s"]
    dense = value.to_dense()
    assert dense.dtype == np.float32 and dense.tolist() == _dense(value, 0.0).tolist()
    assert value.to_dense(-1).tolist() == _dense(value, -1.0).tolist()


def test_to_dense_of_bytes_fills_empty_bytes() -> None:
    spec = tfr.SparseFeature("i", "v", "bytes", 3)
    value = tfr.decode_example(tfr.encode_example({"i": [2, 0], "v": [b"a", b"b"]}), {"s": spec})["s"]
    assert value.to_dense().tolist() == [b"b", b"", b"a"]
    assert value.to_dense(b"-").tolist() == [b"b", b"-", b"a"]


@pytest.mark.parametrize(
    ("ids", "message"), [([1, 5], r"index \[5\] \(entry 1\) is out of range"), ([1, 1], r"index \[1\] .* repeated")]
)
def test_to_dense_refuses_an_index_it_cannot_place(ids: list[int], message: str) -> None:
    spec = tfr.SparseFeature("i", "v", "float32", 5)
    record = tfr.encode_example({"i": ids, "v": np.ones(2, np.float32)})
    value = tfr.decode_example(record, {"s": spec})["s"]  # decoded as TensorFlow decodes it
    with pytest.raises(ValueError, match=message):
        value.to_dense()


def test_iter_example_batches_gives_the_batches_of_decode_examples(tmp_path: Path) -> None:
    spec = {"s": tfr.SparseFeature(["i", "j"], "v", "int64", [4, 4]), "i": tfr.VarLenFeature("int64")}
    records = [tfr.encode_example({"i": [n % 4, 0], "j": [1, n % 3], "v": [n, -n]}) for n in range(10)]
    path = tmp_path / "s.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for record in records:
            w.write(record)
    batches = list(tfr.iter_example_batches(path, features=spec, batch_size=4))
    for b, batch in enumerate(batches):
        expected = tfr.decode_examples(records[4 * b : 4 * b + 4], spec)
        assert list(batch) == ["s", "i"]
        for field in ("indices", "values", "dense_shape"):
            assert np.array_equal(getattr(batch["s"], field), getattr(expected["s"], field))


def test_an_empty_batch_has_a_dense_shape() -> None:
    out = tfr.decode_examples([], {"s": tfr.SparseFeature(["i", "j"], "v", "bytes", [2, 3])})["s"]
    assert out.indices.shape == (0, 3) and out.values == [] and out.dense_shape.tolist() == [0, 2, 3]


# --------------------------------------------------------------------------- errors


SPEC = {"s": tfr.SparseFeature(["i", "j"], "v", "float32", [3, 3])}


@pytest.mark.parametrize(
    ("features", "message"),
    [
        ({"i": [0, 1], "j": [0, 1], "v": np.ones(3, np.float32)}, "found 3 values under 'v', indices 2 under 'i'"),
        ({"i": [0], "j": [0, 1], "v": np.ones(1, np.float32)}, "2 under 'j'"),
        ({"v": np.ones(1, np.float32)}, "found 1 values under 'v', indices 0 under 'i', 0 under 'j'"),
        ({"i": [0], "j": [1]}, "found 0 values"),
        ({"i": [0], "j": np.ones(1, np.float32), "v": np.ones(1, np.float32)}, "its key 'j': expected int64_list"),
        ({"i": [0], "j": [1], "v": [1]}, "its key 'v': expected float_list"),
    ],
)
def test_a_record_that_does_not_fit_is_a_feature_error(features: dict[str, Any], message: str) -> None:
    bad = tfr.encode_example(features)
    with pytest.raises(tfr.FeatureError, match=message) as single:
        tfr.decode_example(bad, SPEC)
    assert single.value.key == "s"
    good = tfr.encode_example({"i": [0], "j": [0], "v": np.ones(1, np.float32)})
    with pytest.raises(tfr.FeatureError, match=message) as batch:
        tfr.decode_examples([good, good, bad], SPEC)
    assert "record 2 of the batch" in " ".join(getattr(batch.value, "__notes__", ["record 2 of the batch"]))


@pytest.mark.parametrize(
    ("features", "message"),
    [
        ({"s": SPEC["s"], "i": tfr.FixedLenFeature([1], "int64")}, "'i': is read by SparseFeature 's' too"),
        ({"s": SPEC["s"], "v": tfr.FixedLenSequenceFeature([], "float32", True)}, "'v': is read by SparseFeature"),
        ({"s": SPEC["s"], "v": tfr.VarLenFeature("int64")}, "reads 'v' as .* but .* reads it as"),
        (
            {"s": SPEC["s"], "t": tfr.SparseFeature("v", "w", "int64", 3)},
            "reads 'v' as int64, but feature 's' reads it as",
        ),
    ],
)
def test_keys_read_two_ways_are_refused_as_in_tensorflow(features: dict[str, Any], message: str) -> None:
    record = tfr.encode_example({"x": [1]})
    for decode in (lambda: tfr.decode_example(record, features), lambda: tfr.decode_examples([record], features)):
        with pytest.raises(tfr.FeatureError, match=message):
            decode()


def test_a_key_read_as_a_var_len_feature_too_is_decoded_both_ways() -> None:
    record = tfr.encode_example({"i": [2, 0], "v": np.ones(2, np.float32)})
    features = {"i": tfr.SparseFeature("i", "v", "float32", 3), "v": tfr.VarLenFeature("float32")}
    one, batch = tfr.decode_example(record, features), tfr.decode_examples([record], features)
    assert one["i"].indices.tolist() == [[0], [2]] and one["v"].tolist() == [1.0, 1.0]
    assert batch["i"].indices.tolist() == [[0, 0], [0, 2]] and batch["v"].values.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("i", "v", "int64", [3]), TypeError, "size must be an int"),
        ((["i", "j"], "v", "int64", 3), TypeError, "a list of 2 ints"),
        ((["i", "j"], "v", "int64", [3]), ValueError, "one per index key"),
        (("i", "v", "int64", -1), ValueError, "non-negative"),
        (([], "v", "int64", []), TypeError, "non-empty list"),
        (("i", 3, "int64", 3), TypeError, "value_key must be a str"),
        (("i", "v", "float64", 3), ValueError, "unsupported dtype"),
    ],
)
def test_a_sparse_feature_is_checked_when_made(args: tuple[Any, ...], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        tfr.SparseFeature(*args)


def test_sequence_examples_take_no_sparse_feature() -> None:
    record = tfr.encode_sequence_example({"i": [1], "v": np.ones(1, np.float32)}, {})
    for where in ("context_features", "sequence_features"):
        with pytest.raises(tfr.FeatureError, match=r"take .*, not SparseFeature"):
            tfr.decode_sequence_example(record, **{where: {"s": tfr.SparseFeature("i", "v", "float32", 3)}})


def test_arrow_columns_have_no_sparse_layout() -> None:
    pytest.importorskip("pyarrow")
    from tfrecord_lite.arrow import decode_arrow

    with pytest.raises((tfr.FeatureError, TypeError), match="Sparse"):
        decode_arrow([tfr.encode_example({"x": [1]})], {"s": SPEC["s"]})


def test_repr_shows_shape_count_and_first_entries() -> None:
    value = tfr.decode_examples(
        [tfr.encode_example({"i": [3, 1, 2, 0], "v": [5, 6, 7, 8]})], {"s": tfr.SparseFeature("i", "v", "int64", 4)}
    )["s"]
    assert (
        repr(value) == "Sparse(dense_shape=[1, 4], dtype=int64, nnz=4, entries={[0, 0]: 8, [0, 1]: 6, [0, 2]: 7, ...})"
    )


def test_a_batch_of_many_record_lengths_decodes_as_its_records() -> None:
    rng = np.random.default_rng(5)
    records = []
    for _ in range(1500):  # bag-of-words records: hundreds of lengths, most with a few records each
        k = int(rng.integers(0, 40))
        records.append(tfr.encode_example({"ids": rng.integers(0, 10**6, k), "w": rng.random(k, np.float32)}))
    assert len(set(map(len, records))) > 100
    spec = {"s": tfr.SparseFeature("ids", "w", "float32", 10**6), "ids": tfr.VarLenFeature("int64")}
    batch = tfr.decode_examples(records, spec)
    one = [tfr.decode_example(r, spec) for r in records]
    for got, want in zip(batch["ids"].to_list(), one, strict=True):
        assert got == want["ids"].tolist()
    stacked = [(row, *index) for row, d in enumerate(one) for index in d["s"].indices.tolist()]
    assert batch["s"].indices.tolist() == [list(entry) for entry in stacked]
    assert batch["s"].values.tolist() == [v for d in one for v in d["s"].values.tolist()]


def test_a_key_read_by_a_ragged_and_a_sparse_feature_as_two_dtypes_is_refused() -> None:
    record = tfr.encode_example({"x": [1, 2], "i": [0, 1]})
    spec = {"r": tfr.RaggedFeature("int64", value_key="x"), "s": tfr.SparseFeature("i", "x", "float32", 4)}
    with pytest.raises(tfr.FeatureError, match="reads 'x' as int64, but feature 's' reads it as float32"):
        tfr.decode_examples([record], spec)  # refused for the spec, as TensorFlow refuses it
    with pytest.raises(tfr.FeatureError, match="feature 's': its key 'x': expected float_list"):
        tfr.decode_example(record, spec)
