"""SequenceExamples through the Arrow paths: read_arrow / iter_arrow_batches / decode_arrow find the
feature lists (a list<list<T>> column each, marked in the schema), Parquet, Arrow IPC and pandas
carry them, and write_arrow writes SequenceExamples back whose decoding equals the input's (the
TFX-written file of tests/data, and generated batches). What cannot be one column — a key that is
a context feature and a feature list, a kind that changes — is an error naming it, never a
dropped column."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import tfrecord_lite as tfr
from tests import reference
from tests._records import write_records
from tests.conftest import DATA_DIR
from tests.example.test_codec import F32, I64
from tfrecord_lite import arrow as tfa

TFX_SEQUENCES = DATA_DIR / "tfx" / "sequence-eval.tfrecord.gz"
MARK = {b"tfrecord_lite.section": b"feature_list"}


def decoded(record: bytes) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """A record as the protobuf runtime reads it; a context Feature with no kind counts as absent
    (Arrow has one null for both, as TensorFlow's parser treats them alike)."""
    context, lists = reference.decode_sequence_example(record)
    return {k: v for k, v in context.items() if v is not None}, lists


def assert_same_records(got: list[bytes], want: list[bytes]) -> None:
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        (ctx_a, lists_a), (ctx_b, lists_b) = decoded(a), decoded(b)
        assert reference.same_features(ctx_a, ctx_b), i
        assert lists_a.keys() == lists_b.keys(), i
        for key in lists_a:
            assert len(lists_a[key]) == len(lists_b[key]), (i, key)
            assert all(reference.same_value(x, y) for x, y in zip(lists_a[key], lists_b[key], strict=True)), (i, key)


def via_parquet(table: Any) -> Any:
    if not table.num_columns:  # Parquet keeps no row count without a column
        return table
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return pq.read_table(io.BytesIO(sink.getvalue()))


# ----------------------------------------------------------------- the TFX-written file


def test_tfx_sequence_file_keeps_its_feature_lists_through_parquet(tmp_path: Path) -> None:
    records = list(tfr.iter_records(TFX_SEQUENCES))
    table = tfa.read_arrow(TFX_SEQUENCES)
    assert table.num_rows == len(records)
    assert table.column_names == ["f", "i", "s"]  # the context, then the feature list
    field = table.schema.field("s")
    assert field.type == pa.large_list(pa.large_list(pa.large_binary())) and field.metadata == MARK
    first_lists = decoded(records[0])[1]
    assert table.column("s")[0].as_py() == first_lists["s"]
    back = tmp_path / "back.tfrecord"
    assert tfa.write_arrow(via_parquet(table), back) == len(records)
    assert_same_records(list(tfr.iter_records(back)), records)


def test_arrow_ipc_file_keeps_the_mark(tmp_path: Path) -> None:
    import pyarrow.ipc as ipc

    table = tfa.read_arrow(TFX_SEQUENCES)
    path = tmp_path / "seq.arrow"
    with ipc.new_file(path, table.schema) as writer:
        writer.write_table(table)
    assert_same_records(tfa.encode_arrow(ipc.open_file(path).read_all()), list(tfr.iter_records(TFX_SEQUENCES)))


def test_iter_arrow_batches_and_decode_arrow_find_the_feature_lists() -> None:
    records = list(tfr.iter_records(TFX_SEQUENCES))[:300]
    batches = list(tfa.iter_arrow_batches(TFX_SEQUENCES, batch_size=128))
    assert all("s" in batch.schema.names for batch in batches)
    assert (
        pa.Table.from_batches(batches[:2])
        .slice(0, 256)
        .equals(pa.Table.from_batches([tfa.decode_arrow(records[:256])]))
    )
    assert tfa.decode_arrow(records).column("s").to_pylist() == [decoded(r)[1]["s"] for r in records]


def test_sequence_features_spec_types_the_feature_lists() -> None:
    context, lists = tfr.infer_sequence_features(TFX_SEQUENCES)
    assert lists == {"s": tfr.FixedLenSequenceFeature([], "bytes")}
    table = tfa.read_arrow(TFX_SEQUENCES, features=context, sequence_features=lists)
    assert table.schema.field("s").type == pa.large_list(pa.large_binary())
    assert table.schema.field("s").metadata == MARK
    records = list(tfr.iter_records(TFX_SEQUENCES))
    for i in (0, 1, 4499):
        ctx, seq = tfr.decode_sequence_example(records[i], context, lists)
        assert table.column("s")[i].as_py() == list(seq["s"])
        assert table.column("i")[i].as_py() == ctx["i"].tolist()
    only = tfa.read_arrow(TFX_SEQUENCES, features=context, sequence_features=lists, columns=["s", "i"])
    assert only.column_names == ["s", "i"] and only.column("s").equals(table.column("s"))


def test_pandas_round_trip_names_the_feature_lists() -> None:
    pytest.importorskip("pandas")
    records = list(tfr.iter_records(TFX_SEQUENCES))[:50]
    frame = tfa.read_arrow(TFX_SEQUENCES).slice(0, 50).to_pandas()
    assert [list(step) for step in frame["s"][3]] == decoded(records[3])[1]["s"]
    assert_same_records(tfa.encode_arrow(frame, feature_lists=["s"]), records)
    with pytest.raises(KeyError, match="'nope' is not a column"):
        tfa.encode_arrow(frame, feature_lists=["nope"])


# ----------------------------------------------------------------- what used to fall through


def test_mixed_examples_and_sequence_examples_across_batches(tmp_path: Path) -> None:
    records = [tfr.encode_example({"a": [i]}) for i in range(3)]
    records += [tfr.encode_sequence_example({"a": [9]}, {"s": [[1], [2, 3]], "e": [], "k": [None]})] * 3
    path = write_records(tmp_path / "mixed.tfrecord", records)
    for batch_size in (2, 4, 100):
        table = pa.concat_tables(
            [pa.Table.from_batches([b]) for b in tfa.iter_arrow_batches(path, batch_size=batch_size)],
            promote_options="default",
        )
        assert table.num_rows == 6 and tfa.read_arrow(path).num_rows == 6
        assert table.column("s").to_pylist() == [None] * 3 + [[[1], [2, 3]]] * 3
        assert table.column("e").to_pylist() == [None] * 3 + [[]] * 3  # an empty feature list stays one
        assert table.column("k").to_pylist() == [None] * 3 + [[None]] * 3  # a step with no kind stays one
        assert_same_records(tfa.encode_arrow(via_parquet(tfa.read_arrow(path))), records)


def test_feature_list_in_some_records_only_is_null_elsewhere() -> None:
    records = [
        tfr.encode_sequence_example({"c": [1.5]}, {"s": [[b"x"]]}),
        tfr.encode_sequence_example({"c": [2.5]}, {"t": [[7]]}),
    ]
    batch = tfa.decode_arrow(records)
    assert batch.to_pydict() == {"c": [[1.5], [2.5]], "s": [[[b"x"]], None], "t": [None, [[7]]]}
    assert_same_records(tfa.encode_arrow(batch), records)


def test_a_kind_that_changes_is_an_error_naming_it(tmp_path: Path) -> None:
    records = [tfr.encode_sequence_example({}, {"s": [[1]]}), tfr.encode_sequence_example({}, {"s": [[1.0]]})]
    with pytest.raises(tfr.FeatureError, match=r"'s'.*int64_list in record 0 but float_list in record 1"):
        tfa.decode_arrow(records)
    path = write_records(tmp_path / "kinds.tfrecord", [records[0]] * 2048 + [records[1]])
    with pytest.raises(tfr.FeatureError, match=r"'s'.*feature list large_list<.*int64.*in batch 0 but .*float"):
        tfa.read_arrow(path)  # batches of 2048: each batch alone is fine
    with pytest.raises(tfr.FeatureError, match="'s'"):
        tfr.infer_sequence_features(records)


def test_a_feature_list_kindless_in_one_batch_takes_its_kind_from_another(tmp_path: Path) -> None:
    records = [tfr.encode_sequence_example({"c": None}, {"s": [None]})] * 2048
    records.append(tfr.encode_sequence_example({"c": [1]}, {"s": [[5]]}))
    path = write_records(tmp_path / "late.tfrecord", records)
    table = tfa.read_arrow(path)  # batch 0: s of null steps, c null; batch 1: both typed
    assert table.schema.field("s").type == pa.large_list(pa.large_list(pa.int64()))
    assert table.schema.field("s").metadata == MARK
    assert table.column("s")[0].as_py() == [None] and table.column("s")[2048].as_py() == [[5]]
    assert_same_records(tfa.encode_arrow(table), records)


def test_columns_pick_context_and_feature_lists_without_a_spec() -> None:
    batches = list(tfa.iter_arrow_batches(TFX_SEQUENCES, columns=["s", "nope", "i"], batch_size=1000))
    assert all(batch.schema.names == ["s", "nope", "i"] for batch in batches)
    assert batches[0].schema.field("s").metadata == MARK
    assert batches[0].column("nope").null_count == batches[0].num_rows
    assert tfa.read_arrow(TFX_SEQUENCES, columns=["s"]).column("s").equals(tfa.read_arrow(TFX_SEQUENCES).column("s"))


def test_a_key_both_context_and_feature_list_is_an_error_naming_it() -> None:
    records = [tfr.encode_sequence_example({"x": [1]}, {"x": [[2]]})]
    for read in (tfa.decode_arrow, tfr.infer_sequence_features):
        with pytest.raises(tfr.FeatureError, match=r"'x'.*both a context feature and a feature list"):
            read(records)


def test_an_example_spec_naming_a_feature_list_is_an_error() -> None:
    records = [tfr.encode_sequence_example({"c": [1]}, {"s": [[2]]})]
    with pytest.raises(tfr.FeatureError, match=r"'s'.*is a feature list in record 0.*sequence_features"):
        tfa.decode_arrow(records, {"s": tfr.VarLenFeature("int64")})
    assert tfa.decode_arrow(records, {"c": tfr.VarLenFeature("int64")}).column_names == ["c"]  # a chosen subset
    with pytest.raises(tfr.FeatureError, match=r"'s'.*feature list.*infer_sequence_features"):
        tfr.infer_features(records)


def test_marked_columns_that_are_no_lists_of_steps_are_refused() -> None:
    with pytest.raises(tfr.FeatureError, match=r"'a'.*not a list of steps"):
        tfa.encode_arrow(pa.table({"a": [1, 2]}), feature_lists=["a"])


# ----------------------------------------------------------------- generated batches

KINDS = {
    "int64": st.lists(I64, max_size=4).map(lambda v: np.array(v, np.int64)),
    "float": st.lists(F32, max_size=4).map(lambda v: np.array(v, np.float32)),
    "bytes": st.lists(st.binary(max_size=6), max_size=3).map(lambda v: np.array(v, dtype=object)),
}


@st.composite
def sequence_batches(draw: Any) -> list[bytes]:
    """Records of one dataset: each key keeps one kind; a record may be an Example, lack a key,
    hold kindless values, empty lists or no steps."""
    keys = st.text("abcxyz", min_size=1, max_size=3)
    context_kinds = draw(st.dictionaries(keys.map("c".__add__), st.sampled_from(sorted(KINDS)), max_size=3))
    list_kinds = draw(st.dictionaries(keys.map("l".__add__), st.sampled_from(sorted(KINDS)), max_size=3))
    records = []
    for _ in range(draw(st.integers(1, 6))):
        context = {k: draw(st.none() | KINDS[kind]) for k, kind in context_kinds.items() if draw(st.booleans())}
        lists = {
            k: draw(st.lists(st.none() | KINDS[kind], max_size=3))
            for k, kind in list_kinds.items()
            if draw(st.booleans())
        }
        example = not lists and draw(st.booleans())
        records.append(tfr.encode_example(context) if example else tfr.encode_sequence_example(context, lists))
    return records


@settings(max_examples=60, deadline=None)
@given(sequence_batches())
def test_generated_batches_round_trip_through_parquet(records: list[bytes]) -> None:
    batch = tfa.decode_arrow(records)
    assert batch.num_rows == len(records)
    assert_same_records(tfa.encode_arrow(via_parquet(pa.Table.from_batches([batch]))), records)
    context, lists = tfr.infer_sequence_features(records)
    typed = tfa.decode_arrow(records, context, sequence_features=lists)
    for record, back in zip(records, tfa.encode_arrow(via_parquet(pa.Table.from_batches([typed]))), strict=True):
        want, got = (tfr.decode_sequence_example(r, context, lists) for r in (record, back))
        for a, b in zip(want, got, strict=True):
            assert a.keys() == b.keys()
            for key in a:
                steps_a, steps_b = (v if isinstance(v, list) else [v] for v in (a[key], b[key]))
                assert all(reference.same_value(x, y) for x, y in zip(steps_a, steps_b, strict=True))


def test_steps_of_no_values_are_counted_or_refused() -> None:
    empty = np.array([], np.int64)
    records = [tfr.encode_sequence_example({}, {"s": [empty, empty]})]
    lists = tfr.infer_sequence_features(records)[1]
    assert lists == {"s": tfr.VarLenFeature("int64")}
    assert tfa.decode_arrow(records, {}, sequence_features=lists).column("s").to_pylist() == [[[], []]]
    assert tfa.decode_arrow(records).column("s").to_pylist() == [[[], []]]
    with pytest.raises(ValueError, match=r"steps of no values.*VarLenFeature"):
        tfa.decode_arrow(records, {}, sequence_features={"s": tfr.FixedLenSequenceFeature([0], "int64")})


def _as_lists(value: Any) -> Any:
    return value.to_list() if isinstance(value, tfr.Ragged) else value.tolist()


R = tfr.RaggedFeature
RAGGED_SPECS = [
    ({"z": R("int64")}, {"a": R("int64")}),
    ({"z": R("int64", partitions=[R.UniformRowLength(2)])}, {"a": R("int64", partitions=[R.RowLengths("p")])}),
    (None, {"a": R("int64", partitions=[R.RowLengths("p"), R.UniformRowLength(1)])}),
    ({"zz": R("int64", "z", [R.RowSplits("zs")])}, {"b": R("bytes", partitions=[R.UniformRowLength(1)])}),
]


@pytest.mark.parametrize(("context", "lists"), RAGGED_SPECS)
def test_ragged_features_of_sequence_examples_become_nested_list_columns(context: Any, lists: Any) -> None:
    records = [
        tfr.encode_sequence_example(
            {"z": [1, 2, 3, 4], "zs": [0, 1, 4]},
            {
                "a": [np.array([1, 2]), np.array([3])],
                "p": [np.array([1, 1]), np.array([1])],
                "b": [[b"x", b"y"], np.array([], dtype=bytes)],
            },
        ),
        tfr.encode_sequence_example(
            {"z": [5, 6], "zs": [0, 2]}, {"a": [np.array([5, 6, 7, 8])], "p": [np.array([2, 2])], "b": [[b"w"]]}
        ),
    ]
    table = tfa.decode_arrow(records, features=context, sequence_features=lists)
    for record, row in zip(records, table.to_pylist(), strict=True):
        want_context, want_lists = tfr.decode_sequence_example(record, context, lists)
        for key, value in {**want_lists, **(want_context if context else {})}.items():
            assert row[key] == _as_lists(value), key
