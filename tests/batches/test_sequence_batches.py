"""decode_sequence_examples (batched, columnar) equals decode_sequence_example applied record by
record and stacked: for every spec kind, zero steps, missing lists, bytes views, and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests import reference
from tfrecord_lite._batches.columnar import assembly_for
from tfrecord_lite._batches.sequences import (
    checked_context_specs,
    checked_sequence_specs,
    decode_sequence_records,
)

DTYPES = ("int64", "float32", "bytes")


def _decode_with_slow_rows(records: list[Any], ctx: Any, seq: Any, copy: bool = True) -> tuple[Any, list[int]]:
    context_specs, sequence_specs = checked_context_specs(ctx), checked_sequence_specs(seq)
    return decode_sequence_records(
        records, context_specs, sequence_specs, assembly_for(copy, {**context_specs, **sequence_specs})
    )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (bytes, list, memoryview)) or isinstance(b, (bytes, list)):
        return _plain(a) == _plain(b)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == object or b.dtype == object:
        return a.shape == b.shape and _plain(a.tolist()) == _plain(b.tolist())
    return reference.same_value(a, b)


def _plain(value: Any) -> Any:
    """bytes for memoryviews, lists for lists, at any depth."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _context_row(value: Any, i: int) -> Any:
    return value.row(i) if isinstance(value, tfr.Ragged) else value[i]


def _list_row(spec: Any, value: Any, length: Any, i: int) -> Any:
    """Record i of a feature list column, in decode_sequence_example's form."""
    if isinstance(spec, tfr.FixedLenSequenceFeature):
        steps = int(length[i])
        padding = value[i, steps:]
        assert (padding == (b"" if spec.dtype == "bytes" else 0)).all()
        return value[i, :steps]
    if spec.dtype == "bytes":
        return value[i]
    outer, inner = value.row_splits, value.values  # Ragged(Ragged(values, step_splits), record_splits)
    splits, flat = inner.row_splits, inner.values
    assert outer[0] == 0 and outer[-1] == len(splits) - 1 and splits[0] == 0 and splits[-1] == len(flat)
    return [flat[splits[j] : splits[j + 1]] for j in range(outer[i], outer[i + 1])]


def assert_like_stacked(records: list[Any], ctx: Any, seq: Any, *, copy: bool = True, fast: bool = False) -> Any:
    """decode_sequence_examples is decode_sequence_example per record, stacked; or raises the error
    of the first record that has one, noting its index. With `fast`, no record may have taken the
    single-record path."""
    want, first_error = [], None
    for i, record in enumerate(records):
        try:
            want.append(tfr.decode_sequence_example(record, ctx, seq))
        except Exception as err:  # whatever it is, the batch must raise it too
            first_error = i, err
            break
    if first_error is not None:
        index, error = first_error
        with pytest.raises(type(error)) as info:
            tfr.decode_sequence_examples(records, ctx, seq, copy=copy)
        assert str(info.value) == str(error)
        assert getattr(info.value, "key", None) == getattr(error, "key", None)
        notes = getattr(info.value, "__notes__", [f"record {index} of the batch"])  # notes from Python 3.11
        assert any(f"record {index} of the batch" in note for note in notes)
        return None
    (context, lists, lengths), slow = _decode_with_slow_rows(records, ctx, seq, copy)
    assert not fast or not slow, slow
    seq_specs = checked_sequence_specs(seq)
    assert set(lengths) == {k for k, s in seq_specs.items() if isinstance(s, tfr.FixedLenSequenceFeature)}
    for column in lengths.values():
        assert column.dtype == np.int64 and column.shape == (len(records),)
    for i, (ctx_want, seq_want) in enumerate(want):
        for key, value in ctx_want.items():
            assert _same(_context_row(context[key], i), value), (i, key)
        for key, value in seq_want.items():
            got = _list_row(seq_specs[key], lists[key], lengths.get(key), i)
            if isinstance(value, list) and not isinstance(got, np.ndarray):
                assert len(got) == len(value) and all(map(_same, got, value)), (i, key, got, value)
            else:
                assert _same(got, value), (i, key, got, value)
    return context, lists, lengths


def _values(dtype: str, count: int) -> st.SearchStrategy:
    if dtype == "bytes":
        return st.lists(st.binary(max_size=4), min_size=count, max_size=count).map(lambda v: np.array(v, dtype=object))
    if dtype == "float32":
        return st.lists(st.floats(-1e6, 1e6, width=32), min_size=count, max_size=count).map(
            lambda v: np.array(v, dtype=np.float32)
        )
    return st.lists(st.integers(-(2**63), 2**63 - 1), min_size=count, max_size=count).map(
        lambda v: np.array(v, dtype=np.int64)
    )


