# The plain DataLoader calls users write (batch_size=B, torch's default collate) with workers: a worker
# fetcher that collates with default_collate collates with collate.worker_collate instead, and the batches
# that reach the main process are those of no workers, every record exactly once, for the map-style and
# the per-item streaming dataset, small batch tensors (through the transport's slots) and large ones (the
# ring of batch buffers, which batches kept by the user must never see reused). A worker handing on raw
# records undecoded makes the main process warn DataLoaderWarning once.
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr
from tfrecord_lite._loader import transport

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from multiprocessing.reduction import ForkingPickler

from torch.utils.data import DataLoader, default_collate

from tfrecord_lite._loader.collate import worker_collate
from tfrecord_lite.torch import DataLoaderWarning, IterableTFRecordDataset, TFRecordDataset

SPEC = {"image": tfr.FixedLenFeature([], "bytes"), "lable": tfr.FixedLenFeature([], "int64")}
COUNT = 150


def pixels(i: int, side: int) -> np.ndarray:
    return ((np.arange(side * side * 3) * 7 + i * 13) % 251).astype(np.uint8).reshape(side, side, 3)


def write_images(path: Path, side: int, count: int = COUNT) -> str:
    """The seed's records: raw pixels (image.tobytes()) and an int64 "lable"."""
    with tfr.TFRecordWriter(path) as w:
        for i in range(count):
            w.write_example({"image": pixels(i, side).tobytes(), "lable": i})
    tfr.write_index(path)
    return str(path)


class ToTensor:
    """The tutorials' per-record transform: raw bytes to an HWC uint8 tensor, and the label."""

    def __init__(self, side: int) -> None:
        self.side = side

    def __call__(self, ex: dict[str, Any]) -> tuple[Any, Any]:
        image = np.frombuffer(ex["image"], np.uint8).reshape(self.side, self.side, 3).copy()
        return torch.from_numpy(image), ex["lable"]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> str:  # 32 x 10x10x3: batch tensors through the slots
    return write_images(tmp_path_factory.mktemp("small") / "seed.tfrecord", 10)


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> str:  # 16 x 160x160x3 = 1.2 MB: the ring of batch buffers
    return write_images(tmp_path_factory.mktemp("large") / "seed.tfrecord", 160)


def loader(path: str, side: int, kind: str, workers: int, batch: int = 32) -> Any:
    if kind == "map":  # shuffled once, the same order for every loader (shuffle=True draws from the workers' seed)
        ds: Any = TFRecordDataset(path, features=SPEC, transform=ToTensor(side))
        order = np.random.default_rng(0).permutation(COUNT).tolist()
        return DataLoader(ds, batch_size=batch, sampler=order, num_workers=workers, persistent_workers=workers > 0)
    ds = IterableTFRecordDataset(path, features=SPEC, transform=ToTensor(side))
    return DataLoader(ds, batch_size=batch, num_workers=workers, persistent_workers=workers > 0)


def check_batch(batch: Any, side: int) -> list[int]:
    """The batch's labels, after checking that it is default_collate's layout with each record's pixels."""
    assert type(batch) is list and len(batch) == 2
    images, labels = batch
    assert type(images) is torch.Tensor and images.dtype == torch.uint8 and images.shape[1:] == (side, side, 3)
    assert type(labels) is torch.Tensor and labels.dtype == torch.int64
    for image, label in zip(images, labels.tolist(), strict=True):
        assert np.array_equal(image.numpy(), pixels(label, side))
    return list(labels.tolist())


@pytest.mark.parametrize("kind", ["map", "iterable"])
@pytest.mark.parametrize("size", ["small", "large"])
def test_the_plain_call_with_workers_gives_the_batches_of_no_workers(
    kind: str, size: str, request: pytest.FixtureRequest
) -> None:
    path, side = request.getfixturevalue(size), 10 if size == "small" else 160
    batch = 32 if size == "small" else 16
    without = [check_batch(b, side) for b in loader(path, side, kind, 0, batch)]
    assert sorted(i for b in without for i in b) == list(range(COUNT))
    with_workers = loader(path, side, kind, 2, batch)
    for _epoch in range(2):
        labels = [check_batch(b, side) for b in with_workers]
        assert sorted(i for b in labels for i in b) == list(range(COUNT))  # every record exactly once
        if kind == "map":  # the sampler is the main process's: the same batches, in the same order
            assert labels == without


def test_batches_kept_by_the_user_stay_intact_while_more_are_made(large: str) -> None:
    """Every batch of two epochs kept: the ring's buffers they view are never handed out again while they live."""
    kept = []
    ds = TFRecordDataset(large, features=SPEC, transform=ToTensor(160))
    loader = DataLoader(ds, batch_size=16, shuffle=True, num_workers=2, persistent_workers=True)
    for _epoch in range(2):
        kept.extend(loader)
    labels = [check_batch(b, 160) for b in kept]
    assert sorted(i for b in labels for i in b) == sorted(list(range(COUNT)) * 2)


class Nested:
    """Items whose large tensor sits inside a tuple of the item: collated outside the ring of batch buffers."""

    def __call__(self, ex: dict[str, Any]) -> tuple[Any, Any]:
        image = torch.from_numpy(np.frombuffer(ex["image"], np.uint8).reshape(160, 160, 3).copy())
        return image, (image.clone(), ex["lable"])


def test_kept_batches_of_nested_large_tensors_stay_intact(large: str) -> None:
    ds = TFRecordDataset(large, features=SPEC, transform=Nested())
    loader = DataLoader(ds, batch_size=16, shuffle=True, num_workers=2, persistent_workers=True)
    kept = [b for _epoch in range(2) for b in loader]
    labels = []
    for images, (copies, label) in kept:
        assert torch.equal(images, copies)
        labels.extend(check_batch([images, label], 160))
    assert sorted(labels) == sorted(list(range(COUNT)) * 2)


