"""Objects that show themselves: reprs name the class, the path(s), compression, the count when
known, open / closed and the spec keys; dir() of each public module shows its API only."""

from __future__ import annotations

import importlib
import pkgutil
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr

SPEC = {"label": tfr.FixedLenFeature([], "int64"), "tags": tfr.VarLenFeature("int64")}


@pytest.fixture
def prefix(tmp_path: Path) -> str:
    """Five shards of 4 Examples each, written through the writer whose reprs are checked."""
    name = str(tmp_path / "train")
    with tfr.ShardedWriter(name, num_shards=5) as writer:
        assert repr(writer) == f"ShardedWriter({name!r}, num_shards=5, 0 records written, open)"
        for i in range(20):
            writer.write_example({"label": i, "tags": list(range(i % 3 + 1))})
        assert repr(writer) == f"ShardedWriter({name!r}, num_shards=5, 20 records written, open)"
    assert repr(writer) == f"ShardedWriter({name!r}, num_shards=5, 20 records written, 5 shards, closed)"
    return name


def test_writer_and_iterator_reprs(tmp_path):
    path = str(tmp_path / "a.tfrecord.gz")
    with tfr.TFRecordWriter(path, compression="GZIP") as writer:
        writer.write(b"x")
        assert repr(writer) == f"TFRecordWriter({path!r}, compression='gzip', 1 record written, open)"
        writer.write(b"y")
    assert repr(writer) == f"TFRecordWriter({path!r}, compression='gzip', 2 records written, closed)"
    records = tfr.iter_records(path)
    assert repr(records) == f"RecordIterator({path!r}, compression='gzip', open)"
    assert list(records) == [b"x", b"y"]
    assert repr(records) == f"RecordIterator({path!r}, compression='gzip', closed)"
    limited = tfr.ShardedWriter(str(tmp_path / "b"), max_records=10, compression="gzip")
    assert (
        repr(limited)
        == f"ShardedWriter({str(tmp_path / 'b')!r}, max_records=10, compression='gzip', 0 records written, open)"
    )
    limited.abort()


def test_random_access_reprs(prefix):
    first = prefix + "-00000-of-00005.tfrecord"
    f = tfr.TFRecordFile(first)
    assert repr(f) == f"TFRecordFile({first!r}, 4 records, index={first + '.tfrlidx'!r}, open)"
    f.close()
    assert repr(f) == f"TFRecordFile({first!r}, closed)"
    assert repr(tfr.TFRecordFile(first, index=False)) == f"TFRecordFile({first!r}, 4 records, index in memory, open)"
    records = tfr.ShardedRecords(prefix)
    last = prefix + "-00004-of-00005.tfrecord"
    assert repr(records) == f"ShardedRecords([{first!r}, ..., {last!r}] (5 files), 20 records, open)"
    records.close()
    assert repr(records).endswith("closed)")
    two = tfr.ShardedRecords([first, last])
    assert repr(two) == f"ShardedRecords([{first!r}, {last!r}], 8 records, open)"


def test_ragged_repr_is_short(prefix):
    tags = tfr.decode_examples(list(tfr.ShardedRecords(prefix)), SPEC)["tags"]
    text = repr(tags)
    rows = [tags.row(i).tolist() for i in range(3)]
    assert text == f"Ragged(shape=[20, None], dtype=int64, rows=[{rows[0]}, {rows[1]}, {rows[2]}, ...])"
    small = tfr.Ragged(np.array([1.5, 2.5], np.float32), np.array([0, 2, 2]))
    assert repr(small) == "Ragged(shape=[2, None], dtype=float32, rows=[[1.5, 2.5], []])"


@pytest.mark.torch
def test_dataset_and_collate_reprs(prefix, tmp_path):
    tt = pytest.importorskip("tfrecord_lite.torch")
    first, last = prefix + "-00000-of-00005.tfrecord", prefix + "-00004-of-00005.tfrecord"
    files = f"[{first!r}, ..., {last!r}] (5 files)"
    ds = tt.TFRecordDataset(prefix, features=SPEC)
    assert repr(ds) == f"TFRecordDataset({files}, 20 records, record_type='example', features=['label', 'tags'])"
    stream = tt.IterableTFRecordDataset(prefix, features=SPEC, shuffle=True, batch_size=4, output="torch")
    assert repr(stream) == (
        f"IterableTFRecordDataset({files}, record_type='example', features=['label', 'tags'], output='torch', "
        "batch_size=4, shuffle_buffer=1024, seed=0)"
    )
    stream.num_records()
    assert ", 20 records, " in repr(stream)
    gz = str(tmp_path / "c.tfrecord.gz")
    with tfr.TFRecordWriter(gz, compression="gzip") as writer:
        writer.write(b"r")
    raw = tt.IterableTFRecordDataset(gz, record_type="raw", transform=len)
    assert repr(raw) == f"IterableTFRecordDataset({gz!r}, compression='gzip', record_type='raw', transform='len')"
    mixed = tt.MixedTFRecordDataset(
        [tt.IterableTFRecordDataset(prefix, features=SPEC), raw], weights=[3, 1], stop="first"
    )
    assert repr(mixed).startswith("MixedTFRecordDataset([IterableTFRecordDataset(")
    assert repr(mixed).endswith("weights=[3.0, 1.0], stop='first')")
    assert repr(ds.collate_fn) == "Collate(varlen='pad', pad_value=0, length_key='{}_length', ragged=['tags'])"
    many = {f"k{i}": tfr.VarLenFeature("int64") for i in range(9)}
    assert "features=['k0', 'k1', 'k2', 'k3', 'k4', 'k5', ...] (9 keys)" in repr(
        tt.TFRecordDataset(prefix, features=many)
    )


# engine adapter -> (the library it imports, its marker: the engines' environment runs it)
ENGINES = {
    "tfrecord_lite.ray": ("ray", "ray"),
    "tfrecord_lite.hf": ("datasets", "hf"),
    "tfrecord_lite.dask": ("dask", "dask"),
    "tfrecord_lite.spark": ("pyspark", "spark"),
}


def public_modules() -> list[Any]:
    names = ["tfrecord_lite"]
    for info in pkgutil.iter_modules(tfr.__path__):
        if not info.name.startswith("_"):
            names.append(f"tfrecord_lite.{info.name}")
    return [pytest.param(n, marks=[getattr(pytest.mark, ENGINES[n][1])] if n in ENGINES else []) for n in names]


@pytest.mark.parametrize("name", public_modules())
def test_dir_of_public_modules_shows_the_api_not_imported_modules(name):
    if name == "tfrecord_lite.torch":
        pytest.importorskip("torch")
    if name == "tfrecord_lite.torchdata":
        pytest.importorskip("torch")
        pytest.importorskip("torchdata")
    if name in ENGINES:
        pytest.importorskip(ENGINES[name][0])
    module = importlib.import_module(name)
    shown = dir(module)
    modules = [n for n in shown if isinstance(getattr(module, n, None), types.ModuleType)]
    assert modules == [], f"dir({name}) shows imported modules {modules}"
    assert set(module.__all__) <= set(shown)
    assert not [n for n in shown if n.startswith("_") and not n.startswith("__")]
    for public in module.__all__:
        getattr(module, public)