# The features records may hold: key -> (dtype, values per step or None for any count).
KEYS = {"a": ("int64", 2), "b": ("float32", None), "c": ("bytes", 1), "d": ("int64", None), "e": ("bytes", None)}


@st.composite
def sequence_records(draw: Any) -> bytes:
    context = {}
    for key in draw(st.lists(st.sampled_from(sorted(KEYS)), unique=True, max_size=3)):
        dtype, size = KEYS[key]
        context[key] = draw(_values(dtype, size if size is not None else draw(st.integers(0, 3))))
    lists = {}
    for key in draw(st.lists(st.sampled_from(sorted(KEYS)), unique=True, max_size=4)):
        dtype, size = KEYS[key]
        steps = draw(st.integers(0, 4))
        lists[key] = [draw(_values(dtype, size if size is not None else draw(st.integers(0, 3)))) for _ in range(steps)]
    record = tfr.encode_sequence_example(context, lists)
    if draw(st.integers(0, 9)) == 0:  # lists before context: a layout the batch path leaves to the single path
        head = tfr.encode_sequence_example(context, {})
        record = record[len(head) :] + head
    return record


@st.composite
def specs(draw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    ctx: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(sorted(KEYS)), unique=True, max_size=3)):
        dtype, size = KEYS[key]
        dtype = draw(st.sampled_from([dtype, dtype, *DTYPES]))
        if draw(st.booleans()):
            ctx[key] = tfr.VarLenFeature(dtype)
        else:
            shape = [size] if size is not None and size > 1 else []
            default = draw(st.sampled_from([None, "value"]))
            value = {"int64": 7, "float32": 0.5, "bytes": b"z"}[dtype]
            ctx[key] = tfr.FixedLenFeature(shape, dtype, [value] * size if default and shape else default and value)
    seq: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(sorted(KEYS)), unique=True, max_size=3)):
        dtype, size = KEYS[key]
        dtype = draw(st.sampled_from([dtype, dtype, *DTYPES]))
        if draw(st.booleans()):
            seq[key] = tfr.VarLenFeature(dtype)
        else:
            shape = draw(st.sampled_from([[size or 1], [], [1, size or 1]]))
            seq[key] = tfr.FixedLenSequenceFeature(shape, dtype, allow_missing=draw(st.booleans()))
    return ctx, seq


@settings(max_examples=150, deadline=None)
@given(st.lists(sequence_records(), max_size=8), specs(), st.booleans())
def test_batches_decode_like_stacked_single_records(records, spec, copy):
    assert_like_stacked(records, *spec, copy=copy)


def _rows(n: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n):
        steps = int(rng.integers(0, 6))
        records.append(
            tfr.encode_sequence_example(
                {"id": i, "name": b"r%d" % i, "scores": rng.random(int(rng.integers(0, 3)), np.float32)},
                {
                    "tokens": [rng.integers(-(2**40), 2**40, 3) for _ in range(steps)],
                    "floats": [rng.standard_normal(int(rng.integers(0, 4))).astype(np.float32) for _ in range(steps)],
                    "words": [
                        np.array([b"w" * int(k) for k in rng.integers(0, 4, 2)], dtype=object) for _ in range(steps)
                    ],
                },
            )
        )
    return records


CONTEXT = {
    "id": tfr.FixedLenFeature([], "int64"),
    "name": tfr.FixedLenFeature([], "bytes"),
    "scores": tfr.VarLenFeature("float32"),
    "absent": tfr.FixedLenFeature([2], "float32", default_value=[1.0, 2.0]),
}
SEQUENCE = {
    "tokens": tfr.FixedLenSequenceFeature([3], "int64"),
    "floats": tfr.VarLenFeature("float32"),
    "words": tfr.FixedLenSequenceFeature([2], "bytes"),
    "word_lists": tfr.VarLenFeature("bytes"),
    "missing": tfr.FixedLenSequenceFeature([], "float32", allow_missing=True),
}


def test_every_spec_kind_by_the_batch_path():
    records = _rows(40)
    spec = {**SEQUENCE, "word_lists": tfr.VarLenFeature("bytes")}
    context, lists, lengths = assert_like_stacked(records, CONTEXT, spec, fast=True)
    assert lists["tokens"].dtype == np.int64 and lists["tokens"].shape == (40, int(lengths["tokens"].max()), 3)
    assert lists["words"].dtype == object and lists["missing"].shape == (40, 0)
    assert (lengths["missing"] == 0).all()
    assert context["absent"].tolist() == [[1.0, 2.0]] * 40
    floats = lists["floats"]
    assert isinstance(floats, tfr.Ragged) and isinstance(floats.values, tfr.Ragged)
    assert floats.values.values.dtype == np.float32 and floats.row_splits.dtype == np.int64


