# tfrecord_lite.compat.tfrecord against the real `tfrecord` package 1.14.6 (the oracle, installed in
# the py env) on generated data: the writers' bytes and the index files are identical, and every reader
# and call shape (descriptions as None / list / dict, shards, index files with numpy's seeded random
# start, GZIP, SequenceExamples, weighted splits, shuffle queues, the torch datasets) gives the same
# values with the same types, dtypes and shapes. Where the compat package differs on purpose (workers
# without an index file share records out instead of each reading all) the test says so.
# Each test sets max_examples below the profile's: every example writes and reads files with both
# libraries, and these few dozen examples per call shape keep the file near 10 s.
from __future__ import annotations

import gzip
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tfrecord = pytest.importorskip("tfrecord")

import tfrecord_lite as tfr
import tfrecord_lite.compat.tfrecord as compat

KEYS = st.text("abcxyz_", min_size=1, max_size=4)
INT64 = st.integers(-(2**63), 2**63 - 1)
FLOAT32 = st.floats(width=32)
BYTES = st.binary(max_size=6)


def _values(kind: str) -> st.SearchStrategy[Any]:
    one = {"byte": BYTES, "float": FLOAT32, "int": INT64}[kind]
    return st.one_of(one, st.lists(one, max_size=4))


def _entry() -> st.SearchStrategy[tuple[Any, str]]:
    return st.sampled_from(["byte", "float", "int"]).flatmap(lambda k: st.tuples(_values(k), st.just(k)))


def _steps_entry() -> st.SearchStrategy[tuple[Any, str]]:
    return st.sampled_from(["byte", "float", "int"]).flatmap(
        lambda k: st.tuples(st.lists(_values(k), max_size=3), st.just(k))
    )


DATUM = st.dictionaries(KEYS, _entry(), min_size=1, max_size=5)
SCHEMA = st.dictionaries(KEYS, st.sampled_from(["byte", "float", "int"]), min_size=1, max_size=5)


def _datums(schema: dict[str, str]) -> st.SearchStrategy[list[Any]]:
    entries = {key: st.tuples(_values(kind), st.just(kind)) for key, kind in schema.items()}
    return st.lists(st.fixed_dictionaries(entries), min_size=1, max_size=6)


# records of one schema (most files), or of any keys (a described key may then be missing)
DATUMS = st.one_of(SCHEMA.flatmap(_datums), st.lists(DATUM, min_size=1, max_size=4))
SEQUENCE = st.tuples(st.dictionaries(KEYS, _entry(), max_size=3), st.dictionaries(KEYS, _steps_entry(), max_size=3))


def outcome(make: Any) -> Any:
    """list(make()), or the type of the exception it raises."""
    try:
        return list(make())
    except (KeyError, TypeError, ValueError) as err:
        return type(err)


def assert_same(ours: Any, theirs: Any, where: str = "value") -> None:
    """Same type, and for arrays the same dtype, shape and values (NaN equal to NaN)."""
    assert type(ours) is type(theirs), f"{where}: {type(ours).__name__} vs {type(theirs).__name__}"
    if isinstance(theirs, np.ndarray):
        assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), where
        np.testing.assert_array_equal(ours, theirs, err_msg=where)
    elif isinstance(theirs, dict):
        assert ours.keys() == theirs.keys(), where
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert_same(a, b, f"{where}[{i}]")
    else:
        assert ours == theirs, where


@contextmanager
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def write_both(where: Path, datums: list[Any], sequences: list[Any] | None = None) -> tuple[str, str]:
    """The same records written by the package's writer and by ours; paths (theirs, ours)."""
    paths = str(where / "theirs.tfrecord"), str(where / "ours.tfrecord")
    for writer_class, path in zip((tfrecord.TFRecordWriter, compat.TFRecordWriter), paths, strict=True):
        writer = writer_class(path)
        for datum in datums:
            writer.write(datum)
        for context, lists in sequences or []:
            writer.write(context, lists)
        writer.close()
    return paths


