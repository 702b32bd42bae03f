# DataLoader workers: the ring transport of tfrecord_lite/_loader/transport.py round-trips any batch
# (hypothesis, through the pickler DataLoader's queues use), real DataLoaders with 2 persistent workers
# give every record exactly once in every epoch (each epoch a new shuffle) for the streaming and the
# map-style datasets, and the batches that come out of workers have the types and values they have
# without workers.
from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tfrecord_lite._loader import transport

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from multiprocessing.reduction import ForkingPickler

from torch.utils.data import BatchSampler, DataLoader, RandomSampler

from tfrecord_lite.torch import IterableTFRecordDataset, MixedTFRecordDataset, TFRecordDataset

SPEC = {
    "id": tfr.FixedLenFeature([], "int64"),
    "x": tfr.FixedLenFeature([2], "float32"),
    "name": tfr.FixedLenFeature([], "bytes"),
    "blob": tfr.FixedLenFeature([], "bytes"),
    "var": tfr.VarLenFeature("int64"),
}


def write_shards(directory: Path, sizes: list[int]) -> list[str]:
    """Shards of Examples whose `id` counts up from 0; `blob` is large for some of them."""
    paths, i = [], 0
    for s, size in enumerate(sizes):
        path = directory / f"part-{s:05d}.tfrecord"
        with tfr.TFRecordWriter(path) as w:
            for _ in range(size):
                blob = bytes([i % 251]) * (5000 if i % 3 == 0 else i % 17)
                w.write_example(
                    {
                        "id": i,
                        "x": [float(i), -float(i)],
                        "name": b"n%d" % i,
                        "blob": blob,
                        "var": np.arange(i % 4, dtype=np.int64),
                    }
                )
                i += 1
        tfr.write_index(path)
        paths.append(str(path))
    return paths


def round_trip(batch: Any) -> Any:
    """`batch` pickled as a DataLoader worker's queue pickles it, marked for the ring, and unpickled."""
    return pickle.loads(ForkingPickler.dumps(transport.mark(batch)))


def same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return type(b) is torch.Tensor and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(b) is type(a) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(b) is type(a) and a == b


DTYPES = [torch.uint8, torch.int32, torch.int64, torch.float16, torch.float32, torch.float64, torch.bool]
tensors = st.builds(
    lambda dtype, shape, seed: (torch.rand(shape, generator=torch.Generator().manual_seed(seed)) * 100).to(dtype),
    st.sampled_from(DTYPES),
    st.lists(st.integers(0, 5), max_size=3),
    st.integers(0, 2**16),
)
values = st.one_of(
    tensors,
    st.lists(st.binary(max_size=300), min_size=1, max_size=20),  # joined and split again
    st.lists(st.binary(min_size=4000, max_size=9000), min_size=1, max_size=3),  # large: copied one by one
    st.lists(st.binary(max_size=5), max_size=3).map(lambda v: [v]),  # nested: pickled as it is
    st.integers(),
    st.text(max_size=5),
)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.text(max_size=4), values, max_size=6), st.sampled_from([dict, list, tuple]))
def test_the_ring_transport_round_trips_any_batch(batch: dict[str, Any], container: type) -> None:
    batch = batch if container is dict else container(batch.values())
    for _ in range(transport._SLOTS + 1):  # every slot, and a slot reused
        got = round_trip(batch)
        assert same(batch, got)
        if isinstance(got, dict):
            assert all(not v.is_shared() for v in got.values() if isinstance(v, torch.Tensor))  # copied out


def test_a_busy_slot_sends_a_one_off_segment_and_plain_pickle_sees_a_plain_dict() -> None:
    batch = {"v": [b"a" * 70_000, b"b"], "t": torch.arange(5), "big": torch.arange(300_000)}  # big: own segment
    pending = [ForkingPickler.dumps(transport.mark(batch)) for _ in range(transport._SLOTS + 2)]  # none copied out
    assert all(same(batch, pickle.loads(p)) for p in pending)
    assert type(pickle.loads(pickle.dumps(transport.mark(batch)))) is transport._Dict  # the ring is only for queues


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return write_shards(tmp_path_factory.mktemp("workers"), [37, 20, 44])


