"""TensorFlow as the oracle of decode_sequence_examples: random batches of SequenceExamples and
random specs, every output compared with tf.io.parse_sequence_example's (VarLenFeature: TF's
SparseTensor against our Ragged, and TF's RaggedFeature parse against our nested splits), or both
raise. Skipped when TensorFlow is not installed."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

tf = pytest.importorskip("tensorflow")

import tfrecord_lite as tfr

pytestmark = pytest.mark.tf

TF_ERRORS = (tf.errors.InvalidArgumentError, ValueError, TypeError)
DTYPES = {"int64": (tf.int64, np.int64), "float32": (tf.float32, np.float32), "bytes": (tf.string, object)}
KEYS = ("a", "b", "c")


def _values(dtype: str, count: int) -> st.SearchStrategy:
    element = {
        "int64": st.integers(-(2**63), 2**63 - 1),
        "float32": st.floats(-1e6, 1e6, width=32),
        "bytes": st.binary(max_size=3),
    }[dtype]
    return st.lists(element, min_size=count, max_size=count).map(lambda v: np.array(v, dtype=DTYPES[dtype][1]))


@st.composite
def cases(draw: Any) -> tuple[list[bytes], dict[str, tuple], dict[str, tuple]]:
    """A batch and specs for it. Each key has a dtype and a count of values (None: any) that the
    records mostly follow and the specs mostly ask for, so that most batches decode; the rest are
    off the schema somewhere (another kind, another count, a Feature with no kind, a missing list)."""
    schema = {key: (draw(st.sampled_from(list(DTYPES))), draw(st.sampled_from([None, 1, 2]))) for key in KEYS}

    def values(key: str) -> Any:
        dtype, count = schema[key]
        if draw(st.integers(0, 39)) == 0:  # off the schema
            dtype = draw(st.sampled_from([*DTYPES, "none"]))
            count = None
        if dtype == "none":  # a Feature with no kind
            return None
        return draw(_values(dtype, count if count is not None else draw(st.integers(0, 3))))

    batch = []
    for _ in range(draw(st.integers(0, 5))):
        context = {key: values(key) for key in KEYS if draw(st.integers(0, 9))}  # each key mostly there
        lists = {key: [values(key) for _ in range(draw(st.integers(0, 3)))] for key in KEYS if draw(st.integers(0, 9))}
        batch.append(tfr.encode_sequence_example(context, lists))
    return batch, *specs(draw, schema)


def specs(draw: Any, schema: dict[str, tuple[str, int | None]]) -> tuple[dict[str, tuple], dict[str, tuple]]:
    """Specs as (kind, dtype, ...) tuples, built for each library by `build`."""

    def dtype_and_shape(key: str) -> tuple[str, list[int]]:
        dtype, count = schema[key]
        if draw(st.integers(0, 9)) == 0:
            return draw(st.sampled_from(list(DTYPES))), draw(st.sampled_from([[], [2], [1, 2]]))
        return dtype, [] if count == 1 else [1, count or 2] if draw(st.booleans()) else [count or 2]

    context: dict[str, tuple] = {}
    for key in draw(st.lists(st.sampled_from(KEYS), unique=True, min_size=1, max_size=3)):
        dtype, shape = dtype_and_shape(key)
        if draw(st.integers(0, 2)) == 0 or schema[key][1] is None:
            context[key] = ("varlen", dtype)
        else:
            default = draw(st.booleans()) and draw(_values(dtype, int(np.prod(shape)))).reshape(shape)
            context[key] = ("fixed", dtype, shape, None if default is False else default)
    sequence: dict[str, tuple] = {}
    for key in draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=3)):
        dtype, shape = dtype_and_shape(key)
        if draw(st.integers(0, 2)) == 0 or schema[key][1] is None:
            sequence[key] = ("varlen", dtype)
        else:
            sequence[key] = ("sequence", dtype, shape, draw(st.integers(0, 3)) > 0)
    return context, sequence


def build(table: dict[str, tuple], m: Any, tf_types: bool) -> dict[str, Any]:
    out = {}
    for key, (kind, dtype, *rest) in table.items():
        t = DTYPES[dtype][0] if tf_types else dtype
        if kind == "varlen":
            out[key] = m.VarLenFeature(t)
        elif kind == "fixed":
            default = rest[1]
            if tf_types and default is not None and dtype == "bytes":
                default = default.tolist()
            out[key] = m.FixedLenFeature(rest[0], t, default_value=default)
        else:
            out[key] = m.FixedLenSequenceFeature(rest[0], t, allow_missing=rest[1])
    return out


def tf_parse(batch: list[bytes], context: dict[str, tuple], sequence: dict[str, tuple]) -> Any:
    serialized = tf.constant(batch, dtype=tf.string)
    return tf.io.parse_sequence_example(serialized, build(context, tf.io, True), build(sequence, tf.io, True))


def _plain(values: Any) -> list[Any]:
    values = values if isinstance(values, list) else np.asarray(values).tolist()
    return [bytes(v) if isinstance(v, (bytes, memoryview)) else v for v in values]


def same_values(ours: Any, theirs: Any) -> bool:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    if ours.dtype == object or theirs.dtype == object:
        return ours.shape == theirs.shape and ours.tolist() == theirs.tolist()
    return ours.shape == theirs.shape and ours.dtype == theirs.dtype and np.array_equal(ours, theirs, equal_nan=True)


def check_context(ours: Any, theirs: Any, n: int) -> None:
    if not isinstance(theirs, tf.SparseTensor):
        assert same_values(ours, theirs.numpy())
        return
    rows = theirs.indices.numpy()[:, 0]
    values = theirs.values.numpy()
    for i in range(n):  # Ragged, or a list of lists of bytes
        mine = ours.row(i) if isinstance(ours, tfr.Ragged) else ours[i]
        assert _plain(mine) == _plain(values[rows == i])


def check_varlen_list(ours: Any, theirs: Any, tf_ragged: Any, n: int) -> None:
    """Our nested value against TF's [batch, steps, values] SparseTensor and its RaggedTensor."""
    if isinstance(ours, tfr.Ragged):
        record_splits, inner = ours.row_splits, ours.values
        step_splits, flat = inner.row_splits, inner.values
        nested = [
            [_plain(flat[step_splits[j] : step_splits[j + 1]]) for j in range(record_splits[i], record_splits[i + 1])]
            for i in range(n)
        ]
    else:
        nested = [[_plain(step) for step in record] for record in ours]
    shape = theirs.dense_shape.numpy()
    assert shape[0] == n and shape[1] == max((len(r) for r in nested), default=0)
    index, values = theirs.indices.numpy(), theirs.values.numpy()
    assert [nested[i][j][k] for i, j, k in index.tolist()] == _plain(values)
    assert len(values) == sum(len(step) for record in nested for step in record)
    if tf_ragged is not None:
        splits = [s.numpy().tolist() for s in tf_ragged.nested_row_splits]
        if isinstance(ours, tfr.Ragged):
            assert splits == [record_splits.tolist(), step_splits.tolist()]
        assert nested == [[_plain(step) for step in record] for record in tf_ragged.to_list()]


