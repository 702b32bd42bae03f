# DataLoader workers: image batches of a megabyte or more are written into a worker's ring of reused
# shared-memory buffers (transport.batch_tensor); the main process views them and frees a buffer when its
# last view is gone. Every batch must hold its own images, however long it is kept.
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr
from tfrecord_lite._loader import transport

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from torch.utils.data import DataLoader

from tfrecord_lite.images import ImageTransform
from tfrecord_lite.torch import IterableTFRecordDataset

SIDE, BATCH, BATCHES = 128, 22, 10  # 22 images of 3x128x128: a batch of 1.08 MB, just over a megabyte


def pixels(i: int) -> np.ndarray:
    """Image i's pixels (HWC), different for every image."""
    return ((np.arange(SIDE * SIDE * 3).reshape(SIDE, SIDE, 3) * 7 + i * 13) % 256).astype(np.uint8)


@pytest.fixture(scope="module")
def raw_images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ring") / "raw.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for i in range(BATCH * BATCHES):
            fields = {"image/encoded": pixels(i).tobytes(), "image/format": b"raw", "image/height": SIDE}
            w.write_example(fields | {"image/width": SIDE, "image/channels": 3, "image/class/label": i})
    return path


def loader(path: Path, workers: int, **kw: Any) -> DataLoader[Any]:
    ds = IterableTFRecordDataset(path, record_type="raw")
    return DataLoader(ds, batch_size=BATCH, num_workers=workers, collate_fn=ImageTransform().collate, **kw)


def check(batch: Any, labels: Any) -> list[int]:
    """The labels of a batch whose every image is the one its label names."""
    assert type(batch) is torch.Tensor and batch.dtype == torch.uint8 and tuple(batch.shape[1:]) == (3, SIDE, SIDE)
    for image, i in zip(batch, labels.tolist(), strict=True):
        assert np.array_equal(image.numpy(), pixels(i).transpose(2, 0, 1)), i
    return [int(i) for i in labels.tolist()]


@pytest.mark.parametrize("persistent", [True, False])
def test_batches_dropped_at_once_reuse_the_slots_and_equal_those_of_no_workers(
    raw_images: Path, persistent: bool
) -> None:
    without = {tuple(labels.tolist()): batch for batch, labels in loader(raw_images, 0)}
    workers = loader(raw_images, 2, persistent_workers=persistent)
    slots, in_ring, seen = set(), 0, 0
    for _ in range(2):
        labels_seen = []
        for batch, labels in workers:
            labels_seen += check(batch, labels)
            assert torch.equal(batch, without[tuple(labels.tolist())])
            if transport.is_ring_tensor(batch):
                in_ring += 1
                slots.add(batch.untyped_storage().data_ptr())  # the main process maps each slot once
            seen += 1
        assert sorted(labels_seen) == list(range(BATCH * BATCHES))
    assert in_ring >= seen // 2  # most batches came through the ring (the machine may be slow)
    if persistent:
        assert len(slots) <= 2 * transport._BATCH_SLOTS < in_ring  # and its slots were reused


@pytest.mark.parametrize("persistent", [True, False])
def test_batches_kept_for_a_whole_epoch_stay_intact(raw_images: Path, persistent: bool) -> None:
    workers = loader(raw_images, 2, persistent_workers=persistent)
    kept = [list(workers) for _ in range(2)]  # every batch held: all the worker's slots busy, a new segment
    del workers
    for epoch in kept:
        assert sorted(i for batch, labels in epoch for i in check(batch, labels)) == list(range(BATCH * BATCHES))
    starts = [batch.untyped_storage().data_ptr() for epoch in kept for batch, _ in epoch]
    assert len(set(starts)) == len(starts)  # no two live batches share memory
    assert any(transport.is_ring_tensor(batch) for epoch in kept for batch, _ in epoch)


def test_a_batch_kept_holds_its_slot_and_the_others_keep_coming_through_the_ring(raw_images: Path) -> None:
    workers = loader(raw_images, 1, persistent_workers=True)
    kept, seen = None, []
    for _ in range(2):
        for batch, labels in workers:
            check(batch, labels)
            seen.append(transport.is_ring_tensor(batch))
            if kept is None:
                kept = (batch, labels)  # holds one slot for good: the worker takes the next free one
            del batch, labels
    assert all(seen), seen  # a worker slot busy at every turn of the ring sent a segment of its own
    assert kept is not None
    check(*kept)


@pytest.mark.filterwarnings("ignore:.pin_memory. argument is set as true")
def test_a_slice_that_outlives_its_batch_keeps_its_slot(raw_images: Path) -> None:
    workers = loader(raw_images, 2, persistent_workers=True, pin_memory=True)
    parts = []
    for _ in range(2):
        for batch, labels in workers:
            parts.append((batch[3:5].clone() if not transport.is_ring_tensor(batch) else batch[3:5], labels[3:5]))
            check(batch, labels)
            del batch
    assert any(transport.is_ring_tensor(part) for part, _ in parts)
    for part, labels in parts:  # the slices are intact after every later batch went through the slots
        check(part, labels)


def test_batch_tensor_outside_a_worker_is_a_plain_tensor() -> None:
    tensor = transport.batch_tensor((4, 3, 300, 300), torch.uint8)
    assert tuple(tensor.shape) == (4, 3, 300, 300) and not tensor.is_shared()
    assert not transport.is_ring_tensor(tensor) and not transport.is_ring_tensor(7)