def descriptions(datum: dict[str, tuple[Any, str]]) -> list[Any]:
    keys = sorted(datum)[:2]
    return [None, [], keys, {k: datum[k][1] for k in keys}, dict.fromkeys(keys)]


@settings(max_examples=40)
@given(DATUMS)
def test_writers_write_the_same_bytes_and_readers_read_the_same_values(datums: list[Any]) -> None:
    with folder() as where:
        theirs, ours = write_both(where, datums)
        assert Path(ours).read_bytes() == Path(theirs).read_bytes()
        records = [bytes(r) for r in tfrecord.tfrecord_iterator(theirs)]
        ours_records = list(compat.tfrecord_iterator(theirs))
        assert all(type(r) is memoryview for r in ours_records)
        assert [bytes(r) for r in ours_records] == records
        for description in descriptions(datums[0]):
            mine = outcome(lambda d=description: compat.example_loader(theirs, None, d))
            assert_same(mine, outcome(lambda d=description: tfrecord.example_loader(theirs, None, d)), f"{description}")
            assert_same(outcome(lambda d=description: compat.tfrecord_loader(theirs, None, d)), mine)


@settings(max_examples=25)
@given(st.lists(SEQUENCE, min_size=1, max_size=4))
def test_sequence_examples(sequences: list[Any]) -> None:
    with folder() as where:
        theirs, ours = write_both(where, [], sequences)
        assert Path(ours).read_bytes() == Path(theirs).read_bytes()
        context, lists = sequences[0]
        for ctx_d in (None, sorted(context)):
            for seq_d in ([], sorted(lists), {k: kind for k, (_, kind) in lists.items()}):
                expected = outcome(lambda c=ctx_d, q=seq_d: tfrecord.sequence_loader(theirs, None, c, q))
                assert_same(outcome(lambda c=ctx_d, q=seq_d: compat.sequence_loader(theirs, None, c, q)), expected)
                ours = outcome(lambda c=ctx_d, q=seq_d: compat.tfrecord_loader(theirs, None, c, sequence_description=q))
                assert_same(ours, expected)


@settings(max_examples=25)
@given(DATUMS, st.integers(1, 4), st.integers(0, 2**31))
def test_index_files_shards_and_the_random_start(datums: list[Any], count: int, seed: int) -> None:
    datums = datums * 2 if len(datums) == 1 else datums  # the package cannot load a one-line index (a 1-D array)
    with folder() as where:
        path, _ = write_both(where, datums)
        tfrecord.tools.tfrecord2idx.create_index(path, str(where / "theirs.index"))
        compat.tools.tfrecord2idx.create_index(path, str(where / "ours.index"))
        assert (where / "ours.index").read_bytes() == (where / "theirs.index").read_bytes()
        index = str(where / "theirs.index")
        for i in range(count):
            expected = list(tfrecord.example_loader(path, index, None, (i, count)))
            assert_same(list(compat.example_loader(path, index, None, (i, count))), expected, f"shard {i}")
            # without an index the package gives every shard every record; ours the same range as with one
            assert_same(list(compat.example_loader(path, None, None, (i, count))), expected, f"shard {i}")
        np.random.seed(seed)
        expected = [bytes(r) for r in tfrecord.tfrecord_iterator(path, index)]
        np.random.seed(seed)
        assert [bytes(r) for r in compat.tfrecord_iterator(path, index)] == expected


@settings(max_examples=20)
@given(DATUMS, st.integers(0, 2**31))
def test_gzip_files(datums: list[Any], seed: int) -> None:
    datums = datums * 2 if len(datums) == 1 else datums  # as above
    with folder() as where:
        plain, _ = write_both(where, datums)
        path = str(where / "data.tfrecord.gz")
        with gzip.open(path, "wb") as out:
            out.write(Path(plain).read_bytes())
        expected = list(tfrecord.example_loader(path, None, compression_type="gzip"))
        assert_same(list(compat.example_loader(path, None, compression_type="gzip")), expected)
        assert_same(list(compat.example_loader(path, None)), expected)  # recognised from the content
        compat.tools.tfrecord2idx.create_index(path, str(where / "gz.index"))
        tfrecord.tools.tfrecord2idx.create_index(plain, str(where / "plain.index"))
        # the package seeks a GZIP file by offsets in the uncompressed stream: the plain file's index
        assert (where / "gz.index").read_bytes() == (where / "plain.index").read_bytes()
        index = str(where / "gz.index")
        for shard in ((0, 2), (1, 2)):
            expected = list(tfrecord.example_loader(path, index, None, shard, "gzip"))
            assert_same(list(compat.example_loader(path, index, None, shard, "gzip")), expected)
        np.random.seed(seed)
        expected = list(tfrecord.example_loader(path, index, compression_type="gzip"))
        np.random.seed(seed)
        assert_same(list(compat.example_loader(path, index, compression_type="gzip")), expected)


