"""decode_examples (batched, columnar) equals decode_example applied record by record and
stacked: for every spec kind, shape, default and error."""

from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests import reference
from tests.example.test_codec import entry, example, ld, varint
from tfrecord_lite._batches.columnar import decode_records

DTYPES = {"int64": np.int64, "float32": np.float32}


def _per_record(records: list[Any], spec: dict[str, Any]) -> Any:
    """decode_example on each record, or (index, error) of the first record it rejects."""
    out = []
    for i, record in enumerate(records):
        try:
            out.append(tfr.decode_example(record, spec))
        except Exception as err:
            return i, err
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (bytes, list)) or isinstance(b, (bytes, list)):
        return a == b
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == object or b.dtype == object:
        return a.shape == b.shape and a.tolist() == b.tolist()
    return reference.same_value(a, b)


def assert_like_stacked(records: list[Any], spec: dict[str, Any], *, fast: bool = False) -> dict[str, Any]:
    """decode_examples(records, spec) is decode_example per record, stacked; or raises its error.

    With `fast`, the records must also have been decoded by the batched path itself
    (none handed to the single-record decoder), so that it is what was compared.
    """
    want = _per_record(records, spec)
    if isinstance(want, tuple):
        index, err = want
        with pytest.raises(type(err)) as info:
            tfr.decode_examples(records, spec)
        assert str(info.value) == str(err)
        for attr in ("key", "path", "offset"):
            assert getattr(info.value, attr, None) == getattr(err, attr, None)
        notes = getattr(info.value, "__notes__", [])
        assert not hasattr(err, "add_note") or any(f"record {index} " in note for note in notes)
        return {}
    got = tfr.decode_examples(records, spec)
    if fast:
        assert decode_records(records, spec)[1] == []
    assert list(got) == list(spec)
    n = len(records)
    for key, s in spec.items():
        column, rows = got[key], [d[key] for d in want]
        if isinstance(s, tfr.FixedLenFeature):
            assert isinstance(column, np.ndarray) and column.shape == (n, *s.shape)
            assert column.dtype == (object if s.dtype == "bytes" else DTYPES[s.dtype])
            assert all(_same(column[i], rows[i]) for i in range(n)), key
        elif isinstance(s, tfr.VarLenFeature) and s.dtype == "bytes":
            assert column == rows
        elif isinstance(s, tfr.VarLenFeature):
            assert isinstance(column, tfr.Ragged) and column.values.dtype == DTYPES[s.dtype]
            assert column.row_splits.dtype == np.int64 and len(column.row_splits) == n + 1
            assert column.row_lengths().tolist() == [len(r) for r in rows]
            assert column.row_splits[-1] == len(column.values)
            assert all(_same(column.row(i), rows[i]) for i in range(n)), key
        else:
            width = max((len(r) for r in rows), default=0)
            assert column.shape == (n, width, *s.shape)
            pad = s.default_value if s.default_value is not None else (b"" if s.dtype == "bytes" else 0)
            for i, r in enumerate(rows):
                assert _same(column[i, : len(r)], r), key
                for step in column[i, len(r) :]:
                    assert _same(step, np.full(s.shape, pad, dtype=column.dtype))
    return got


# ----------------------------------------------------------------- hypothesis: random specs and batches


def _values(dtype: str, count: int) -> st.SearchStrategy:
    if dtype == "int64":
        elems = st.integers(-(2**63), 2**63 - 1)
        return st.lists(elems, min_size=count, max_size=count).map(lambda v: np.array(v, np.int64))
    if dtype == "float32":
        elems = st.floats(width=32)
        return st.lists(elems, min_size=count, max_size=count).map(lambda v: np.array(v, np.float32))
    return st.lists(st.binary(max_size=6), min_size=count, max_size=count).map(
        lambda v: np.array(v, dtype=object) if v else np.array([], dtype=bytes)
    )


