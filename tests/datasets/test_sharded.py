# ShardedWriter / ShardedRecords: TF-style shard names, the three ways of
# splitting, index sidecars written from the writer's own offsets, global
# indexing across shards, and growing a dataset by new shards.
from __future__ import annotations

import glob
import multiprocessing
import os
import pickle
import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr

SIDECAR = ".tfrlidx"


def records(n: int, size: int = 10) -> list[bytes]:
    return [f"{i:0{size}d}".encode() for i in range(n)]


def names(paths: list[str]) -> list[str]:
    return [os.path.basename(p) for p in paths]


def sidecar_is_exact(path: str) -> bool:
    data, pos, offsets = Path(path).read_bytes(), 0, []
    while pos < len(data):
        offsets.append(pos)
        pos += 16 + struct.unpack_from("<Q", data, pos)[0]
    stored = np.frombuffer(Path(path + SIDECAR).read_bytes(), "<u8", offset=64).tolist()
    return stored == offsets + [len(data)]


def test_num_shards_round_robin(tmp_path: Path) -> None:
    data = records(10)
    with tfr.ShardedWriter(tmp_path / "train", num_shards=3) as w:
        for r in data:
            w.write(r)
        assert w.paths == []  # published at close
    assert names(w.paths) == [f"train-0000{k}-of-00003.tfrecord" for k in range(3)]
    for k, path in enumerate(w.paths):
        assert list(tfr.iter_records(path)) == data[k::3]
        assert sidecar_is_exact(path)
        with tfr.TFRecordFile(path, on_stale="raise") as f:  # the written sidecar is fresh
            assert list(f) == data[k::3]
    assert sorted(os.listdir(tmp_path)) == sorted(names(w.paths) + [n + SIDECAR for n in names(w.paths)])


def test_max_records_and_sharded_reading(tmp_path: Path) -> None:
    data = records(10)
    with tfr.ShardedWriter(str(tmp_path / "ds"), max_records=4) as w:
        for r in data:
            w.write(r)
    assert names(w.paths) == ["ds-00000-of-00003.tfrecord", "ds-00001-of-00003.tfrecord", "ds-00002-of-00003.tfrecord"]
    assert [len(list(tfr.iter_records(p))) for p in w.paths] == [4, 4, 2]
    with tfr.ShardedRecords(w.paths[::-1]) as ds:  # a list is read in the order given
        assert ds.paths == w.paths[::-1] and list(ds) == data[8:] + data[4:8] + data[:4]
    for source in (str(tmp_path / "ds-*.tfrecord"), str(tmp_path / "ds"), w.paths, tmp_path):
        with tfr.ShardedRecords(source) as ds:
            assert ds.paths == w.paths and len(ds) == 10
            assert list(ds) == data
            assert [ds[i] for i in range(-10, 10)] == data + data
            assert ds[3:9:2] == data[3:9:2] and ds[[9, 0, 4]] == [data[9], data[0], data[4]]
            assert ds.locate(4) == (1, 0) and ds.locate(-1) == (2, 1)
            with pytest.raises(IndexError):
                ds[10]


def test_max_bytes(tmp_path: Path) -> None:
    data = [b"a" * 100, b"b" * 100, b"c" * 100, b"d" * 500, b"e" * 10]
    with tfr.ShardedWriter(tmp_path / "b", max_bytes=300) as w:  # 116 framed bytes each: two fit
        for r in data:
            w.write(r)
    assert [list(tfr.iter_records(p)) for p in w.paths] == [data[:2], data[2:3], data[3:4], data[4:]]
    assert all(os.path.getsize(p) <= 300 or len(list(tfr.iter_records(p))) == 1 for p in w.paths)


def test_write_example_and_example(tmp_path: Path) -> None:
    with tfr.ShardedWriter(tmp_path / "ex", max_records=3) as w:
        for i in range(7):
            w.write_example({"label": i, "name": f"n{i}"})
    with tfr.ShardedRecords(w.paths) as ds:
        assert ds.example(5)["label"].tolist() == [5]
        assert ds.example(-1, {"name": tfr.FixedLenFeature([], "string")})["name"] == b"n6"


def test_compressed_shards_are_indexed_when_read(tmp_path: Path) -> None:
    with tfr.ShardedWriter(tmp_path / "z", num_shards=2, compression="gzip") as w:
        for r in records(5):
            w.write(r)
    assert all(not os.path.exists(p + SIDECAR) for p in w.paths)
    assert [r for p in w.paths for r in tfr.iter_records(p)] == records(5)[0::2] + records(5)[1::2]
    with tfr.ShardedRecords(w.paths) as ds:  # the compressed streams are indexed now
        assert ds[:] == records(5)[0::2] + records(5)[1::2]
    assert all(os.path.exists(p + SIDECAR) for p in w.paths)