def loaders(paths: list[str], workers: int) -> dict[str, DataLoader[Any]]:
    """Every way of batching the datasets, with `workers` persistent workers."""
    kw: dict[str, Any] = {"num_workers": workers, "persistent_workers": workers > 0}
    batched = IterableTFRecordDataset(paths, features=SPEC, shuffle=True, shuffle_buffer=8, batch_size=16)
    items = IterableTFRecordDataset(paths, features=SPEC, shuffle=True, shuffle_buffer=8)
    mapped = TFRecordDataset(paths, features=SPEC)
    sampler = BatchSampler(RandomSampler(mapped, generator=torch.Generator().manual_seed(0)), 16, False)
    return {
        "batched": DataLoader(batched, batch_size=None, **kw),
        "items": DataLoader(items, batch_size=16, collate_fn=items.collate_fn, **kw),
        "map, batch sampler": DataLoader(mapped, sampler=sampler, batch_size=None, **kw),
        "map, __getitems__": DataLoader(mapped, batch_size=16, shuffle=True, collate_fn=mapped.collate_fn, **kw),
    }


@pytest.mark.parametrize("kind", ["batched", "items", "map, batch sampler", "map, __getitems__"])
def test_persistent_workers_give_every_record_once_per_epoch(shards: list[str], kind: str) -> None:
    loader = loaders(shards, 2)[kind]
    orders = []
    for _ in range(3):
        got = [(int(i), name) for batch in loader for i, name in zip(batch["id"], batch["name"], strict=True)]
        assert sorted(got) == [(i, b"n%d" % i) for i in range(101)]
        orders.append([i for i, _ in got])
    assert len({tuple(order) for order in orders}) == 3  # each epoch shuffled anew


def test_a_mixture_through_persistent_workers_is_every_record_once_per_epoch(shards: list[str]) -> None:
    sources = [IterableTFRecordDataset(p, features=SPEC, shuffle=True, shuffle_buffer=4) for p in shards]
    mixed = MixedTFRecordDataset(sources, weights=[1, 2, 1], seed=3)
    loader = DataLoader(mixed, batch_size=8, collate_fn=sources[0].collate_fn, num_workers=2, persistent_workers=True)
    orders = []
    for _ in range(3):
        got = [int(i) for batch in loader for i in batch["id"]]
        assert sorted(got) == list(range(101))
        orders.append(tuple(got))
    assert len(set(orders)) == 3


def rows(batch: dict[str, Any]) -> dict[int, tuple[Any, ...]]:
    """Each record of a batch by its id: (name, blob, x, var)."""
    n = batch["var_length"].tolist()
    return {
        int(i): (batch["name"][r], batch["blob"][r], batch["x"][r].tolist(), batch["var"][r][: n[r]].tolist())
        for r, i in enumerate(batch["id"].tolist())
    }


def test_batches_from_workers_have_the_types_and_values_of_batches_without(shards: list[str]) -> None:
    for kind, loader in loaders(shards, 2).items():
        expected: dict[int, tuple[Any, ...]] = {}
        for batch in loaders(shards, 0)[kind]:
            expected.update(rows(batch))
        got: dict[int, tuple[Any, ...]] = {}
        for batch in loader:
            assert type(batch) is dict and type(batch["blob"]) is list and type(batch["blob"][0]) is bytes, kind
            assert all(type(batch[k]) is torch.Tensor for k in ("id", "x", "var", "var_length")), kind
            assert batch["x"].dtype == torch.float32 and batch["id"].dtype == torch.int64, kind
            got.update(rows(batch))
        assert got == expected and len(got) == 101, kind


def test_image_tuples_cross_as_tensors(tmp_path: Path) -> None:
    pil = pytest.importorskip("PIL.Image")
    from tfrecord_lite.images import ImageTransform

    path = tmp_path / "images.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for i in range(10):
            png = io.BytesIO()
            pil.fromarray(np.full((4, 6, 3), i, np.uint8)).save(png, "PNG")
            w.write_example({"image/encoded": png.getvalue(), "image/class/label": i})
    ds = TFRecordDataset(path, transform=ImageTransform())
    loader = DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True, collate_fn=ds.collate_fn)
    for _ in range(2):
        batches = list(loader)
        assert [type(b) for b in batches] == [list] * 3
        labels = torch.cat([b[1] for b in batches]).tolist()
        assert labels == list(range(10))
        assert all(b[0].dtype == torch.uint8 and (b[0] == b[1].view(-1, 1, 1, 1)).all() for b in batches)