def test_a_dataset_without_transform_gives_default_collates_dicts(small: str) -> None:
    ds = TFRecordDataset(small, features=SPEC)
    out = {}
    for workers in (0, 2):
        gen = torch.Generator().manual_seed(1)
        out[workers] = list(DataLoader(ds, batch_size=32, shuffle=True, generator=gen, num_workers=workers))
    for a, b in zip(out[0], out[2], strict=True):
        assert type(b) is dict and list(b) == ["image", "lable"]
        assert type(b["image"]) is list and all(type(v) is bytes for v in b["image"]) and b["image"] == a["image"]
        assert b["lable"].dtype == torch.int64 and torch.equal(a["lable"], b["lable"])


def test_the_streaming_dataset_without_transform_gives_default_collates_dicts(raw_records: str) -> None:
    ds = IterableTFRecordDataset(raw_records, features=SPEC)  # 20 KB values: they cross as views, arrive as bytes
    rows = {}
    for workers in (0, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataLoaderWarning)
            batches = list(DataLoader(ds, batch_size=32, num_workers=workers))
        assert all(type(b) is dict and type(b["image"]) is list and b["lable"].dtype == torch.int64 for b in batches)
        rows[workers] = sorted((i, v) for b in batches for i, v in zip(b["lable"].tolist(), b["image"], strict=True))
    assert rows[0] == rows[2] and [i for i, _ in rows[2]] == list(range(96))
    assert all(type(v) is bytes and v == bytes([i]) * 20_000 for i, v in rows[2])


ITEMS: list[Any] = [
    [(torch.arange(6).reshape(2, 3), 1, "a"), (torch.arange(6, 12).reshape(2, 3), 2, "b")],
    [{"x": np.float32(1.5), "y": np.arange(3), "s": b"one"}, {"x": np.float32(2.5), "y": np.arange(3, 6), "s": b"two"}],
    [[1.0, (2, 3)], [4.0, (5, 6)]],
    [torch.zeros(64, 64, 64, dtype=torch.float32), torch.ones(64, 64, 64, dtype=torch.float32)],  # 2 MB: own buffer
]


def same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return type(b) is torch.Tensor and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b) and type(a) is type(b)


@pytest.mark.parametrize("items", ITEMS)
def test_worker_collate_is_default_collate_after_the_queue(items: list[Any]) -> None:
    """What the main process unpickles from a worker_collate batch is what default_collate makes."""
    collated = worker_collate(items)
    assert transport.is_marked(collated) == (type(items[0]) is not torch.Tensor)
    assert same(default_collate(items), ForkingPickler.loads(ForkingPickler.dumps(collated)))


def test_tensors_of_different_sizes_raise_torchs_error() -> None:
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        worker_collate([torch.zeros(2), torch.zeros(3)])


# --------------------------------------------------------------------------- the warning


@pytest.fixture
def raw_records(tmp_path: Path) -> str:
    path = tmp_path / "raw.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for i in range(96):
            w.write_example({"image": bytes([i]) * 20_000, "lable": i})
    tfr.write_index(path)
    return str(path)


def advice_seen(loader: Any, epochs: int = 2) -> list[warnings.WarningMessage]:
    transport._advised = False  # once per process: as in a fresh one
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _epoch in range(epochs):
            assert sum(len(b["lable"]) for b in loader) == 96
    return [w for w in seen if issubclass(w.category, DataLoaderWarning)]


@pytest.mark.parametrize("kind", ["map", "iterable", "batched"])
def test_workers_handing_on_raw_records_warn_once_with_the_faster_form(raw_records: str, kind: str) -> None:
    if kind == "map":
        ds: Any = TFRecordDataset(raw_records, features=SPEC)
        loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=2, persistent_workers=True)
    elif kind == "iterable":
        loader = DataLoader(IterableTFRecordDataset(raw_records, features=SPEC), batch_size=32, num_workers=2)
    else:
        ds = IterableTFRecordDataset(raw_records, features=SPEC, batch_size=32)
        loader = DataLoader(ds, batch_size=None, num_workers=2)
    seen = advice_seen(loader)
    assert len(seen) == 1  # two workers, two epochs: one warning in the process
    message = str(seen[0].message)
    assert "20 KiB" in message and "num_workers=0" in message and "transform=" in message
    assert "Choosing num_workers" in message
    assert issubclass(DataLoaderWarning, UserWarning) and tfr.DataLoaderWarning is DataLoaderWarning


def test_no_advice_without_workers_or_when_workers_decode(raw_records: str) -> None:
    def decoded(ex: dict[str, Any]) -> dict[str, Any]:
        return {"pixels": torch.from_numpy(np.frombuffer(ex["image"], np.uint8).copy()), "lable": ex["lable"]}

    assert not advice_seen(DataLoader(TFRecordDataset(raw_records, features=SPEC), batch_size=32, num_workers=0))
    ds = TFRecordDataset(raw_records, features=SPEC, transform=decoded)
    assert not advice_seen(DataLoader(ds, batch_size=32, num_workers=2))


def test_the_advice_is_filtered_by_its_category(raw_records: str) -> None:
    loader = DataLoader(TFRecordDataset(raw_records, features=SPEC), batch_size=32, num_workers=2)
    transport._advised = False
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=DataLoaderWarning)
        assert sum(len(b["lable"]) for b in loader) == 96
    assert not [w for w in seen if issubclass(w.category, DataLoaderWarning)]
