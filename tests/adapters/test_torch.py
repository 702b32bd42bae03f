# tfrecord_lite.torch in one process (plus DataLoader workers): the partitioning plan as pure
# functions (hypothesis), collation, and real DataLoaders over real files written with
# TFRecordWriter — exactly once with 0 / 2 workers under fork and spawn, seeded order,
# set_epoch, resume mid-epoch (by hand and with torchdata's StatefulDataLoader), equal
# counts, mixing, SequenceExamples. The torch.distributed group tests are in
# test_torch_distributed.py.
from __future__ import annotations

import collections
import itertools
import math
import pickle
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from torch.utils.data import BatchSampler, DataLoader, RandomSampler

from tfrecord_lite.torch import (
    Collate,
    IterableTFRecordDataset,
    MixedTFRecordDataset,
    TFRecordDataset,
    collate,
    to_torch,
)

# --------------------------------------------------------------------------- files


def write_shards(
    directory: Path, sizes: Iterable[int], *, compression: str | None = None, first_id: int = 0, name: str = "part"
) -> list[str]:
    """Shards of Examples whose `id` counts up from first_id; other features derive from the id."""
    paths = []
    next_id = first_id
    for s, size in enumerate(sizes):
        path = directory / f"{name}-{s:05d}.tfrecord"
        with tfr.TFRecordWriter(path, compression=compression) as w:
            for _ in range(size):
                i = next_id
                w.write_example(
                    {
                        "id": i,
                        "x": [float(i), -float(i)],
                        "var": np.arange(i % 4, dtype=np.int64),
                        "name": f"n{i}".encode(),
                    }
                )
                next_id += 1
        paths.append(str(path))
    return paths


SPEC = {
    "id": tfr.FixedLenFeature([], "int64"),
    "x": tfr.FixedLenFeature([2], "float32"),
    "var": tfr.VarLenFeature("int64"),
    "name": tfr.FixedLenFeature([], "bytes"),
}


def ids(items: Iterable[Any]) -> list[int]:
    """The ids in items or collated batches, in order."""
    out: list[int] = []
    for item in items:
        value = item["id"]
        out.extend(int(v) for v in np.asarray(value).reshape(-1))
    return out


def loader(ds: Any, workers: int, ctx: str | None = None, batch_size: int | None = 4) -> DataLoader:
    return DataLoader(
        ds,
        batch_size=batch_size,
        num_workers=workers,
        multiprocessing_context=ctx if workers else None,
        collate_fn=collate,
    )


@pytest.fixture
def plain3(tmp_path: Path) -> list[str]:
    return write_shards(tmp_path, [7, 0, 12])  # an empty shard too


# --------------------------------------------------------------------------- planning through torch


def test_arguments_are_checked(plain3: list[str]) -> None:
    with pytest.raises(ValueError, match="sharding"):
        IterableTFRecordDataset(plain3, sharding="rows")
    with pytest.raises(ValueError, match="even"):
        IterableTFRecordDataset(plain3, even="trim")
    with pytest.raises(ValueError, match="both rank and world_size"):
        IterableTFRecordDataset(plain3, rank=1)
    with pytest.raises(ValueError, match="range"):
        IterableTFRecordDataset(plain3, rank=2, world_size=2)
    with pytest.raises(ValueError, match="weights"):
        MixedTFRecordDataset([IterableTFRecordDataset(plain3)], weights=[1, 2])
    with pytest.raises(ValueError, match="features="):
        TFRecordDataset(plain3, features=SPEC, record_type="sequence_example")
    with pytest.raises(FileNotFoundError):
        IterableTFRecordDataset(str(Path(plain3[0]).parent / "nothing-*.tfrecord"))


def test_num_records_and_explicit_shardings(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [5, 8], compression="gzip") + write_shards(tmp_path, [6], first_id=13, name="p")
    assert IterableTFRecordDataset(paths).num_records() == 19
    for sharding in ("shard", "stride", "range", "auto"):  # "range" counts the compressed shards first
        per_rank = [ids(IterableTFRecordDataset(paths, sharding=sharding, rank=r, world_size=4)) for r in range(4)]
        assert sorted(itertools.chain(*per_rank)) == list(range(19)), sharding
    ranged = [ids(IterableTFRecordDataset(paths[2:], sharding="range", rank=r, world_size=4)) for r in range(4)]
    assert [len(r) for r in ranged] == [1, 2, 1, 2] and sorted(itertools.chain(*ranged)) == list(range(13, 19))