def test_packed_batches_and_byte_views_arrive_as_plain_batches_of_bytes() -> None:
    views = [memoryview(b"x" * 5000), memoryview(b"yz"), b"plain"]
    batch = {"v": views, "small": [memoryview(b"ab"), memoryview(b"")], "t": torch.arange(6).view(2, 3), "n": 3}
    for _ in range(transport._SLOTS + 1):
        got = pickle.loads(ForkingPickler.dumps(transport.pack(batch)))
        expected = {"v": [b"x" * 5000, b"yz", b"plain"], "small": [b"ab", b""], "t": batch["t"], "n": 3}
        assert same(expected, got)
    assert transport.pack(7) == 7  # not a batch: as it is


BIG = {"id": tfr.FixedLenFeature([], "int64"), "blob": tfr.FixedLenFeature([], "bytes"), "x": SPEC["x"]}


@pytest.fixture(scope="module")
def big_shards(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Records of 5-9 KiB: batches are decoded record by record, their blobs cross as large values."""
    paths, i = [], 0
    for s, size in enumerate([23, 18]):
        path = tmp_path_factory.mktemp("big") / f"part-{s}.tfrecord"
        with tfr.TFRecordWriter(path) as w:
            for _ in range(size):
                w.write_example({"id": i, "blob": bytes([i % 251]) * (5000 + 97 * i), "x": [float(i), 1.0]})
                i += 1
        tfr.write_index(path)
        paths.append(str(path))
    return paths


def big_loaders(paths: list[str], **kw: Any) -> dict[str, DataLoader[Any]]:
    batched = IterableTFRecordDataset(paths, features=BIG, shuffle=True, shuffle_buffer=4, batch_size=4)
    items = IterableTFRecordDataset(paths, features=BIG, shuffle=True, shuffle_buffer=4)
    mapped = TFRecordDataset(paths, features=BIG)
    sampler = BatchSampler(RandomSampler(mapped), 4, False)
    return {
        "batched": DataLoader(batched, batch_size=None, **kw),
        "items": DataLoader(items, batch_size=4, collate_fn=items.collate_fn, **kw),
        "map, batch sampler": DataLoader(mapped, sampler=sampler, batch_size=None, **kw),
        "map, __getitems__": DataLoader(mapped, batch_size=4, shuffle=True, collate_fn=mapped.collate_fn, **kw),
    }


def check_big(batch: dict[str, Any]) -> list[int]:
    assert type(batch) is dict and type(batch["blob"]) is list
    ids = batch["id"].tolist()
    assert all(type(b) is bytes for b in batch["blob"])
    assert batch["blob"] == [bytes([i % 251]) * (5000 + 97 * i) for i in ids]
    assert batch["x"].tolist() == [[float(i), 1.0] for i in ids]
    return ids


@pytest.mark.parametrize("kind", ["batched", "items", "map, batch sampler", "map, __getitems__"])
def test_kept_batches_of_large_records_stay_whole_and_cover_every_record(big_shards: list[str], kind: str) -> None:
    loader = big_loaders(big_shards, num_workers=2, persistent_workers=True)[kind]
    kept = [list(loader) for _ in range(2)]  # more batches than a worker's slots, all held on to
    del loader  # the workers end; what they sent stays the main process's own
    for epoch in kept:
        assert sorted(i for batch in epoch for i in check_big(batch)) == list(range(41))


def test_a_collate_fn_of_ones_own_sees_plain_dicts_of_bytes(big_shards: list[str]) -> None:
    def seen(item: Any) -> Any:  # no memoryviews where user code looks
        assert isinstance(item, dict), type(item)  # a dict (in a worker, marked for the transport)
        blobs = item["blob"] if isinstance(item["blob"], list) else [item["blob"]]
        assert blobs and all(type(b) is bytes for b in blobs)
        return item

    batched = IterableTFRecordDataset(big_shards, features=BIG, batch_size=4)
    items = IterableTFRecordDataset(big_shards, features=BIG)
    mapped = TFRecordDataset(big_shards, features=BIG)
    kw: dict[str, Any] = {"num_workers": 2}
    loaders = [
        DataLoader(batched, batch_size=None, collate_fn=seen, **kw),
        DataLoader(
            mapped, sampler=BatchSampler(RandomSampler(mapped), 4, False), batch_size=None, collate_fn=seen, **kw
        ),
        DataLoader(items, batch_size=4, collate_fn=lambda b: items.collate_fn([seen(i) for i in b]), **kw),
        DataLoader(mapped, batch_size=4, collate_fn=lambda b: mapped.collate_fn([seen(i) for i in b]), **kw),
    ]
    for loader in loaders:
        assert sorted(i for batch in loader for i in check_big(batch)) == list(range(41))