def test_empty_and_underfull(tmp_path: Path) -> None:
    with tfr.ShardedWriter(tmp_path / "e", num_shards=4) as w:
        w.write(b"only")
    with tfr.ShardedRecords(w.paths) as ds:
        assert len(ds) == 1 and ds[0] == b"only" and len(ds.shards) == 4
    with tfr.ShardedWriter(tmp_path / "none") as w:
        pass
    assert names(w.paths) == ["none-00000-of-00001.tfrecord"] and list(tfr.ShardedRecords(w.paths)) == []


def test_grow_by_new_shards(tmp_path: Path) -> None:
    prefix = tmp_path / "grow"
    old = records(6)
    with tfr.ShardedWriter(prefix, num_shards=2) as w:
        for r in old:
            w.write(r)
    first = w.paths
    before = tfr.ShardedRecords(first)
    assert list(before) == old[0::2] + old[1::2]
    with pytest.raises(FileExistsError, match="append=True"):
        tfr.ShardedWriter(prefix, num_shards=2)
    new = [b"new" + r for r in records(5)]
    with tfr.ShardedWriter(prefix, max_records=2, append=True) as w:
        for r in new:
            w.write(r)
    assert names(w.paths) == [f"grow-0000{k}-of-00005.tfrecord" for k in (2, 3, 4)]
    renamed = [str(prefix) + f"-0000{k}-of-00005.tfrecord" for k in (0, 1)]
    assert not any(os.path.exists(p) for p in first)  # old shards say the new total: one glob matches all
    assert sorted(os.listdir(tmp_path)) == sorted(
        name
        for k in range(5)
        for name in (f"grow-0000{k}-of-00005.tfrecord", f"grow-0000{k}-of-00005.tfrecord.tfrlidx")
    )
    with tfr.ShardedRecords(prefix) as grown:
        assert grown.paths == renamed + w.paths
        assert grown[: len(before)] == list(before)  # old records keep their global indices
        assert grown[len(before) :] == new
        assert all(shard.index_path for shard in grown.shards[:2])  # the renamed sidecars are fresh
    assert list(before) == old[0::2] + old[1::2]  # a reader with the old files open reads on
    before.close()
    assert sorted(glob.glob(str(prefix) + "-?????-of-00005.tfrecord")) == renamed + w.paths


def test_exception_publishes_nothing(tmp_path: Path) -> None:
    def write_then_fail() -> None:
        with tfr.ShardedWriter(tmp_path / "x", max_records=2) as w:
            for r in records(5):
                w.write(r)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        write_then_fail()
    assert os.listdir(tmp_path) == []


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="either num_shards or max_records"):
        tfr.ShardedWriter(tmp_path / "a", num_shards=2, max_records=3)
    with pytest.raises(ValueError, match="max_bytes must be a positive int"):
        tfr.ShardedWriter(tmp_path / "a", max_bytes=0)
    with pytest.raises(FileNotFoundError):
        tfr.ShardedRecords(str(tmp_path / "nothing-*.tfrecord"))
    w = tfr.ShardedWriter(tmp_path / "a")
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.write(b"late")


def test_natural_order_of_a_folder_and_given_order_of_a_list(tmp_path: Path) -> None:
    paths = []
    for k in (10, 9, 1):
        path = tmp_path / f"part-{k}.tfrecord"
        with tfr.TFRecordWriter(path) as w:
            w.write(str(k).encode())
        paths.append(str(path))
    for source in (tmp_path, str(tmp_path / "part-*")):
        with tfr.ShardedRecords(source) as ds:
            assert list(ds) == [b"1", b"9", b"10"]
    with tfr.ShardedRecords(paths) as ds:
        assert list(ds) == [b"10", b"9", b"1"]


def _global_read(args: tuple[tfr.ShardedRecords, list[int]]) -> list[bytes]:
    ds, picks = args
    return ds[picks]


def test_pickled_to_spawned_workers(tmp_path: Path) -> None:
    data = records(40)
    with tfr.ShardedWriter(tmp_path / "p", max_records=7) as w:
        for r in data:
            w.write(r)
    with tfr.ShardedRecords(tmp_path / "p") as ds:
        assert list(pickle.loads(pickle.dumps(ds))) == data
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            assert pool.map(_global_read, [(ds, [0, 39, 20]), (ds, [-7])]) == [
                [data[0], data[39], data[20]],
                [data[33]],
            ]