@st.composite
def spec_entries(draw: Any) -> Any:
    dtype = draw(st.sampled_from(["int64", "float32", "bytes"]))
    category = draw(st.sampled_from(["fixed", "fixed_default", "var", "seq", "seq_default"]))
    if category.startswith("fixed"):
        shape = draw(st.sampled_from([(), (1,), (3,), (0,), (2, 2)]))
    else:
        shape = draw(st.sampled_from([(), (2,), (1, 2)]))
    # FixedLen defaults have the spec's shape; a FixedLenSequence default is the scalar that pads.
    default_shape = shape if category.startswith("fixed") else ()
    size = math.prod(default_shape)
    default = None
    if category.endswith("default"):
        if dtype == "bytes":
            default = np.array([b"d%d" % i for i in range(size)], dtype=object).reshape(default_shape)
        else:
            default = draw(_values(dtype, size)).reshape(default_shape)
    if category.startswith("fixed"):
        spec = tfr.FixedLenFeature(shape, dtype, default_value=default)
    elif category == "var":
        spec = tfr.VarLenFeature(dtype)
    else:
        spec = tfr.FixedLenSequenceFeature(shape, dtype, allow_missing=True, default_value=default)
    return spec


@st.composite
def value_for(draw: Any, spec: Any) -> Any:
    """Mostly a value that fits the spec; sometimes missing, kind-less, or of the wrong kind / count."""
    how = draw(st.sampled_from(["fit"] * 6 + ["missing", "kindless", "wrong_kind", "wrong_count"]))
    if how == "missing":
        return "missing"
    if how == "kindless":
        return None
    dtype = spec.dtype
    if how == "wrong_kind":
        dtype = draw(st.sampled_from([d for d in ("int64", "float32", "bytes") if d != spec.dtype]))
    size = math.prod(getattr(spec, "shape", ()))
    if isinstance(spec, tfr.VarLenFeature) or how == "wrong_count":
        count = draw(st.integers(0, 5))
    elif isinstance(spec, tfr.FixedLenSequenceFeature):
        count = size * draw(st.integers(0, 3))
    else:
        count = size
    return draw(_values(dtype, count))


@st.composite
def batches(draw: Any) -> Any:
    keys = draw(
        st.lists(st.sampled_from(["a", "bb", "ccc", "", "é", "long_key_name"]), min_size=1, max_size=4, unique=True)
    )
    spec = {k: draw(spec_entries()) for k in keys}
    records = []
    for _ in range(draw(st.integers(0, 10))):
        features = {}
        for k in keys:
            value = draw(value_for(spec[k]))
            if not (isinstance(value, str) and value == "missing"):
                features[k] = value
        if draw(st.booleans()):
            features["unrequested"] = draw(_values(draw(st.sampled_from(["int64", "float32", "bytes"])), 2))
        records.append(tfr.encode_example(features))
    return records, spec


@given(batches())
def test_batches_decode_like_stacked_single_records(batch):
    records, spec = batch
    assert_like_stacked(records, spec, fast=all(key.isascii() for key in spec))


def _features_of(record: bytes) -> bytes:
    """The map entries of a canonical Example: what follows its one field's tag and length."""
    if not record:
        return b""
    end = 1
    while record[end] & 0x80:
        end += 1
    return record[end + 1 :]


@given(batches(), st.integers(0, 3))
def test_large_records_decode_like_stacked_single_records_too(batch, blobs):
    """The same batches with a long unrequested bytes value or two in every record, so that they take
    the sparse join (values sliced from the records)."""
    records, spec = batch
    pad = [entry(b"~blob%d" % k, ld(1, ld(1, bytes([k]) * 40_000))) for k in range(blobs or 1)]
    large = [example(_features_of(record), *pad) for record in records]
    assert all(len(r) >= 40_000 for r in large)
    assert_like_stacked(large, spec, fast=all(key.isascii() for key in spec))


# ----------------------------------------------------------------- every spec kind, spelled out