@settings(max_examples=15)
@given(DATUMS, DATUMS, st.integers(0, 2**31), st.sampled_from([None, 1, 3]))
def test_splits_and_shuffle_queues(first: list[Any], second: list[Any], seed: int, queue: int | None) -> None:
    with folder() as where:
        for name, datums in (("a", first * 2), ("b", second * 2)):  # two lines at least in an index (see above)
            writer = tfrecord.TFRecordWriter(str(where / f"{name}.tfrecord"))
            for datum in datums:
                writer.write(datum)
            writer.close()
            tfrecord.tools.tfrecord2idx.create_index(str(where / f"{name}.tfrecord"), str(where / f"{name}.index"))
        pattern, splits = str(where / "{}.tfrecord"), {"a": 0.7, "b": 0.3}
        for index_pattern in (None, str(where / "{}.index")):
            np.random.seed(seed)
            expected = list(tfrecord.multi_tfrecord_loader(pattern, index_pattern, splits, infinite=False))
            np.random.seed(seed)
            assert_same(list(compat.multi_tfrecord_loader(pattern, index_pattern, splits, infinite=False)), expected)
        items = list(range(len(first) * 3))
        np.random.seed(seed)
        expected = list(tfrecord.shuffle_iterator(iter(items), queue or 2))
        np.random.seed(seed)
        assert list(compat.shuffle_iterator(iter(items), queue or 2)) == expected
        with pytest.warns(UserWarning, match=r"less than the queue size \(N=9\)"):
            assert sorted(compat.shuffle_iterator(iter(items[:2]), 9)) == items[:2]


@given(st.sampled_from(["byte", "float", "int"]).flatmap(_values), st.sampled_from(["byte", "float", "int"]))
@settings(max_examples=60)
def test_process_feature_and_its_type_check(value: Any, kind: str) -> None:
    kinds = {"byte": "bytes_list", "float": "float_list", "int": "int64_list"}
    lists = {"byte": compat.example_pb2.BytesList, "float": compat.example_pb2.FloatList}
    lists["int"] = compat.example_pb2.Int64List
    for list_kind, list_class in lists.items():
        values = value if isinstance(value, list) else [value]
        try:
            feature = compat.example_pb2.Feature(**{kinds[list_kind]: list_class(value=values)})
        except TypeError:
            continue
        theirs_feature = tfrecord.example_pb2.Feature.FromString(feature.SerializeToString())
        expected = _result(lambda f=theirs_feature: tfrecord.process_feature(f, kind, kinds, "k"))
        assert_same(_result(lambda f=feature: compat.process_feature(f, kind, kinds, "k")), expected)


def _result(call: Any) -> Any:
    """call(), or its TypeError's message."""
    try:
        return call()
    except TypeError as err:
        return f"TypeError: {err}"