def test_bytes_lists_as_views_with_copy_false():
    records = _rows(20, seed=1)
    spec = {"words": tfr.FixedLenSequenceFeature([2], "bytes"), "by_step": tfr.VarLenFeature("bytes")}
    spec["by_step"] = tfr.VarLenFeature("bytes")
    _, lists, _ = assert_like_stacked(records, {"name": CONTEXT["name"]}, {"words": spec["words"]}, copy=False)
    values = [v for v in lists["words"].ravel().tolist() if v != b""]
    assert values and all(isinstance(v, memoryview) and v.readonly for v in values)
    context, lists, _ = tfr.decode_sequence_examples(
        records, {"name": CONTEXT["name"]}, {"words": tfr.VarLenFeature("bytes")}, copy=False
    )
    assert isinstance(context["name"][0], memoryview)
    assert all(isinstance(v, memoryview) for record in lists["words"] for step in record for v in step)
    copied = tfr.decode_sequence_examples(records, {}, {"words": tfr.VarLenFeature("bytes")})[1]["words"]
    assert _plain(lists["words"]) == copied and all(type(v) is bytes for r in copied for s in r for v in s)


def test_zero_steps_and_records_without_lists():
    empty_list = tfr.encode_sequence_example({"id": 1}, {"tokens": np.empty((0, 3), np.int64), "floats": []})
    nothing = tfr.encode_sequence_example({"id": 2}, {})
    spec = {
        "tokens": tfr.FixedLenSequenceFeature([3], "int64", allow_missing=True),
        "floats": tfr.VarLenFeature("float32"),
    }
    _, lists, lengths = assert_like_stacked([empty_list, nothing, b""], {}, spec, fast=True)
    assert lists["tokens"].shape == (3, 0, 3) and lengths["tokens"].tolist() == [0, 0, 0]
    assert lists["floats"].row_splits.tolist() == [0, 0, 0, 0] and lists["floats"].values.row_splits.tolist() == [0]


def test_empty_batch_has_the_right_shapes_and_types():
    context, lists, lengths = tfr.decode_sequence_examples([], CONTEXT, SEQUENCE)
    assert context["id"].shape == (0,) and context["absent"].shape == (0, 2)
    assert lists["tokens"].shape == (0, 0, 3) and lists["tokens"].dtype == np.int64
    assert lists["words"].shape == (0, 0, 2) and lists["words"].dtype == object
    assert lists["floats"].row_splits.tolist() == [0] and lists["floats"].values.values.dtype == np.float32
    assert lists["word_lists"] == [] and lengths["tokens"].dtype == np.int64 and lengths["tokens"].shape == (0,)


SEQ = tfr.encode_sequence_example(
    {"c": [1, 2], "kindless": None},
    {"s": [[1, 2], [3, 4]], "v": [[1], np.array([], np.int64), [2, 3, 4]], "k": [[1], None, [3]]},
)


@pytest.mark.parametrize(
    ("ctx", "seq", "message"),
    [
        ({}, {"zz": tfr.FixedLenSequenceFeature([2], "int64")}, "required feature_list is missing"),
        ({}, {"s": tfr.FixedLenSequenceFeature([3], "int64")}, "step 0: expected 3 values"),
        ({}, {"s": tfr.FixedLenSequenceFeature([2], "float32")}, "step 0: expected float_list"),
        ({}, {"v": tfr.FixedLenSequenceFeature([1], "int64")}, "step 1: expected 1 value"),
        ({}, {"k": tfr.FixedLenSequenceFeature([1], "int64", allow_missing=True)}, "step 1: expected int64_list"),
        ({}, {"s": tfr.VarLenFeature("bytes")}, "step 0: expected bytes_list"),
        ({"c": tfr.FixedLenFeature([3], "int64")}, {}, "expected 3 values"),
        ({"zz": tfr.FixedLenFeature([], "int64")}, {}, "required feature is missing"),
        ({"kindless": tfr.FixedLenFeature([], "int64", default_value=3)}, {}, "expected 1 value"),
    ],
)
def test_errors_are_those_of_the_single_record_decoder_for_the_first_bad_record(ctx, seq, message):
    good = tfr.encode_sequence_example({"c": [5, 6]}, {"s": [[9, 9]], "v": [], "k": [], "zz": [[1, 2]]})
    records = [good, good, SEQ, SEQ]
    assert_like_stacked(records, ctx, seq)  # the first record with an error: a note names it
    with pytest.raises(tfr.FeatureError, match=message):
        tfr.decode_sequence_examples(records, ctx, seq)