# --------------------------------------------------------------------------- collation


def test_collate_stacks_pads_and_lists() -> None:
    items = [
        {"id": np.int64(i), "x": np.array([i, i + 1], np.float32), "var": np.arange(i, dtype=np.int64), "b": [b"a"] * i}
        for i in range(3)
    ]
    out = collate(items)
    assert out["id"].tolist() == [0, 1, 2] and out["id"].dtype == torch.int64
    assert out["x"].shape == (3, 2) and out["x"].dtype == torch.float32
    assert out["var"].tolist() == [[0, 0], [0, 0], [0, 1]]
    assert out["var_length"].tolist() == [0, 1, 2]
    assert out["b"] == [[], [b"a"], [b"a", b"a"]]
    assert list(out) == ["id", "x", "var", "var_length", "b"]
    listed = Collate(varlen="list")(items)
    assert [t.tolist() for t in listed["var"]] == [[], [0], [0, 1]] and "var_length" not in listed
    padded = Collate(pad_value=-1)([{"s": np.ones((2, 3), np.float32)}, {"s": np.ones((1, 3), np.float32)}])
    assert padded["s"].shape == (2, 2, 3) and padded["s"][1, 1].tolist() == [-1, -1, -1]
    tensors = collate([to_torch({"a": np.arange(3)}), to_torch({"a": np.arange(3)})])
    assert tensors["a"].shape == (2, 3)
    with pytest.raises(ValueError, match="var_length"):
        collate([{"var": np.arange(1), "var_length": 1}, {"var": np.arange(2), "var_length": 2}])
    assert collate([(1, 2), (3, 4)])[0].tolist() == [1, 3]  # non-dict items: torch's default


def test_to_torch_shares_memory() -> None:
    arr = np.arange(4, dtype=np.int64)
    item = to_torch({"a": arr, "s": np.float32(2.5), "b": [b"x"], "n": None})
    item["a"][0] = 9
    assert arr[0] == 9
    assert item["s"].item() == 2.5 and item["s"].dim() == 0
    assert item["b"] == [b"x"] and item["n"] is None


# --------------------------------------------------------------------------- map-style


@pytest.mark.parametrize(("workers", "ctx"), [(0, None), (2, "fork"), (2, "spawn")])
def test_map_dataset_shuffled_loader_sees_each_record_once(plain3: list[str], workers: int, ctx: str | None) -> None:
    ds = TFRecordDataset(plain3, features=SPEC)
    assert len(ds) == 19
    assert int(ds[8]["id"]) == 8 and ds[-1]["name"] == b"n18"
    assert ds[3]["var"].tolist() == [0, 1, 2]
    dl = DataLoader(
        ds,
        batch_size=5,
        shuffle=True,
        num_workers=workers,
        multiprocessing_context=ctx if workers else None,
        collate_fn=collate,
    )
    seen = ids(dl)
    assert sorted(seen) == list(range(19))
    assert seen != list(range(19))  # shuffled (19! orders: equal by chance with negligible probability)


@pytest.mark.parametrize("workers", [0, 2])
def test_map_dataset_batches_by_index_lists(plain3: list[str], workers: int) -> None:
    ds = TFRecordDataset(plain3, features=SPEC)
    batch = ds[[3, 17, 0]]
    expected = ds.collate_fn([ds[3], ds[17], ds[0]])
    assert batch.keys() == expected.keys()
    for key in batch:
        if isinstance(batch[key], torch.Tensor):
            assert torch.equal(batch[key], expected[key]), key
        else:
            assert batch[key] == expected[key], key
    assert ds[np.array([1, 2])]["id"].tolist() == [1, 2] and ds[torch.tensor(4)]["id"] == 4
    sampler = BatchSampler(RandomSampler(ds), batch_size=4, drop_last=False)
    seen = ids(DataLoader(ds, sampler=sampler, batch_size=None, num_workers=workers))
    assert sorted(seen) == list(range(19)) and seen != list(range(19))
    with_transform = TFRecordDataset(plain3, features=SPEC, transform=lambda e: {"id": e["id"] * 2})
    assert with_transform[[1, 2]]["id"].tolist() == [2, 4]