def test_errors_the_package_raises_are_raised_alike(tmp_path: Path) -> None:
    _, path = write_both(tmp_path, [{"label": (1, "int"), "name": (b"x", "byte")}])
    for description in ({"label": "float"}, {"nope": None}):
        with pytest.raises((TypeError, KeyError)) as theirs:
            list(tfrecord.example_loader(path, None, description))
        with pytest.raises(theirs.type) as ours:
            list(compat.example_loader(path, None, description))
        if theirs.type is TypeError:  # a KeyError lists the record's keys, in the order each decoder found them
            assert str(ours.value) == str(theirs.value)
        assert str(ours.value).startswith(str(theirs.value)[:24])
    with pytest.raises(KeyError, match="unknown type 'bytes' for `name`: use one of 'byte'"):
        list(compat.example_loader(path, None, {"name": "bytes"}))
    with pytest.raises(ValueError, match="compression_type should be either 'gzip' or None"):
        list(compat.tfrecord_iterator(path, compression_type="zlib"))
    with pytest.raises(KeyError, match="feature 'a': unknown kind 'bytes'"):
        compat.TFRecordWriter(str(tmp_path / "w")).write({"a": (b"x", "bytes")})
    with pytest.raises(TypeError, match="feature 'a': cannot write 'x' as 'int'"):
        compat.TFRecordWriter.serialize_tf_example({"a": ("x", "int")})


def test_a_damaged_record_raises_where_the_package_returns_it(tmp_path: Path) -> None:
    _, path = write_both(tmp_path, [{"label": (7, "int")}])
    data = bytearray(Path(path).read_bytes())
    data[-6] ^= 0xFF  # a payload byte: the package decodes the changed value, CRCs unchecked
    Path(path).write_bytes(bytes(data))
    with pytest.raises(tfr.CorruptRecordError):
        list(compat.example_loader(path, None))


# --------------------------------------------------------------------------- torch datasets


def _torch() -> Any:
    return pytest.importorskip("torch")


@pytest.mark.torch
def test_torch_datasets_match_the_package_in_one_process(tmp_path: Path) -> None:
    torch = _torch()
    import tfrecord.torch.dataset as theirs_module

    from tfrecord_lite.compat.tfrecord.torch.dataset import MultiTFRecordDataset, TFRecordDataset

    for name, n in (("a", 23), ("b", 11)):
        writer = compat.TFRecordWriter(str(tmp_path / f"{name}.tfrecord"))
        for i in range(n):
            writer.write({"label": (i, "int"), "vec": ([i, 0.5], "float"), "name": (f"{name}{i}".encode(), "byte")})
        writer.close()
    path = str(tmp_path / "a.tfrecord")

    def double(item: dict[str, Any]) -> dict[str, Any]:
        return {**item, "label": item["label"] * 2}

    for kwargs in ({}, {"shuffle_queue_size": 5, "transform": double}, {"description": {"vec": "float"}}):
        torch.manual_seed(0)
        np.random.seed(3)
        expected = list(theirs_module.TFRecordDataset(path, None, **kwargs))
        np.random.seed(3)
        assert_same(list(TFRecordDataset(path, None, **kwargs)), expected)
    pattern, splits = str(tmp_path / "{}.tfrecord"), {"a": 0.5, "b": 0.5}
    np.random.seed(5)
    expected = list(theirs_module.MultiTFRecordDataset(pattern, None, splits, shuffle_queue_size=4, infinite=False))
    np.random.seed(5)
    ours = list(MultiTFRecordDataset(pattern, None, splits, shuffle_queue_size=4, infinite=False))
    assert_same(ours, expected)
    batch = next(iter(torch.utils.data.DataLoader(TFRecordDataset(path, None, {"label": "int"}), batch_size=4)))
    assert batch["label"].shape == (4, 1) and batch["label"].dtype == torch.int64


@pytest.mark.torch
def test_every_record_once_across_workers_with_or_without_an_index(tmp_path: Path) -> None:
    torch = _torch()
    from tfrecord_lite.compat.tfrecord.torch.dataset import TFRecordDataset

    path = str(tmp_path / "a.tfrecord")
    writer = compat.TFRecordWriter(path)
    for i in range(37):
        writer.write({"label": (i, "int")})
    writer.close()
    compat.tools.create_index(path, str(tmp_path / "a.index"))
    for index in (None, str(tmp_path / "a.index")):
        dataset = TFRecordDataset(path, index, {"label": "int"}, shuffle_queue_size=8)
        loader = torch.utils.data.DataLoader(dataset, batch_size=5, num_workers=2)
        labels = sorted(torch.cat([batch["label"].flatten() for batch in loader]).tolist())
        assert labels == list(range(37)), index
