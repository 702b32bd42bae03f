"""tfrecord_lite.arrow: decode_arrow with a spec equals decode_example row by row (errors
included); without one it follows tfx-bsl's schema-less decoder (null where absent or
kindless, a null column for a key that never has a kind, an error where a key changes
kind); encode_arrow round trips through Arrow, Parquet and pandas; files and shards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import tfrecord_lite as tfr
from tests import reference
from tests.batches.test_columnar import _features_of, batches
from tests.conftest import DATA_DIR
from tests.example.test_codec import entry, example, ld
from tfrecord_lite import arrow as tfa
from tfrecord_lite._example.varints import read_varint


def _row_like(cell: Any, value: Any) -> bool:
    """An Arrow cell (as_py) equals a decode_example value (scalar, ndarray, list of bytes)."""
    if isinstance(value, bytes):
        return cell == value
    if isinstance(value, list):
        return cell == value
    arr = np.asarray(value)
    if arr.dtype == object:
        return np.asarray(cell, dtype=object).tolist() == arr.tolist()
    got = np.asarray(cell, dtype=arr.dtype).reshape(arr.shape) if np.size(cell) else np.empty(arr.shape, arr.dtype)
    return reference.same_value(got, arr)


def assert_rows_like_decode_example(records: list[bytes], spec: dict[str, Any]) -> None:
    want: list[dict[str, Any]] = []
    failure: tuple[int, Exception] | None = None
    for i, record in enumerate(records):
        try:
            want.append(tfr.decode_example(record, spec))
        except Exception as err:
            failure = i, err
            break
    if failure is not None:
        index, error = failure
        with pytest.raises(type(error)) as info:
            tfa.decode_arrow(records, spec)
        assert str(info.value) == str(error)
        notes = getattr(info.value, "__notes__", [])
        assert not hasattr(error, "add_note") or any(f"record {index} " in note for note in notes)
        return
    batch = tfa.decode_arrow(records, spec)
    assert batch.num_rows == len(records)
    assert batch.schema.names == list(spec)
    for key, s in spec.items():
        column = batch.column(key)
        assert column.type == tfa.arrow_type(s)
        for row, decoded in zip(column.to_pylist(), want, strict=True):
            assert _row_like(row, decoded[key]), (key, row, decoded[key])


@given(batches())
def test_spec_rows_equal_decode_example(batch):
    records, spec = batch
    assert_rows_like_decode_example(records, spec)


def test_spec_types():
    spec = {
        "label": tfr.FixedLenFeature([], "int64"),
        "vec": tfr.FixedLenFeature([2], "float32"),
        "grid": tfr.FixedLenFeature([2, 2], "int64", default_value=[[0, 0], [0, 0]]),
        "name": tfr.FixedLenFeature([], "bytes", default_value=b"?"),
        "ids": tfr.VarLenFeature("int64"),
        "steps": tfr.FixedLenSequenceFeature([2], "float32", allow_missing=True),
    }
    records = [
        tfr.encode_example(
            {"label": 1, "vec": [1.0, 2.0], "grid": [1, 2, 3, 4], "ids": [5], "steps": [1.0, 2.0, 3.0, 4.0]}
        ),
        tfr.encode_example({"label": 2, "vec": [3.0, 4.0], "name": b"x", "ids": np.array([], np.int64)}),
    ]
    batch = tfa.decode_arrow(records, spec)
    assert batch.schema == pa.schema(
        [
            ("label", pa.int64()),
            ("vec", pa.list_(pa.float32(), 2)),
            ("grid", pa.list_(pa.list_(pa.int64(), 2), 2)),
            ("name", pa.large_binary()),
            ("ids", pa.large_list(pa.int64())),
            ("steps", pa.large_list(pa.list_(pa.float32(), 2))),
        ]
    )
    assert batch.to_pydict()["grid"] == [[[1, 2], [3, 4]], [[0, 0], [0, 0]]]
    assert batch.to_pydict()["steps"] == [[[1.0, 2.0], [3.0, 4.0]], []]
    assert_rows_like_decode_example(records, spec)


@given(batches(), st.integers(0, 3))
def test_spec_rows_of_large_records_equal_decode_example(batch, blobs):
    """Records with long bytes values (images), one of them requested: decode_examples joins such
    records sparsely (the long values left out); decode_arrow gathers its bytes values from the
    joined buffer, so it joins them whole."""
    records, spec = batch
    pad = [entry(b"~blob%d" % k, ld(1, ld(1, bytes([k]) * 40_000))) for k in range(blobs or 1)]
    large = [example(_features_of(record), *pad) for record in records]
    assert_rows_like_decode_example(large, {**spec, "~blob0": tfr.FixedLenFeature([], "bytes")})


def test_an_empty_batch_has_the_spec_types():
    spec = {
        "label": tfr.FixedLenFeature([], "int64"),
        "grid": tfr.FixedLenFeature([2, 0], "float32"),
        "name": tfr.FixedLenFeature([], "bytes"),
        "ids": tfr.VarLenFeature("bytes"),
        "steps": tfr.FixedLenSequenceFeature([2], "int64", allow_missing=True),
    }
    batch = tfa.decode_arrow([], spec)
    assert batch.num_rows == 0
    assert batch.schema == pa.schema([(key, tfa.arrow_type(s)) for key, s in spec.items()])


# ----------------------------------------------------------------- without a spec


def _schemaless_oracle(records: list[bytes]) -> dict[str, list[Any]]:
    """decode_example without a spec, row by row: None where absent or kindless."""
    decoded = [tfr.decode_example(r) for r in records]
    keys = sorted({k for d in decoded for k in d})
    out = {}
    for key in keys:
        cells = [d.get(key) for d in decoded]
        out[key] = [None if c is None else (c if isinstance(c, list) else c.tolist()) for c in cells]
    return out


@st.composite
def schemaless_batches(draw: Any) -> list[bytes]:
    kinds = draw(st.dictionaries(st.sampled_from(["a", "bb", "é", "k"]), st.sampled_from(["int64", "float", "bytes"])))
    values = {
        "int64": st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4).map(lambda v: np.array(v, np.int64)),
        "float": st.lists(st.floats(width=32, allow_nan=False), max_size=4).map(lambda v: np.array(v, np.float32)),
        "bytes": st.lists(st.binary(max_size=5), max_size=3).map(lambda v: np.array(v, dtype=object)),
    }
    records = []
    for _ in range(draw(st.integers(0, 12))):
        features: dict[str, Any] = {}
        for key, kind in kinds.items():
            how = draw(st.sampled_from(["value", "value", "missing", "kindless"]))
            if how != "missing":
                features[key] = draw(values[kind]) if how == "value" else None
        records.append(tfr.encode_example(features))
    return records


@st.composite
def layout_batches(draw: Any) -> list[bytes]:
    """Batches in which records share layouts (each record of a schemaless batch four to six
    times, shuffled), as records of one dataset do: decoded from per-layout tables."""
    templates = draw(schemaless_batches())
    return draw(st.permutations([r for r in templates for _ in range(draw(st.integers(4, 6)))]))


@given(st.one_of(schemaless_batches(), layout_batches()))
def test_schemaless_rows_equal_decode_example(records):
    batch = tfa.decode_arrow(records)
    oracle = _schemaless_oracle(records)
    assert batch.schema.names == list(oracle)
    for key, cells in oracle.items():
        column = batch.column(key)
        if all(c is None for c in cells):
            assert column.type == pa.null()
            continue
        assert pa.types.is_large_list(column.type)
        got = column.to_pylist()
        for g, c in zip(got, cells, strict=True):
            assert (g is None) == (c is None)
            if c is not None:
                assert np.array_equal(np.asarray(g, dtype=object), np.asarray(c, dtype=object))


def test_schemaless_types_and_nulls():
    records = [
        tfr.encode_example({"i": [1, 2], "f": np.array([1.5], np.float32), "s": [b"x"], "none": None}),
        tfr.encode_example({"i": np.array([], np.int64), "f": None}),
    ]
    batch = tfa.decode_arrow(records)
    assert batch.schema == pa.schema(
        [
            ("f", pa.large_list(pa.float32())),
            ("i", pa.large_list(pa.int64())),
            ("none", pa.null()),
            ("s", pa.large_list(pa.large_binary())),
        ]
    )
    assert batch.to_pydict() == {"i": [[1, 2], []], "f": [[1.5], None], "s": [[b"x"], None], "none": [None, None]}


def test_a_key_that_changes_kind_names_both_records():
    records = [tfr.encode_example({"x": [1]}), tfr.encode_example({"y": [1]}), tfr.encode_example({"x": [b"a"]})]
    with pytest.raises(tfr.FeatureError, match=r"int64_list in record 0 but bytes_list in record 2") as info:
        tfa.decode_arrow(records)
    assert info.value.key == "x"


def test_a_corrupt_record_is_named():
    records = [tfr.encode_example({"x": [1]}), b"\x0a\x05\x0a\x03", tfr.encode_example({"x": [2]})]
    with pytest.raises(tfr.DecodeError) as info:
        tfa.decode_arrow(records)
    assert any("record 1 " in note for note in getattr(info.value, "__notes__", ["record 1 "]))


def test_values_that_differ_within_a_layout():
    rng = np.random.default_rng(0)
    rows = [
        {"f": rng.random(3, dtype=np.float32), "s": [bytes(rng.integers(0, 256, 4, np.uint8)), b"xy"], "i": [i]}
        if i % 3
        else {"i": [1000 + i], "s": [b"abcd"], "k": None}
        for i in range(60)
    ]
    records = [tfr.encode_example(row) for row in rows]
    assert tfa.decode_arrow(records).to_pydict() == {**_schemaless_oracle(records), "k": [None] * 60}


def test_a_feature_that_starts_with_field_number_0_is_refused_as_decode_example_refuses_it():
    # the walk that learns kinds took a Feature whose first byte is 0 for an empty (kindless) one: a
    # null cell for a malformed record (found by fuzzer/fuzz.py --target arrow)
    bad = example(entry(b"k", bytes(6)))
    with pytest.raises(tfr.DecodeError, match="field number 0"):
        tfr.decode_example(bad)
    with pytest.raises(tfr.DecodeError, match="field number 0"):
        tfa.decode_arrow([bad, b"", bad])


def test_a_key_given_twice_in_a_record_keeps_the_last_as_protobuf_does():
    # the walk counted both entries' kinds: "int64_list in record 0 but bytes_list in record 0"
    ints, strings = ld(3, ld(1, b"\x01\x02")), ld(1, ld(1, b"x"))
    twice = example(entry(b"k", ints), entry(b"j", ints), entry(b"k", strings))
    assert tfr.decode_example(twice)["k"] == [b"x"]
    assert tfa.decode_arrow([twice, b"", twice]).to_pylist() == [
        {"j": [1, 2], "k": [b"x"]},
        {"j": None, "k": None},
        {"j": [1, 2], "k": [b"x"]},
    ]


def test_a_feature_with_two_lists_has_the_kind_of_the_last_as_protobuf_gives_it():
    # oneof: the walk that learns kinds took the first list's kind, and the bytes of the last then
    # leaked a ValueError as int64s (found by atheris on fuzzer/fuzz.py --target arrow)
    two = example(entry(b"a", ld(3, ld(1, b"\x01")) + ld(1, ld(1, b"d"))), entry(b"n", ld(3, ld(1, b"\x05"))))
    assert tfr.decode_example(two)["a"] == [b"d"]
    assert tfa.decode_arrow([two, b"", two]).to_pylist() == [{"a": [b"d"], "n": [5]}, {"a": None, "n": None}] + [
        {"a": [b"d"], "n": [5]}
    ]


def test_an_overlong_varint_in_a_record_of_a_shared_layout_is_named():
    good = example(entry(b"i", ld(3, ld(1, b"\x81" * 9 + b"\x01\x01"))))  # two varints: 10 bytes and 1
    bad = example(entry(b"i", ld(3, ld(1, b"\x81" * 10 + b"\x01"))))  # one varint of 11 bytes
    with pytest.raises(tfr.DecodeError) as info:
        tfa.decode_arrow([good] * 4 + [bad] + [good])
    assert any("record 4 " in note for note in getattr(info.value, "__notes__", ["record 4 "]))


# ----------------------------------------------------------------- SequenceExamples


def test_sequence_examples():
    records = [
        tfr.encode_sequence_example({"ctx": [1]}, {"fl": [[1, 2], [3]], "words": [[b"a"]]}),
        tfr.encode_sequence_example({}, {"fl": [[4]]}),
    ]
    batch = tfa.decode_sequence_arrow(records)
    assert batch.schema.field("fl").type == pa.large_list(pa.large_list(pa.int64()))
    assert batch.to_pydict() == {"ctx": [[1], None], "fl": [[[1, 2], [3]], [[4]]], "words": [[[b"a"]], None]}
    typed = tfa.decode_sequence_arrow(
        records,
        {"ctx": tfr.FixedLenFeature([], "int64", default_value=0)},
        {"fl": tfr.VarLenFeature("int64"), "words": tfr.FixedLenSequenceFeature([], "bytes", allow_missing=True)},
    )
    assert typed.to_pydict() == {"ctx": [1, 0], "fl": [[[1, 2], [3]], [[4]]], "words": [[b"a"], []]}
    for i, record in enumerate(records):
        ctx, lists = tfr.decode_sequence_example(record)
        assert typed.column("ctx")[i].as_py() == (ctx["ctx"][0] if "ctx" in ctx else 0)
        assert typed.column("fl")[i].as_py() == [step.tolist() for step in lists["fl"]]


# ----------------------------------------------------------------- encoding and round trips


def test_round_trip_with_a_spec_is_exact():
    spec = {
        "label": tfr.FixedLenFeature([], "int64"),
        "vec": tfr.FixedLenFeature([2, 2], "float32"),
        "ids": tfr.VarLenFeature("int64"),
        "name": tfr.FixedLenFeature([], "bytes"),
    }
    records = [
        tfr.encode_example(
            {"label": i, "vec": np.arange(4, dtype=np.float32) * i, "ids": np.arange(i), "name": b"n%d" % i}
        )
        for i in range(5)
    ]
    batch = tfa.decode_arrow(records, spec)
    again = tfa.encode_arrow(batch)
    assert tfa.decode_arrow(again, spec).equals(batch)


def test_round_trip_without_a_spec_keeps_values():
    records = [tfr.encode_example({"i": [1, 2], "s": [b"x"]}), tfr.encode_example({"i": np.array([], np.int64)})]
    again = tfa.encode_arrow(tfa.decode_arrow(records))
    for a, b in zip(again, records, strict=True):
        assert reference.same_features(tfr.decode_example(a), tfr.decode_example(b))


def test_parquet_round_trip(tmp_path: Path):
    spec = {"label": tfr.FixedLenFeature([], "int64"), "ids": tfr.VarLenFeature("float32")}
    records = [tfr.encode_example({"label": i, "ids": np.arange(i, dtype=np.float32)}) for i in range(50)]
    source = tmp_path / "in.tfrecord.gz"
    with tfr.TFRecordWriter(str(source), compression="gzip") as writer:
        for r in records:
            writer.write(r)
    pq.write_table(tfa.read_arrow(str(source), features=spec), tmp_path / "x.parquet")
    out = tmp_path / "out.tfrecord"
    assert tfa.write_arrow(pq.read_table(tmp_path / "x.parquet"), str(out)) == 50
    for a, b in zip(tfr.iter_records(str(out)), records, strict=True):
        assert reference.same_features(tfr.decode_example(a, spec), tfr.decode_example(b, spec))


def test_pandas_round_trip():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"n": [1, 2, 3], "x": [0.5, 1.5, 2.5], "s": ["a", "b", "é"], "l": [[1, 2], [], [3]]})
    records = tfa.encode_arrow(frame)
    spec = {
        "n": tfr.FixedLenFeature([], "int64"),
        "x": tfr.FixedLenFeature([], "float32"),
        "s": tfr.FixedLenFeature([], "bytes"),
        "l": tfr.VarLenFeature("int64"),
    }
    back = tfa.decode_arrow(records, spec).to_pandas()
    assert back["n"].tolist() == [1, 2, 3]
    assert back["x"].tolist() == [0.5, 1.5, 2.5]
    assert back["s"].tolist() == [b"a", b"b", "é".encode()]
    assert [list(v) for v in back["l"]] == [[1, 2], [], [3]]


def test_encode_leaves_nulls_out_and_flattens_nested_lists():
    table = pa.table(
        {
            "n": pa.array([1, None], pa.int32()),
            "b": pa.array([True, False]),
            "nested": pa.array([[[1, 2], [3]], [[4]]], pa.list_(pa.list_(pa.int64()))),
            "fixed": pa.array([[1.0, 2.0], [3.0, 4.0]], pa.list_(pa.float64(), 2)),
        }
    )
    first, second = (tfr.decode_example(r) for r in tfa.encode_arrow(table))
    assert first["n"].tolist() == [1] and "n" not in second
    assert first["b"].tolist() == [1] and second["b"].tolist() == [0]
    assert first["nested"].tolist() == [1, 2, 3] and second["nested"].tolist() == [4]
    assert second["fixed"].dtype == np.float32 and second["fixed"].tolist() == [3.0, 4.0]


@pytest.mark.parametrize(
    ("column", "message"),
    [
        (pa.array([{"a": 1}]), "struct"),
        (pa.array([1], pa.timestamp("s")), "timestamp"),
        (pa.array([[1, None]]), "null inside a list"),
        (pa.array([2**64 - 1], pa.uint64()), "does not fit int64"),
    ],
)
def test_encode_errors_name_the_column(column, message):
    with pytest.raises(tfr.FeatureError, match=message) as info:
        tfa.encode_arrow(pa.table({"col": column}))
    assert info.value.key == "col"


def test_strict_float64():
    table = pa.table({"x": pa.array([0.1], pa.float64())})
    assert tfr.decode_example(tfa.encode_arrow(table)[0])["x"].tolist() == [np.float32(0.1)]
    with pytest.raises(tfr.FeatureError, match="not exact as float32"):
        tfa.encode_arrow(table, strict=True)
    assert tfa.encode_arrow(pa.table({"x": pa.array([0.5], pa.float64())}), strict=True)


def test_encode_rejects_other_data():
    with pytest.raises(TypeError, match="RecordBatch"):
        tfa.encode_arrow({"a": [1]})


# ----------------------------------------------------------------- files, shards, inference


def _shards(tmp_path: Path, n: int = 3, per: int = 40) -> list[bytes]:
    records = []
    for s in range(n):
        with tfr.TFRecordWriter(str(tmp_path / f"part-{s}.tfrecord.gz"), compression="gzip") as writer:
            for i in range(per):
                r = tfr.encode_example({"id": s * per + i, "v": np.arange(i % 3, dtype=np.float32)})
                writer.write(r)
                records.append(r)
    return records


def test_iter_arrow_batches_over_a_glob_of_gzip_shards(tmp_path: Path):
    records = _shards(tmp_path)
    batches = list(tfa.iter_arrow_batches(str(tmp_path / "part-*.tfrecord.gz"), batch_size=16))
    assert [b.num_rows for b in batches] == [16] * 7 + [8]  # batches span files, as tf.data's do
    ids = [row[0] for b in batches for row in b.column("id").to_pylist()]
    assert ids == [int(tfr.decode_example(r)["id"][0]) for r in records]


def test_read_arrow_columns_and_inference(tmp_path: Path):
    _shards(tmp_path)
    paths = sorted(str(p) for p in tmp_path.glob("part-*"))
    spec = tfr.infer_features(paths)
    assert spec == {"id": tfr.FixedLenFeature([], "int64"), "v": tfr.VarLenFeature("float32")}
    table = tfa.read_arrow(paths, features=spec, columns=["v"])
    assert table.schema.names == ["v"] and table.num_rows == 120
    untyped = tfa.read_arrow(paths)
    assert untyped.num_rows == 120 and untyped.column("id").type == pa.large_list(pa.int64())


def _with_odd_features(good: list[dict[str, Any]]) -> list[bytes]:
    """Examples with the features of `good`, plus "kinds", int64 in some records and bytes in
    others, and "overlong", an int64 list holding a varint of 11 bytes."""
    overlong = entry(b"overlong", ld(3, ld(1, b"\x80" * 10 + b"\x01")))
    out = []
    for i, features in enumerate(good):
        record = tfr.encode_example({**features, "kinds": [i] if i % 2 else [b"x"]})
        _, start = read_varint(record, 1, len(record))
        out.append(example(record[start:], overlong))  # the same map entries, and one more
    return out


@pytest.mark.parametrize("spec", [None, {"id": tfr.FixedLenFeature([], "int64"), "v": tfr.VarLenFeature("float32")}])
def test_read_arrow_decodes_only_the_columns(tmp_path: Path, spec: dict[str, Any] | None):
    good = [{"id": i, "v": np.full(i % 3, i, np.float32), "name": [b"n%d" % i]} for i in range(50)]
    odd = tmp_path / "odd.tfrecord"
    with tfr.TFRecordWriter(odd) as writer:
        for record in _with_odd_features(good):
            writer.write(record)
    clean = tmp_path / "clean.tfrecord"
    with tfr.TFRecordWriter(clean) as writer:
        for features in good:
            writer.write_example(features)
    with pytest.raises((tfr.FeatureError, tfr.DecodeError)):
        tfa.read_arrow(odd)  # every feature decoded: "kinds" changes kind, "overlong" is malformed
    for columns in (["v", "id"], ["id"]):
        got = tfa.read_arrow(odd, features=spec, columns=columns)
        assert got.equals(tfa.read_arrow(clean, features=spec).select(columns))  # selected after decoding all
        batches = list(tfa.iter_arrow_batches(odd, features=spec, columns=columns, batch_size=16))
        assert [b.num_rows for b in batches] == [16, 16, 16, 2]
        assert pa.Table.from_batches(batches).equals(got)
    assert tfa.read_arrow(clean, columns=["name", "id"]).equals(tfa.read_arrow(clean).select(["name", "id"]))


def test_columns_that_a_batch_lacks_are_null_there(tmp_path: Path):
    path = tmp_path / "rare.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        for i in range(20):
            writer.write_example({"id": i, **({"rare": [b"r"]} if i >= 16 else {})})
    first, last = tfa.iter_arrow_batches(path, columns=["rare", "id"], batch_size=16)
    assert first.schema.names == last.schema.names == ["rare", "id"]
    assert first.column("rare").type == pa.null() and last.column("rare").to_pylist() == [[b"r"]] * 4
    table = tfa.read_arrow(path, columns=["rare", "id"])
    assert table.column("rare").to_pylist() == [None] * 16 + [[b"r"]] * 4
    assert tfa.read_arrow(path, columns=["absent"]).column("absent").null_count == 20
    with pytest.raises(KeyError, match="absent"):
        tfa.read_arrow(path, features={"id": tfr.FixedLenFeature([], "int64")}, columns=["absent"])


def test_infer_features_checks_kinds_and_counts():
    records = [tfr.encode_example({"a": [1, 2], "b": [1.0], "c": [b"x"]}), tfr.encode_example({"a": [3, 4], "c": None})]
    assert tfr.infer_features(records) == {
        "a": tfr.FixedLenFeature([2], "int64"),
        "b": tfr.VarLenFeature("float32"),
        "c": tfr.VarLenFeature("bytes"),
    }
    assert tfr.infer_features(records, max_records=1)["b"] == tfr.FixedLenFeature([], "float32")
    with pytest.raises(tfr.FeatureError, match="int64 in record 0 but bytes in record 1"):
        tfr.infer_features([tfr.encode_example({"a": [1]}), tfr.encode_example({"a": [b"x"]})])


@pytest.mark.parametrize("name", ["mnist.tfrecord", "penguin-train.tfrecord.gz"])
def test_corpus_files(name: str):
    path = str(DATA_DIR / "tfx" / name)
    spec = tfr.infer_features(path)
    records = list(tfr.iter_records(path))
    assert_rows_like_decode_example(records[:200], spec)
    table = tfa.read_arrow(path, features=spec)
    assert table.num_rows == len(records)
    assert tfa.encode_arrow(table)[:5] and all(
        reference.same_features(tfr.decode_example(a, spec), tfr.decode_example(b, spec))
        for a, b in zip(tfa.encode_arrow(table.slice(0, 50)), records[:50], strict=True)
    )


# ----------------------------------------------------------------- the CLI


def _cli(*args: str, cwd: Path) -> Any:
    from tests.cli.test_cli import cli

    return cli(*args, cwd=cwd)


def test_cli_gzip_shards_to_parquet_and_back(tmp_path: Path):
    records = _shards(tmp_path)
    shards = sorted(str(p) for p in tmp_path.glob("part-*"))
    spec_json = _cli("schema", "--all", "--spec-json", *shards, cwd=tmp_path).stdout
    (tmp_path / "spec.json").write_text(spec_json)
    spec = tfr.infer_features(shards)
    assert spec_json.strip() and "FixedLenFeature" in spec_json
    _cli("convert", *shards, "all.parquet", "--features", "spec.json", "--batch-size", "25", cwd=tmp_path)
    parquet = pq.ParquetFile(tmp_path / "all.parquet")
    row_groups = [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)]
    assert row_groups == [25] * 4 + [20]  # batches span the shards
    assert parquet.metadata.num_rows == len(records)
    assert parquet.schema_arrow == pa.schema([(k, tfa.arrow_type(s)) for k, s in spec.items()])
    _cli("convert", "all.parquet", "back/part", "--shards", "2", "--to", "gzip", cwd=tmp_path)
    back = sorted(str(p) for p in (tmp_path / "back").glob("part-*.tfrecord.gz"))
    assert len(back) == 2
    again = sorted(
        (r for path in back for r in tfr.iter_records(path)), key=lambda r: tfr.decode_example(r, spec)["id"]
    )
    assert len(again) == len(records)  # shards share the records out: compare in id order
    for a, b in zip(again, records, strict=True):
        assert reference.same_features(tfr.decode_example(a, spec), tfr.decode_example(b, spec))


def test_cli_infers_the_schema_and_writes_arrow_and_csv(tmp_path: Path):
    records = [tfr.encode_example({"id": i, "name": f"n{i}", "x": 0.5 * i}) for i in range(10)]
    with tfr.TFRecordWriter(str(tmp_path / "in.tfrecord")) as writer:
        for r in records:
            writer.write(r)
    proc = _cli("convert", "in.tfrecord", "out.arrow", cwd=tmp_path)
    assert "inferring the schema in a first pass" in proc.stderr
    _cli("convert", "in.tfrecord", "--to", "csv", "csv/", cwd=tmp_path)
    lines = (tmp_path / "csv" / "in.csv").read_text().splitlines()
    assert lines[0] == '"id","name","x"' and lines[3] == '2,"n2",1'
    _cli("convert", "out.arrow", "from-arrow.tfrecord", cwd=tmp_path)
    for a, b in zip(tfr.iter_records(str(tmp_path / "from-arrow.tfrecord")), records, strict=True):
        assert reference.same_features(tfr.decode_example(a), tfr.decode_example(b))
    _cli("convert", "csv/in.csv", "from-csv.tfrecord", cwd=tmp_path)
    first = tfr.decode_example(next(iter(tfr.iter_records(str(tmp_path / "from-csv.tfrecord")))))
    assert first["name"] == [b"n0"] and first["id"].tolist() == [0]


def test_cli_csv_refuses_lists(tmp_path: Path):
    from tests.cli.test_cli import cli

    _shards(tmp_path, n=1)
    proc = cli("convert", "part-0.tfrecord.gz", "out.csv", cwd=tmp_path, ok=False)
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 2 and last.startswith("tfrecord-lite: error: out.csv: feature 'v'")
    assert "CSV holds one value per cell" in last
    assert not (tmp_path / "out.csv").exists()