def test_map_dataset_torch_output_and_transform(plain3: list[str]) -> None:
    ds = TFRecordDataset(plain3, features=SPEC, output="torch")
    item = ds[5]
    assert isinstance(item["x"], torch.Tensor) and item["x"].tolist() == [5.0, -5.0]
    assert item["id"].dim() == 0 and int(item["id"]) == 5
    plus = TFRecordDataset(plain3[0], features=SPEC, transform=lambda e: int(e["id"]) + 100)
    assert [plus[i] for i in range(len(plus))] == list(range(100, 107))


def test_map_dataset_over_a_compressed_file(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [3], compression="gzip")
    plain = write_shards(tmp_path, [3], name="plain")
    gz, ref = TFRecordDataset(paths, features=SPEC), TFRecordDataset(plain, features=SPEC)
    assert len(gz) == 3 and [gz.raw(i) for i in range(3)] == [ref.raw(i) for i in range(3)]


# --------------------------------------------------------------------------- streaming: exactly once


@pytest.mark.parametrize(
    ("sizes", "compression", "workers", "ctx", "shuffle"),
    [
        ([7, 0, 12], None, 0, None, False),  # shards, an empty one among them
        ([7, 0, 12], None, 0, None, True),
        ([7, 0, 12], None, 2, "fork", False),  # shards >= consumers: whole shards
        ([7, 0, 12], None, 2, "fork", True),
        ([19], None, 2, "fork", False),  # one indexed shard: record ranges
        ([19], None, 2, "fork", True),
        ([19], "gzip", 2, "fork", False),  # one compressed shard: strides
        ([19], "gzip", 2, "fork", True),
        ([5, 9], "zlib", 2, "spawn", True),  # spawn is slow: once
    ],
)
def test_stream_sees_each_record_once(
    tmp_path: Path, sizes: list[int], compression: str | None, workers: int, ctx: str | None, shuffle: bool
) -> None:
    paths = write_shards(tmp_path, sizes, compression=compression)
    ds = IterableTFRecordDataset(paths, features=SPEC, shuffle=shuffle, shuffle_buffer=5, seed=3)
    seen = ids(loader(ds, workers, ctx))
    assert sorted(seen) == list(range(sum(sizes)))


def test_stream_more_workers_than_records(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [1])
    seen = ids(loader(IterableTFRecordDataset(paths), 2, "fork", batch_size=None))
    assert seen == [0]


def test_stream_consumers_simulated(tmp_path: Path) -> None:
    """Ranks given explicitly (no process group): 3 ranks x 2 workers over mixed plain / gzip shards."""
    paths = write_shards(tmp_path, [4, 6], compression="gzip") + write_shards(tmp_path, [5], first_id=10, name="plain")
    per_rank = [
        ids(loader(IterableTFRecordDataset(paths, shuffle=True, rank=r, world_size=3), 2, "fork")) for r in range(3)
    ]
    assert sorted(itertools.chain(*per_rank)) == list(range(15))


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(0, 9), st.sampled_from([None, "gzip"])), min_size=1, max_size=4),
    world=st.integers(1, 3),
    shuffle=st.booleans(),
    buffer=st.integers(0, 5),
    even=st.sampled_from([None, "drop", "pad"]),
    cut=st.floats(0, 1),
)
def test_stream_properties(
    sizes: list[tuple[int, str | None]], world: int, shuffle: bool, buffer: int, even: str | None, cut: float
) -> None:
    """Any shards, ranks and options: the ranks together see what `even` promises, and rank 0 resumed
    anywhere yields exactly the rest."""
    total = sum(n for n, _ in sizes)
    with tempfile.TemporaryDirectory() as tmp:
        paths, first = [], 0
        for s, (n, compression) in enumerate(sizes):
            paths += write_shards(Path(tmp), [n], compression=compression, first_id=first, name=f"s{s}")
            first += n

        def make(rank: int) -> IterableTFRecordDataset:
            opts: dict[str, Any] = {"shuffle": shuffle, "shuffle_buffer": buffer, "even": even, "seed": 7}
            return IterableTFRecordDataset(paths, rank=rank, world_size=world, **opts)

        if even == "pad" and 0 < total < world:
            with pytest.raises(ValueError, match="no records"):
                [ids(make(r)) for r in range(world)]
            return
        per_rank = [ids(make(r)) for r in range(world)]
        flat = list(itertools.chain(*per_rank))
        if even is None:
            assert sorted(flat) == list(range(total))
        else:
            assert len({len(r) for r in per_rank}) == 1
            if even == "drop":
                assert len(set(flat)) == len(flat)
            else:
                assert set(flat) == set(range(total))
        k = int(cut * len(per_rank[0]))
        ds = make(0)
        head = ids(itertools.islice(iter(ds), k))
        resumed = make(0)
        resumed.load_state_dict(ds.state_dict())
        assert head + ids(resumed) == per_rank[0]