ROWS: list[dict[str, Any]] = [
    {"label": 1, "vec": [1.0, 2.0], "name": b"a", "ids": [1, 2, 3], "tags": [b"x"], "steps": [1, 2, 3, 4]},
    {"label": 2, "vec": [3.0, 4.0], "name": b"bb", "ids": np.array([], np.int64), "tags": [b"y", b"z"]},
    {"label": -(2**63), "vec": [5.0, np.nan], "name": b"", "ids": [2**63 - 1], "steps": [5, 6], "kindless": None},
]
RECORDS = [tfr.encode_example(row) for row in ROWS]
EVERY_SPEC_KIND = {
    "label": tfr.FixedLenFeature([], "int64"),
    "vec": tfr.FixedLenFeature([2], "float32"),
    "vec_2d": tfr.FixedLenFeature([1, 2], "float32", default_value=[[7, 8]]),
    "name": tfr.FixedLenFeature([], "bytes"),
    "name_or": tfr.FixedLenFeature([], "string", default_value="dé"),
    "ids": tfr.VarLenFeature("int64"),
    "tags": tfr.VarLenFeature("bytes"),
    "no_floats": tfr.VarLenFeature("float32"),
    "steps": tfr.FixedLenSequenceFeature([2], "int64", allow_missing=True, default_value=-1),
    "kindless": tfr.FixedLenSequenceFeature([], "bytes", allow_missing=True),
}


def test_every_spec_kind():
    spec = EVERY_SPEC_KIND
    got = assert_like_stacked(RECORDS, spec, fast=True)
    assert got["label"].tolist() == [1, 2, -(2**63)]
    assert got["vec_2d"].tolist() == [[[7, 8]]] * 3
    assert got["name"].tolist() == [b"a", b"bb", b""]
    assert got["name_or"].tolist() == ["dé".encode()] * 3
    assert got["ids"].row_splits.tolist() == [0, 3, 3, 4] and got["ids"].values.tolist() == [1, 2, 3, 2**63 - 1]
    assert got["ids"].to_list() == [[1, 2, 3], [], [2**63 - 1]]
    assert got["tags"] == [[b"x"], [b"y", b"z"], []]
    assert got["no_floats"].values.dtype == np.float32 and got["no_floats"].row_splits.tolist() == [0, 0, 0, 0]
    assert got["steps"].tolist() == [[[1, 2], [3, 4]], [[-1, -1], [-1, -1]], [[5, 6], [-1, -1]]]
    assert got["kindless"].shape == (3, 0)


def test_returned_arrays_are_writable_and_do_not_share_the_default():
    spec = {"vec": tfr.FixedLenFeature([2], "float32"), "d": tfr.FixedLenFeature([2], "int64", default_value=[1, 2])}
    got = tfr.decode_examples(RECORDS, spec)
    got["vec"][0, 0] = 9
    got["d"][0, 0] = 9
    assert tfr.decode_examples(RECORDS, spec)["d"][0].tolist() == [1, 2]


SPECS_AND_FIRST_BAD_RECORD = [
    ({"missing": tfr.FixedLenFeature([], "int64")}, 0),
    ({"label": tfr.FixedLenFeature([], "float32")}, 0),
    ({"vec": tfr.FixedLenFeature([3], "float32")}, 0),
    ({"tags": tfr.VarLenFeature("int64")}, 0),
    ({"steps": tfr.FixedLenSequenceFeature([3], "int64", allow_missing=True)}, 0),
    ({"ids": tfr.FixedLenFeature([3], "int64", default_value=[0, 0, 0])}, 1),
    ({"steps": tfr.FixedLenFeature([4], "int64")}, 1),
    ({"name": tfr.FixedLenFeature([], "bytes", default_value=b"")}, None),
]


@pytest.mark.parametrize(("spec", "bad"), SPECS_AND_FIRST_BAD_RECORD)
def test_errors_are_those_of_decode_example_for_the_first_bad_record(spec, bad):
    want = _per_record(RECORDS, spec)
    assert (want[0] if isinstance(want, tuple) else None) == bad
    assert_like_stacked(RECORDS, spec)