def tf_ragged_lists(batch: list[bytes], sequence: dict[str, tuple]) -> dict[str, Any]:
    """TF's RaggedFeature parse of the VarLen lists (their exact steps per record), where it succeeds."""
    specs = {
        key: tf.io.RaggedFeature(DTYPES[spec[1]][0], row_splits_dtype=tf.int64)
        for key, spec in sequence.items()
        if spec[0] == "varlen"
    }
    if not specs:
        return {}
    try:
        return tf.io.parse_sequence_example(tf.constant(batch, dtype=tf.string), None, specs)[1]  # type: ignore[no-any-return]
    except TF_ERRORS:
        return {}


@settings(max_examples=80, deadline=None)
@given(cases(), st.booleans())
def test_decode_sequence_examples_matches_parse_sequence_example(case, copy):
    batch, context_spec, sequence_spec = case
    try:
        theirs = tf_parse(batch, context_spec, sequence_spec)
    except TF_ERRORS:
        theirs = None
    ours: Any
    try:
        ours = tfr.decode_sequence_examples(
            batch, build(context_spec, tfr, False), build(sequence_spec, tfr, False), copy=copy
        )
    except (tfr.FeatureError, tfr.DecodeError) as err:
        ours = err
    if isinstance(ours, Exception):
        assert theirs is None, f"we raised {ours!r}; TF returned {theirs!r}"
        event("both raise")
        return
    if theirs is None and not batch and any(s[0] == "fixed" and s[3] is None for s in context_spec.values()):
        return  # TF fails an empty batch with a context FixedLenFeature without default; we decode it: no rows
    assert theirs is not None, f"TF raised; we returned {ours!r}"
    event(f"both decode {'a batch' if batch else 'an empty batch'}")
    n = len(batch)
    (context, lists, lengths), (tf_context, tf_lists, tf_lengths) = ours, theirs
    assert context.keys() == tf_context.keys() and lists.keys() == tf_lists.keys()
    for key in context:
        check_context(context[key], tf_context[key], n)
    assert lengths.keys() == tf_lengths.keys()
    for key in lengths:
        assert same_values(lengths[key], tf_lengths[key].numpy())
    ragged = tf_ragged_lists(batch, sequence_spec)
    for key in lists:
        if isinstance(tf_lists[key], tf.SparseTensor):
            check_varlen_list(lists[key], tf_lists[key], ragged.get(key), n)
        else:
            mine = lists[key]
            if mine.dtype == object:
                mine = np.array([bytes(v) for v in mine.ravel().tolist()], dtype=object).reshape(mine.shape)
            assert same_values(mine, tf_lists[key].numpy()), key


def test_a_dataset_shaped_batch_matches_parse_sequence_example():
    rng = np.random.default_rng(5)
    batch = []
    for i in range(64):
        steps = int(rng.integers(0, 12))
        batch.append(
            tfr.encode_sequence_example(
                {"user": i, "name": b"u%d" % i},
                {
                    "embedding": list(rng.standard_normal((steps, 4), dtype=np.float32)),
                    "item": [int(v) for v in rng.integers(0, 1 << 40, steps)],
                    "tags": [rng.integers(0, 1000, int(rng.integers(0, 4))) for _ in range(steps)],
                },
            )
        )
    context = {"user": ("fixed", "int64", [], None), "name": ("fixed", "bytes", [], None)}
    sequence = {
        "embedding": ("sequence", "float32", [4], False),
        "item": ("sequence", "int64", [], False),
        "tags": ("varlen", "int64"),
    }
    tf_context, tf_lists, tf_lengths = tf_parse(batch, context, sequence)
    ours = tfr.decode_sequence_examples(batch, build(context, tfr, False), build(sequence, tfr, False))
    assert same_values(ours[0]["user"], tf_context["user"].numpy())
    assert ours[0]["name"].tolist() == tf_context["name"].numpy().tolist()
    for key in ("embedding", "item"):
        assert same_values(ours[1][key], tf_lists[key].numpy()) and same_values(ours[2][key], tf_lengths[key].numpy())
    check_varlen_list(ours[1]["tags"], tf_lists["tags"], tf_ragged_lists(batch, sequence)["tags"], len(batch))