# --------------------------------------------------------------------------- batched (columnar) mode


@pytest.mark.parametrize("workers", [0, 2])
def test_batched_mode_equals_collated_items(tmp_path: Path, workers: int) -> None:
    paths = write_shards(tmp_path, [11, 6], compression="gzip" if workers else None)
    spec = dict(
        SPEC, names=tfr.VarLenFeature("bytes"), pair=tfr.FixedLenFeature([2], "bytes", default_value=[b"a", b"b"])
    )
    opts: dict[str, Any] = {"shuffle": True, "shuffle_buffer": 4, "seed": 2}
    per_item = IterableTFRecordDataset(paths, features=spec, **opts)
    items = DataLoader(per_item, batch_size=4, num_workers=workers, collate_fn=per_item.collate_fn)
    batches = DataLoader(
        IterableTFRecordDataset(paths, features=spec, batch_size=4, **opts), batch_size=None, num_workers=workers
    )
    n = 0
    for a, b in itertools.zip_longest(items, batches):
        assert a.keys() == b.keys() == {"id", "x", "var", "var_length", "name", "names", "pair"}
        for key in a:
            if isinstance(a[key], torch.Tensor):
                assert a[key].dtype == b[key].dtype and torch.equal(a[key], b[key]), key
            else:
                assert a[key] == b[key], key
        n += len(a["id"])
    assert n == 17
    if workers:  # a worker's batch arrives copied out of its shared ring (transport.py), as plain types
        assert type(b) is dict and type(b["name"]) is list and not b["id"].is_shared()
    assert b["pair"][0] == [b"a", b"b"] and b["names"][0] == []
    regular = per_item.collate_fn([{"var": np.arange(2)}, {"var": np.arange(2)}])  # VarLen: lengths always
    assert regular["var_length"].tolist() == [2, 2]
    assert "var_length" not in collate([{"var": np.arange(2)}, {"var": np.arange(2)}])  # no spec: by shape


def test_batched_mode_large_records(tmp_path: Path) -> None:
    """Records of several KiB are decoded one by one (cheaper than by columns there): same layout."""
    path = tmp_path / "big.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for i in range(10):
            w.write_example({"id": i, "blob": bytes([i]) * 6000, "var": np.arange(i % 3, dtype=np.int64)})
    spec = {
        "id": tfr.FixedLenFeature([], "int64"),
        "blob": tfr.FixedLenFeature([], "bytes"),
        "var": tfr.VarLenFeature("int64"),
    }
    per_item = IterableTFRecordDataset([path], features=spec)
    expected = list(DataLoader(per_item, batch_size=4, collate_fn=per_item.collate_fn))
    got = list(IterableTFRecordDataset([path], features=spec, batch_size=4))
    assert len(got) == len(expected) == 3
    for a, b in zip(expected, got, strict=False):
        assert a.keys() == b.keys() == {"id", "blob", "var", "var_length"}
        assert torch.equal(a["id"], b["id"]) and torch.equal(a["var"], b["var"]) and a["blob"] == b["blob"]
    assert got[0]["id"].dtype == torch.int64 and got[0]["blob"][1] == b"\x01" * 6000
    mapped = TFRecordDataset([path], features=spec)[[9, 2]]
    assert mapped["id"].tolist() == [9, 2] and mapped["var_length"].tolist() == [0, 2]


def test_batched_mode_drop_last_transform_and_resume(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [10])
    ds = IterableTFRecordDataset(
        paths, features=SPEC, batch_size=4, drop_last=True, transform=lambda b: b["id"].tolist()
    )
    assert list(ds) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    it = iter(ds)
    next(it)
    again = IterableTFRecordDataset(paths, features=SPEC, batch_size=4)
    again.load_state_dict(ds.state_dict())
    assert [b["id"].tolist() for b in again] == [[4, 5, 6, 7], [8, 9]]
    with pytest.raises(ValueError, match="features"):
        IterableTFRecordDataset(paths, batch_size=4)


# --------------------------------------------------------------------------- order, epochs