# fewer examples than the profile's: each writes up to five shards, then indexes and reopens them
# (~40 ms); the examples share tmp_path, each in a folder of its own
@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.lists(st.binary(max_size=40), max_size=6), min_size=1, max_size=5), seed=st.integers(0, 99))
def test_global_indexing_equals_concatenation(tmp_path: Path, parts: list[list[bytes]], seed: int) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    paths = []
    for k, part in enumerate(parts):
        path = folder / f"s-{k:05d}-of-{len(parts):05d}.tfrecord"
        with tfr.TFRecordWriter(path) as w:
            for r in part:
                w.write(r)
        paths.append(path)
    flat = [r for part in parts for r in part]
    with tfr.ShardedRecords(str(folder / "s-*.tfrecord")) as ds:
        assert len(ds) == len(flat) and list(ds) == flat
        order = np.random.default_rng(seed).permutation(len(flat)).tolist()
        assert ds[order] == [flat[i] for i in order]
        assert [ds[-i - 1] for i in range(len(flat))] == flat[::-1]


def test_overwrite_replaces_shards_at_close(tmp_path: Path) -> None:
    from tfrecord_lite._datasets.sharded import open_shard_writer

    out = tmp_path / "out"
    prefix = str(out / "part")

    def write(n: int, shards: int, overwrite: bool = False, fail: bool = False) -> None:
        with open_shard_writer(prefix, num_shards=shards, overwrite=overwrite) as w:
            for r in records(n):
                w.write(r)
            assert visible() == first  # nothing changes while writing
            if fail:
                raise RuntimeError("the block fails")

    def visible() -> list[str]:
        return sorted(n for n in os.listdir(out) if not n.startswith("."))

    first: list[str] = []
    write(4, 2)
    first = sorted(os.listdir(out))
    assert len(first) == 4 and sum(n.endswith(SIDECAR) for n in first) == 2
    with pytest.raises(FileExistsError, match="2 shards"):
        open_shard_writer(prefix, num_shards=2)
    with pytest.raises(RuntimeError, match="the block fails"):
        write(3, 3, overwrite=True, fail=True)
    assert sorted(os.listdir(out)) == first  # the old shards and sidecars, nothing left over
    assert sorted(tfr.ShardedRecords(prefix + "-*.tfrecord")) == records(4)
    write(3, 3, overwrite=True)
    assert sorted(tfr.ShardedRecords(prefix + "-*.tfrecord")) == records(3)
    assert len(os.listdir(out)) == 6  # three shards, three sidecars: the old ones are gone


def test_stream_skips_damage_found_after_indexing(tmp_path: Path) -> None:
    """Bit rot after the shards were written: the sidecars still match (same size, same mtime,
    intact first and last records), so the dataset opens; its stream skips the damage."""
    with tfr.ShardedWriter(str(tmp_path / "rot"), num_shards=3) as w:
        for i in range(30):
            w.write(b"record %03d" % i)  # 10 bytes: 26 framed; 10 records a shard, round robin
    middle = Path(w.paths[1])
    before = middle.stat()
    data = bytearray(middle.read_bytes())
    data[26 * 3 + 14] ^= 0x01  # payload of its record 3
    data[26 * 6 + 2] ^= 0x10  # header of its record 6
    middle.write_bytes(data)
    os.utime(middle, ns=(before.st_atime_ns, before.st_mtime_ns))
    with tfr.ShardedRecords(str(tmp_path / "rot")) as ds:
        assert len(ds) == 30
        with pytest.raises(tfr.CorruptRecordError) as info:
            list(ds.stream())
        assert (info.value.path, info.value.offset) == (str(middle), 26 * 3)
        errors: list[tfr.TFRecordError] = []
        got = list(ds.stream(on_error=errors.append))
        expected = list(tfr.iter_records([str(p) for p in ds.paths], on_error="skip"))
        assert got == expected and len(got) == 28
        assert b"record %03d" % (1 + 3 * 3) not in got and b"record %03d" % (1 + 3 * 6) not in got
        assert [(e.path, e.offset) for e in errors] == [(str(middle), 26 * 3), (str(middle), 26 * 6)]
        with pytest.raises(tfr.CorruptRecordError, match="more than max_skipped=1"):
            list(ds.stream(on_error="skip", max_skipped=1))