def test_kindless_steps_and_contexts_as_the_single_record_decoder_reads_them():
    spec = {"k": tfr.VarLenFeature("int64"), "v": tfr.VarLenFeature("int64")}
    _, lists, _ = assert_like_stacked([SEQ, SEQ], {"kindless": tfr.VarLenFeature("float32")}, spec, fast=True)
    assert lists["k"].values.row_splits.tolist() == [0, 1, 1, 2, 3, 3, 4]
    assert_like_stacked([SEQ], {"kindless": tfr.FixedLenFeature([0], "int64")}, {})


def test_malformed_records_raise_decode_error_naming_their_index():
    records = [SEQ, SEQ[:-3], SEQ]
    assert_like_stacked(records, {"c": tfr.VarLenFeature("int64")}, {"s": tfr.VarLenFeature("int64")})
    with pytest.raises(tfr.DecodeError):
        tfr.decode_sequence_examples(records, {}, {"v": tfr.VarLenFeature("int64")})


class _SubSpec(tfr.VarLenFeature):
    """A spec type the batch decoder has no rule for (as new spec types are until they get one)."""


@pytest.mark.parametrize(
    ("ctx", "seq", "message"),
    [
        (
            {},
            {"s": tfr.FixedLenFeature([2], "int64")},
            "sequence_features take FixedLenSequenceFeature or VarLenFeature",
        ),
        (
            {"c": tfr.FixedLenSequenceFeature([2], "int64")},
            {},
            "context_features take FixedLenFeature or VarLenFeature",
        ),
        ({}, {"s": tfr.FixedLenSequenceFeature([2], "int64", default_value=0)}, "takes no default_value"),
        ({}, {"s": _SubSpec("int64")}, "_SubSpec is not supported in sequence examples yet"),
        ({"c": _SubSpec("int64")}, {}, "_SubSpec is not supported in sequence examples yet: context_features take"),
    ],
)
def test_specs_it_cannot_take_raise_even_for_an_empty_batch(ctx, seq, message):
    for records in ([], [SEQ]):
        with pytest.raises(tfr.FeatureError, match=message):
            tfr.decode_sequence_examples(records, ctx, seq)


def test_bytes_like_records_and_iterables():
    records = _rows(5, seed=2)
    want = tfr.decode_sequence_examples(records, CONTEXT, {"tokens": SEQUENCE["tokens"]})
    got = tfr.decode_sequence_examples((bytearray(r) for r in records), CONTEXT, {"tokens": SEQUENCE["tokens"]})
    assert np.array_equal(want[1]["tokens"], got[1]["tokens"]) and np.array_equal(want[2]["tokens"], got[2]["tokens"])
    assert want[0]["name"].tolist() == got[0]["name"].tolist()


def test_iter_sequence_example_batches_equals_decode_over_batches(tmp_path):
    records = _rows(23, seed=3)
    path = tmp_path / "sequences.tfrecord.gz"
    with tfr.TFRecordWriter(path, compression="gzip") as writer:
        for record in records:
            writer.write(record)
    spec = {"tokens": SEQUENCE["tokens"], "floats": SEQUENCE["floats"], "words": SEQUENCE["words"]}
    batches = list(
        tfr.iter_sequence_example_batches(path, context_features=CONTEXT, sequence_features=spec, batch_size=10)
    )
    assert [len(b[0]["id"]) for b in batches] == [10, 10, 3]
    for i, (context, lists, lengths) in enumerate(batches):
        want_context, want_lists, want_lengths = tfr.decode_sequence_examples(
            records[10 * i : 10 * i + 10], CONTEXT, spec
        )
        assert context["name"].tolist() == want_context["name"].tolist()
        assert np.array_equal(lists["tokens"], want_lists["tokens"]) and np.array_equal(
            lengths["tokens"], want_lengths["tokens"]
        )
        assert lists["words"].tolist() == want_lists["words"].tolist()
        assert np.array_equal(lists["floats"].row_splits, want_lists["floats"].row_splits)
        assert np.array_equal(lists["floats"].values.values, want_lists["floats"].values.values)
    with pytest.raises(tfr.FeatureError, match="not FixedLenFeature"):  # checked before the first batch
        tfr.iter_sequence_example_batches(
            path, context_features={}, sequence_features={"tokens": tfr.FixedLenFeature([3], "int64")}
        )
    with pytest.raises(ValueError, match="batch_size"):
        tfr.iter_sequence_example_batches(path, context_features=CONTEXT, sequence_features=spec, batch_size=0)