def test_same_seed_same_order_and_set_epoch_changes_it(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [10, 10, 10, 10])

    def order(seed: int, epoch: int, workers: int = 0) -> list[int]:
        ds = IterableTFRecordDataset(paths, shuffle=True, shuffle_buffer=8, seed=seed)
        ds.set_epoch(epoch)
        return ids(loader(ds, workers, "fork"))

    first = order(1, 0)
    assert sorted(first) == list(range(40)) and first != list(range(40))
    assert order(1, 0) == first
    assert order(1, 1) != first and sorted(order(1, 1)) == list(range(40))
    assert order(2, 0) != first
    assert order(1, 2, workers=2) == order(1, 2, workers=2)


# --------------------------------------------------------------------------- resume


def take_then_resume(ds_factory: Any, k: int) -> tuple:
    ds = ds_factory()
    it = iter(ds)
    head = ids(itertools.islice(it, k))
    state = ds.state_dict()
    fresh = ds_factory()
    fresh.load_state_dict(state)
    rest = ids(fresh)
    return head, rest, ids(ds_factory())


@pytest.mark.parametrize("compression", [None, "gzip"])
@pytest.mark.parametrize(
    "options", [{}, {"shuffle": True, "shuffle_buffer": 6}, {"even": "pad", "rank": 1, "world_size": 4}]
)
def test_resume_mid_epoch_gives_exactly_the_rest(
    tmp_path: Path, compression: str | None, options: dict[str, Any]
) -> None:
    paths = write_shards(tmp_path, [9, 14], compression=compression)
    for k in (0, 5, 11):
        head, rest, full = take_then_resume(lambda: IterableTFRecordDataset(paths, seed=5, **options), k)
        assert head + rest == full, k


def test_resume_checks_the_topology(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [6])
    ds = IterableTFRecordDataset(paths, rank=0, world_size=2)
    next(iter(ds))
    other = IterableTFRecordDataset(paths, rank=1, world_size=2)
    other.load_state_dict(ds.state_dict())
    with pytest.raises(ValueError, match="consumer 0 of 2"):
        iter(other)


def test_set_epoch_keeps_a_loaded_position_of_that_epoch(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [12])
    ds = IterableTFRecordDataset(paths, shuffle=True, shuffle_buffer=4)
    ds.set_epoch(3)
    full = ids(ds)
    ds2 = IterableTFRecordDataset(paths, shuffle=True, shuffle_buffer=4)
    ds2.set_epoch(3)
    head = ids(itertools.islice(iter(ds2), 5))
    ds3 = IterableTFRecordDataset(paths, shuffle=True, shuffle_buffer=4)
    ds3.load_state_dict(ds2.state_dict())
    ds3.set_epoch(3)  # a training loop that calls set_epoch(epoch) after restoring keeps the position
    assert head + ids(ds3) == full
    ds3.set_epoch(4)
    assert sorted(ids(ds3)) == list(range(12))


# --------------------------------------------------------------------------- equal counts


@pytest.mark.parametrize("even", ["drop", "pad"])
@pytest.mark.parametrize("compression", [None, "gzip"])
def test_even_counts_per_rank(tmp_path: Path, even: str, compression: str | None) -> None:
    paths = write_shards(tmp_path, [3, 11, 6], compression=compression)  # 20 records, 3 ranks x 2 workers
    per_rank = [
        ids(
            loader(
                IterableTFRecordDataset(paths, even=even, shuffle=True, rank=r, world_size=3),
                2,
                "fork",
                batch_size=None,
            )
        )
        for r in range(3)
    ]
    counts = {len(r) for r in per_rank}
    assert len(counts) == 1
    flat = list(itertools.chain(*per_rank))
    if even == "drop":
        assert len(set(flat)) == len(flat) and set(flat) <= set(range(20))
        assert len(flat) == 18  # ranges: 20 records, 6 consumers, 3 each
    else:
        assert set(flat) == set(range(20))


# --------------------------------------------------------------------------- mixing


def test_mixing_ratios_hold(tmp_path: Path) -> None:
    a = IterableTFRecordDataset(write_shards(tmp_path, [20], name="a"), shuffle=True)
    b = IterableTFRecordDataset(write_shards(tmp_path, [7], first_id=1000, name="b"), shuffle=True)
    mixed = MixedTFRecordDataset([a, b], weights=[3, 1], seed=4, infinite=True)
    n = 4000
    got = ids(itertools.islice(iter(mixed), n))
    share = sum(i < 1000 for i in got) / n
    sigma = math.sqrt(0.75 * 0.25 / n)
    assert abs(share - 0.75) < 5 * sigma
    counts = collections.Counter(i for i in got if i >= 1000)
    assert set(counts) == set(range(1000, 1007))  # b cycled through its epochs
    assert max(counts.values()) - min(counts.values()) <= 2  # every pass is a full epoch