def test_records_that_are_mostly_bytes_values_decode_alike():
    # Of large records (images) the long bytes values are left out of the join and sliced from
    # the records (_decode_sparse): every spec kind, and every error, comes out as for the others.
    records = [tfr.encode_example({**row, "image": bytes([i]) * 40_000}) for i, row in enumerate(ROWS)]
    spec = {**EVERY_SPEC_KIND, "image": tfr.FixedLenFeature([], "bytes")}
    got = assert_like_stacked(records, spec)
    assert got["image"].tolist() == [bytes([i]) * 40_000 for i in range(3)]
    for bad_spec, bad in SPECS_AND_FIRST_BAD_RECORD:
        with_image = {"image": spec["image"], **bad_spec}
        want = _per_record(records, with_image)
        assert (want[0] if isinstance(want, tuple) else None) == bad
        assert_like_stacked(records, with_image)


def test_malformed_record_in_a_batch_raises_decode_error_naming_its_index():
    records = [RECORDS[0], RECORDS[1][:-3], RECORDS[2]]
    with pytest.raises(tfr.DecodeError) as info:
        tfr.decode_examples(records, {"label": tfr.FixedLenFeature([], "int64")})
    if hasattr(info.value, "add_note"):
        assert "record 1 of the batch" in info.value.__notes__[0]
    assert_like_stacked(records, {"label": tfr.FixedLenFeature([], "int64")})


def test_an_overlong_varint_where_every_record_has_one_value():
    records = [tfr.encode_example({"i": [v]}) for v in (1, -1, 2**40, 3)]  # one varint a record
    records.insert(2, example(entry(b"i", ld(3, ld(1, b"\x81" * 10 + b"\x01")))))  # 11 bytes: malformed
    with pytest.raises(tfr.DecodeError) as info:
        tfr.decode_examples(records, {"i": tfr.FixedLenFeature([], "int64")})
    if hasattr(info.value, "add_note"):
        assert "record 2 of the batch" in info.value.__notes__[0]
    assert_like_stacked(records, {"i": tfr.FixedLenFeature([], "int64")})


def test_specs_an_example_cannot_take_raise_even_for_an_empty_batch():
    with pytest.raises(tfr.FeatureError, match="allow_missing=True"):
        tfr.decode_examples([], {"s": tfr.FixedLenSequenceFeature([2], "int64")})
    with pytest.raises(tfr.FeatureError, match="unsupported spec"):
        tfr.decode_examples([], {"s": "int64"})


def test_empty_batch_has_the_right_shapes_and_types():
    got = tfr.decode_examples(
        [],
        {
            "f": tfr.FixedLenFeature([2, 3], "float32"),
            "b": tfr.FixedLenFeature([], "bytes"),
            "v": tfr.VarLenFeature("int64"),
            "vb": tfr.VarLenFeature("bytes"),
            "s": tfr.FixedLenSequenceFeature([4], "int64", allow_missing=True),
        },
    )
    assert got["f"].shape == (0, 2, 3) and got["f"].dtype == np.float32
    assert got["b"].shape == (0,) and got["b"].dtype == object
    assert got["v"].values.shape == (0,) and got["v"].row_splits.tolist() == [0]
    assert got["vb"] == []
    assert got["s"].shape == (0, 0, 4)


def test_empty_records_and_bytes_like_inputs():
    spec = {"label": tfr.FixedLenFeature([], "int64", default_value=-1), "ids": tfr.VarLenFeature("int64")}
    records = [b"", bytearray(RECORDS[0]), memoryview(RECORDS[1]), np.frombuffer(RECORDS[2], np.uint8)]
    got = assert_like_stacked(records, spec)
    assert got["label"].tolist() == [-1, 1, 2, -(2**63)]
    # any iterable of records
    again = tfr.decode_examples((r for r in records), spec)
    assert again["label"].tolist() == got["label"].tolist()