def test_finite_mixing_ends(tmp_path: Path) -> None:
    a = IterableTFRecordDataset(write_shards(tmp_path, [30], name="a"))
    b = IterableTFRecordDataset(write_shards(tmp_path, [10], first_id=1000, name="b"))
    every = ids(MixedTFRecordDataset([a, b], weights=[1, 1], stop="all"))
    assert sorted(every) == list(range(30)) + list(range(1000, 1010))
    first = ids(MixedTFRecordDataset([a, b], weights=[1, 1], stop="first"))
    assert len(set(first)) == len(first) < 40
    assert set(range(1000, 1010)) <= set(first) or set(range(30)) <= set(first)
    with_workers = ids(loader(MixedTFRecordDataset([a, b], weights=[1, 2], stop="all"), 2, "fork"))
    assert sorted(with_workers) == sorted(every)


def test_mixing_resume(tmp_path: Path) -> None:
    a = write_shards(tmp_path, [15], name="a")
    b = write_shards(tmp_path, [9], first_id=1000, name="b", compression="gzip")

    def make() -> MixedTFRecordDataset:
        return MixedTFRecordDataset(
            [IterableTFRecordDataset(a, shuffle=True, shuffle_buffer=4), IterableTFRecordDataset(b)],
            weights=[2, 1],
            seed=1,
        )

    head, rest, full = take_then_resume(make, 13)
    assert head + rest == full and sorted(full) == list(range(15)) + list(range(1000, 1009))


# --------------------------------------------------------------------------- SequenceExamples


def test_sequence_examples_pad_with_lengths(tmp_path: Path) -> None:
    path = tmp_path / "seq.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for i in range(6):
            steps = [[float(i), float(t)] for t in range(i % 3 + 1)]
            w.write(
                tfr.encode_sequence_example(
                    {"id": i}, {"frames": steps, "tokens": [[t] * (t + 1) for t in range(i % 3 + 1)]}
                )
            )
    ds = IterableTFRecordDataset(
        [path],
        context_features={"id": tfr.FixedLenFeature([], "int64")},
        sequence_features={"frames": tfr.FixedLenSequenceFeature([2], "float32"), "tokens": tfr.VarLenFeature("int64")},
    )
    batch = next(iter(DataLoader(ds, batch_size=6, collate_fn=ds.collate_fn)))
    assert batch["id"].tolist() == list(range(6))
    assert batch["frames"].shape == (6, 3, 2)
    assert batch["frames_length"].tolist() == [1, 2, 3, 1, 2, 3]
    assert batch["frames"][4].tolist() == [[4.0, 0.0], [4.0, 1.0], [0.0, 0.0]]
    assert all(isinstance(t, torch.Tensor) for steps in batch["tokens"] for t in steps)
    assert [[t.tolist() for t in steps] for steps in batch["tokens"]][2] == [[0], [1, 1], [2, 2, 2]]
    plain = TFRecordDataset([path], record_type="sequence_example")  # no spec: steps stacked when regular
    assert plain[2]["frames"].shape == (3, 2) and int(plain[2]["id"][0]) == 2


def test_the_streaming_dataset_shows_its_settings(tmp_path: Path) -> None:
    """The settings given to IterableTFRecordDataset read back as attributes, also after pickling."""
    paths = write_shards(tmp_path, [3, 2])
    ds = IterableTFRecordDataset(
        tmp_path, features=SPEC, shuffle=True, shuffle_buffer=8, seed=7, sharding="stride", even="drop", verify=False,
        prefetch=4, on_error="skip", max_skipped=2, batch_size=2,
    )  # fmt: skip
    for shown in (ds, pickle.loads(pickle.dumps(ds))):
        assert shown.paths == paths
        assert (shown.shuffle, shown.shuffle_buffer, shown.seed) == (True, 8, 7)
        assert (shown.sharding, shown.even, shown.verify, shown.prefetch) == ("stride", "drop", False, 4)
        assert (shown.on_error, shown.max_skipped, shown.batch_size, shown.storage_options) == ("skip", 2, 2, None)