def test_large_batches_with_long_values():
    rng = np.random.default_rng(5)
    rows = [
        {
            "x": rng.standard_normal(300).astype(np.float32),
            "ids": rng.integers(-(2**40), 2**40, 50),
            "blob": rng.bytes(500),
        }
        for _ in range(300)
    ]
    records = [tfr.encode_example(r) for r in rows]
    spec = {
        "x": tfr.FixedLenFeature([300], "float32"),
        "ids": tfr.FixedLenFeature([5, 10], "int64"),
        "blob": tfr.FixedLenFeature([], "bytes"),
    }
    got = assert_like_stacked(records, spec, fast=True)
    assert np.array_equal(got["x"], np.stack([r["x"] for r in rows]))
    assert np.array_equal(got["ids"].reshape(300, 50), np.stack([r["ids"] for r in rows]))


def test_large_records_decode_like_stacked_single_records():
    """Records of tens of KiB take the sparse join (their long bytes values are sliced from the
    records, not joined): same columns as record by record, across layouts, with records of one
    length but different skeletons, a non-canonical record, a bad one, and batches that reuse
    the buffer."""
    rng = np.random.default_rng(7)
    spec = {
        "image": tfr.FixedLenFeature([], "bytes"),
        "label": tfr.FixedLenFeature([], "int64", default_value=-1),
        "tags": tfr.VarLenFeature("bytes"),
        "x": tfr.FixedLenFeature([2], "float32"),
    }

    def row(size: int, order: int = 1) -> dict[str, Any]:
        tags = np.array([rng.bytes(int(rng.integers(0, 3000))) for _ in range(int(rng.integers(0, 3)))], object)
        fields = [("image", rng.bytes(size)), ("label", int(rng.integers(0, 2**40))), ("tags", tags)]
        return dict(fields[::order], x=rng.standard_normal(2).astype(np.float32))

    unpacked = example(
        entry(b"image", ld(1, ld(1, rng.bytes(45_000)))),
        entry(b"label", ld(3, varint(8) + varint(5))),
        entry(b"x", ld(2, ld(1, np.array([1.5, -2], "<f4").tobytes()))),
    )
    for sizes in ([40_000] * 12 + [50_000 + k % 3 for k in range(12)], [40_000] * 24):
        records = [tfr.encode_example(row(size, order=-1 if k % 5 == 0 else 1)) for k, size in enumerate(sizes)]
        assert_like_stacked(records, spec, fast=True)
        assert_like_stacked([*records[:3], unpacked, *records[3:]], spec)
    wrong_kind = tfr.encode_example({"image": [1, 2], "x": [1.0, 2.0]})
    for bad in (wrong_kind, records[4][: len(records[4]) // 2], rng.bytes(40_000)):
        assert_like_stacked([*records, bad, *records], spec)


# ----------------------------------------------------------------- iter_example_batches


def _write(path: Any, rows: list[dict[str, Any]], compression: Any = None) -> list[bytes]:
    records = [tfr.encode_example(r) for r in rows]
    with tfr.TFRecordWriter(path, compression=compression) as w:
        for r in records:
            w.write(r)
    return records


def _same_batches(got: list[dict[str, Any]], records: list[bytes], spec: dict[str, Any], batch_size: int) -> None:
    assert len(got) == -(-len(records) // batch_size)
    for j, batch in enumerate(got):
        want = tfr.decode_examples(records[j * batch_size : (j + 1) * batch_size], spec)
        for key in spec:
            a, b = batch[key], want[key]
            if isinstance(a, tfr.Ragged):
                assert np.array_equal(a.values, b.values) and np.array_equal(a.row_splits, b.row_splits)
            elif isinstance(a, list):
                assert a == b
            else:
                assert a.shape == b.shape and a.tolist() == b.tolist()


@pytest.mark.parametrize("batch_size", [1, 7, 1024])
def test_iter_example_batches_equals_decode_examples_over_batches(tmp_path, batch_size):
    rng = np.random.default_rng(3)
    rows = [{"n": int(i), "v": rng.standard_normal(i % 5).astype(np.float32), "s": b"x" * (i % 3)} for i in range(3000)]
    path = str(tmp_path / "small.tfrecord")
    records = _write(path, rows)
    spec = {
        "n": tfr.FixedLenFeature([], "int64"),
        "v": tfr.VarLenFeature("float32"),
        "s": tfr.FixedLenFeature([], "bytes"),
    }
    _same_batches(list(tfr.iter_example_batches(path, features=spec, batch_size=batch_size)), records, spec, batch_size)


def test_iter_example_batches_with_records_larger_than_the_buffer_and_compression(tmp_path):
    from tfrecord_lite._stream.scanner import CHUNK_SIZE

    rng = np.random.default_rng(4)
    rows = [{"blob": rng.bytes(int(n)), "k": int(n)} for n in [10, CHUNK_SIZE + 3, 5, 3 * CHUNK_SIZE, 0, 77]]
    spec = {"blob": tfr.FixedLenFeature([], "bytes"), "k": tfr.FixedLenFeature([], "int64")}
    for compression in (None, "gzip"):
        path = str(tmp_path / f"big-{compression}.tfrecord")
        records = _write(path, rows, compression)
        for batch_size in (1, 4):
            _same_batches(
                list(tfr.iter_example_batches(path, features=spec, batch_size=batch_size)), records, spec, batch_size
            )


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_iter_example_batches_of_large_records(tmp_path, compression):
    """Files whose first record is large are batched from the records as bytes: the same
    batches, spanning files, and the records before a damaged one come out first."""
    rng = np.random.default_rng(8)
    sizes = [40_000 + int(rng.integers(0, 3000)) if i % 9 else 10 for i in range(1, 61)]
    rows = [{"image": rng.bytes(n), "label": i} for i, n in enumerate(sizes)]
    spec = {"image": tfr.FixedLenFeature([], "bytes"), "label": tfr.FixedLenFeature([], "int64")}
    paths = [str(tmp_path / f"{k}.tfrecord") for k in range(2)]
    records = _write(paths[0], rows[:35], compression) + _write(paths[1], rows[35:], compression)
    for batch_size in (1, 16):
        _same_batches(
            list(tfr.iter_example_batches(paths, features=spec, batch_size=batch_size)), records, spec, batch_size
        )
    if compression:
        return
    offset = sum(len(r) + 16 for r in records[:20])
    with open(paths[0], "r+b") as f:  # damage the payload of record 20
        f.seek(offset + 12 + 5)
        f.write(b"\x00\x01\x02")
    got = []
    with pytest.raises(tfr.CorruptRecordError) as info:
        got.extend(batch["label"].tolist() for batch in tfr.iter_example_batches(paths, features=spec, batch_size=16))
    assert info.value.offset == offset and info.value.path == paths[0]
    assert got == [list(range(16)), list(range(16, 20))]


def test_iter_example_batches_yields_the_batches_before_a_corrupt_record(tmp_path):
    path = str(tmp_path / "bad.tfrecord")
    records = _write(path, [{"n": i} for i in range(100)])
    with open(path, "r+b") as f:  # damage the payload of record 50
        offset = sum(len(r) + 16 for r in records[:50])
        f.seek(offset + 12 + 2)
        byte = f.read(1)
        f.seek(offset + 12 + 2)
        f.write(bytes([byte[0] ^ 1]))
    got = []
    batches = tfr.iter_example_batches(path, features={"n": tfr.FixedLenFeature([], "int64")}, batch_size=16)
    with pytest.raises(tfr.CorruptRecordError) as info:
        got.extend(batch["n"].tolist() for batch in batches)  # keeps the batches before the error
    assert info.value.offset == offset and info.value.path == path
    assert functools.reduce(operator.iadd, got, []) == list(range(50)) and [len(b) for b in got] == [16, 16, 16, 2]


def test_iter_example_batches_checks_its_arguments(tmp_path):
    path = str(tmp_path / "x.tfrecord")
    _write(path, [{"n": 1}])
    with pytest.raises(ValueError, match="batch_size"):
        next(tfr.iter_example_batches(path, features={"n": tfr.FixedLenFeature([], "int64")}, batch_size=0))
    with pytest.raises(tfr.FeatureError, match="required feature is missing") as info:
        list(tfr.iter_example_batches(path, features={"m": tfr.FixedLenFeature([], "int64")}))
    assert info.value.key == "m"
