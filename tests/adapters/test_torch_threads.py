# num_threads= on the torch datasets and ImageTransform, through real DataLoaders over real files:
# the same items in the same order as with one thread (shuffled, 0 and 2 workers, set_epoch), every
# record exactly once across workers, an error at record k raised at item k after the items before
# it, no thread left after a break, resuming through state_dict, and images decoded on threads
# equal to those decoded on one.
from __future__ import annotations

import gc
import io
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._records import record_spans

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.threads]

from torch.utils.data import DataLoader

from tests._threads import pool_threads, wait_for_threads
from tfrecord_lite import images
from tfrecord_lite.torch import IterableTFRecordDataset, TFRecordDataset

SPEC = {
    "id": tfr.FixedLenFeature([], "int64"),
    "x": tfr.FixedLenFeature([2], "float32"),
    "blob": tfr.FixedLenFeature([], "bytes"),
}


def write_shards(directory: Path, sizes: list[int], compression: str | None = None) -> list[str]:
    paths, i = [], 0
    for s, size in enumerate(sizes):
        path = directory / f"part-{s:05d}.tfrecord"
        with tfr.TFRecordWriter(path, compression=compression) as w:
            for _ in range(size):
                w.write_example({"id": i, "x": [float(i), -float(i)], "blob": bytes([i % 251]) * (i % 300)})
                i += 1
        paths.append(str(path))
    return paths


def jittered(item: dict[str, Any]) -> dict[str, Any]:
    """A transform whose time varies by record, so threads finish out of order."""
    time.sleep(random.Random(int(item["id"])).random() * 0.001)
    return {"id": int(item["id"]), "sum": float(np.sum(item["x"])), "n": len(item["blob"])}


def until_error(items: Any) -> tuple[list[Any], Exception | None]:
    """The items an iterable gives before it raises, and what it raised (None: it ended)."""
    got: list[Any] = []
    try:
        for item in items:
            got.append(item)
    except Exception as exc:
        return got, exc
    return got, None


def ids(batches: Any) -> list[int]:
    return [int(i) for batch in batches for i in batch["id"]]


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("batched", [False, True])
def test_iterable_order_equals_one_thread(tmp_path: Path, workers: int, batched: bool) -> None:
    paths = write_shards(tmp_path, [150, 90, 120, 40])

    def epoch_ids(num_threads: int, epoch: int) -> list[int]:
        options: dict[str, Any] = {"batch_size": 16} if batched else {"transform": jittered}
        ds = IterableTFRecordDataset(
            paths, features=SPEC, shuffle=True, shuffle_buffer=50, seed=3, num_threads=num_threads, **options
        )
        ds.set_epoch(epoch)
        if batched:
            return ids(DataLoader(ds, batch_size=None, num_workers=workers))
        return ids(DataLoader(ds, batch_size=8, num_workers=workers, collate_fn=ds.collate_fn))

    for epoch in (0, 1):
        one = epoch_ids(1, epoch)
        assert sorted(one) == list(range(400))  # every record exactly once, across the workers too
        assert epoch_ids(2, epoch) == one
        assert epoch_ids(4, epoch) == one
    assert epoch_ids(2, 0) != epoch_ids(2, 1)  # set_epoch still shuffles anew


@pytest.mark.parametrize("workers", [0, 2])
def test_map_style_order_equals_one_thread(tmp_path: Path, workers: int) -> None:
    paths = write_shards(tmp_path, [150, 90, 160])

    def run(num_threads: int) -> list[tuple[int, float, int]]:
        ds = TFRecordDataset(paths, features=SPEC, transform=jittered, num_threads=num_threads)
        loader = DataLoader(
            ds,
            batch_size=32,
            shuffle=True,
            num_workers=workers,
            collate_fn=ds.collate_fn,
            generator=torch.Generator().manual_seed(5),
        )
        return [(int(i), float(s), int(n)) for b in loader for i, s, n in zip(b["id"], b["sum"], b["n"], strict=True)]

    one = run(1)
    assert sorted(i for i, _, _ in one) == list(range(400))
    assert run(2) == one
    assert run(4) == one


def test_map_style_batch_getitem(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [100, 100])
    one = TFRecordDataset(paths, features=SPEC, transform=jittered)
    two = TFRecordDataset(paths, features=SPEC, transform=jittered, num_threads=2)
    indices = list(range(199, 0, -7))
    assert ids([two[indices]]) == ids([one[indices]]) == indices
    assert two[17] == one[17]
    with pytest.raises(ValueError, match="num_threads must be an int >= 1, found 0"):
        TFRecordDataset(paths, features=SPEC, num_threads=0)
    with pytest.raises(TypeError, match="num_threads must be an int >= 1, found"):
        IterableTFRecordDataset(paths, features=SPEC, num_threads=2.0)  # type: ignore[arg-type]


def damage(path: str, record: int) -> None:
    data = bytearray(Path(path).read_bytes())
    start, _ = record_spans(bytes(data))[record]
    data[start + 16] ^= 0xFF  # the payload's first byte: its CRC no longer matches
    Path(path).write_bytes(bytes(data))


def test_error_at_record_k_comes_at_item_k(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [300])
    damage(paths[0], 137)
    for num_threads in (1, 2, 4):
        got, error = until_error(IterableTFRecordDataset(paths, features=SPEC, num_threads=num_threads))
        assert isinstance(error, tfr.CorruptRecordError)
        assert [int(item["id"]) for item in got] == list(range(137))

    def fail_at_61(item: dict[str, Any]) -> Any:
        if item["id"] == 61:
            raise ValueError("the transform fails on record 61")
        return jittered(item)

    got, error = until_error(IterableTFRecordDataset(paths, features=SPEC, transform=fail_at_61, num_threads=3))
    assert isinstance(error, ValueError) and "record 61" in str(error)
    assert [item["id"] for item in got] == list(range(61))


def test_break_leaves_no_thread(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [500, 500])
    before = pool_threads()
    for batched in (False, True):
        ds = IterableTFRecordDataset(
            paths,
            features=SPEC,
            shuffle=True,
            num_threads=4,
            transform=None if batched else jittered,
            batch_size=10 if batched else None,
        )
        loader = DataLoader(ds, batch_size=None if batched else 10, collate_fn=None if batched else ds.collate_fn)
        for step, _ in enumerate(loader):
            if step == 5:
                break
        gc.collect()
        assert wait_for_threads(before) <= before


def test_resume_with_threads(tmp_path: Path) -> None:
    paths = write_shards(tmp_path, [200, 150], compression="gzip")

    def make(num_threads: int) -> IterableTFRecordDataset:
        return IterableTFRecordDataset(
            paths, features=SPEC, shuffle=True, shuffle_buffer=40, seed=1, transform=jittered, num_threads=num_threads
        )

    full = [item["id"] for item in make(1)]
    ds = make(2)
    items = iter(ds)
    head = [next(items)["id"] for _ in range(123)]  # the threads have decoded more than that by now
    state = ds.state_dict()
    assert state["yielded"] == 123  # items handed out, not items decoded ahead
    del items
    resumed = make(2)
    resumed.load_state_dict(state)
    assert head + [item["id"] for item in resumed] == full


def test_resume_through_a_stateful_loader_with_threads(tmp_path: Path) -> None:
    sdl = pytest.importorskip("torchdata.stateful_dataloader")
    paths = write_shards(tmp_path, [60, 40, 50])

    def make() -> Any:
        ds = IterableTFRecordDataset(paths, features=SPEC, shuffle=True, shuffle_buffer=9, num_threads=2)
        return sdl.StatefulDataLoader(ds, batch_size=4, num_workers=2, collate_fn=ds.collate_fn)

    full = ids(make())
    first = make()
    it = iter(first)
    head = ids(next(it) for _ in range(7))
    state = first.state_dict()
    del it
    second = make()
    second.load_state_dict(state)
    assert head + ids(second) == full
    assert sorted(full) == list(range(150))


# --------------------------------------------------------------------------- images


def write_jpegs(path: Path, n: int) -> Path:
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(0)
    with tfr.TFRecordWriter(path) as w:
        for i in range(n):
            height, width = 40 + i % 9, 50 + i % 7
            y, x = np.mgrid[0:height, 0:width]
            pixels = ((x * 3 + y * 5 + i)[:, :, None] + rng.integers(0, 30, (height, width, 3))) % 256
            buf = io.BytesIO()
            Image.fromarray(pixels.astype(np.uint8)).save(buf, "JPEG", quality=85)
            w.write_example({"image/encoded": buf.getvalue(), "image/class/label": i})
    return path


def test_image_transform_collate_equals_one_thread(tmp_path: Path) -> None:
    path = write_jpegs(tmp_path / "img.tfrecord", 70)
    records = list(tfr.iter_records(path))
    one = images.ImageTransform(resize=(32, 36)).collate(records)
    two = images.ImageTransform(resize=(32, 36), num_threads=2).collate(records)
    assert torch.equal(one[0], two[0]) and torch.equal(one[1], two[1])
    assert one[1].tolist() == list(range(70))

    crops = []
    for num_threads in (2, 3, 2):  # random crops and flips: drawn per image, whatever thread decodes it
        random.seed(11)
        transform = images.ImageTransform(random_crop=(30, 30), random_flip=True, num_threads=num_threads)
        crops.append(transform.collate(records)[0])
    assert torch.equal(crops[0], crops[1]) and torch.equal(crops[0], crops[2])
    full = images.ImageTransform(num_threads=2)
    for k, record in enumerate(records[:10]):  # each crop is a window of its own image
        image = images.decode_image(record)
        assert any(
            np.array_equal(image[t : t + 30, s : s + 30][:, ::f].transpose(2, 0, 1), crops[0][k].numpy())
            for t in range(image.shape[0] - 29)
            for s in range(image.shape[1] - 29)
            for f in (1, -1)
        )
    with pytest.raises(ValueError, match="cannot stack"):
        full.collate(records)  # sizes differ without resize=, on threads too


@pytest.mark.parametrize("workers", [0, 2])
def test_image_datasets_equal_one_thread(tmp_path: Path, workers: int) -> None:
    path = write_jpegs(tmp_path / "img.tfrecord", 60)

    def run(num_threads: int, mapped: bool) -> list[Any]:
        transform = images.ImageTransform(resize=(24, 24))
        if mapped:
            ds: Any = TFRecordDataset(path, record_type="raw", transform=transform, num_threads=num_threads)
            loader = DataLoader(
                ds, batch_size=8, num_workers=workers, shuffle=True, generator=torch.Generator().manual_seed(2)
            )
        else:
            ds = IterableTFRecordDataset(
                path, record_type="raw", transform=transform, num_threads=num_threads, shuffle=True
            )
            loader = DataLoader(ds, batch_size=8, num_workers=workers)
        return [(x.numpy().tobytes(), y.tolist()) for x, y in loader]

    for mapped in (False, True):
        one = run(1, mapped)
        assert sorted(label for _, y in one for label in y) == list(range(60))
        assert run(2, mapped) == one


def threads_seen(item: dict[str, Any]) -> int:
    """The library's threads alive in the process that decodes `item`."""
    return pool_threads()


@pytest.mark.parametrize("style", ["iterable", "map"])
def test_workers_that_fill_the_cores_start_no_threads(tmp_path: Path, style: str) -> None:
    """A DataLoader worker gets at most its share of the cores as threads: with one worker per core
    it decodes on its own thread, as with num_threads=1; the main process uses the threads asked for."""
    from tfrecord_lite._cores import usable_cores

    paths = write_shards(tmp_path, [300, 300])
    made = IterableTFRecordDataset if style == "iterable" else TFRecordDataset
    dataset = made(paths, features=SPEC, transform=threads_seen, num_threads=2)
    seen = list(DataLoader(dataset, batch_size=None, num_workers=usable_cores()))
    assert len(seen) == 600 and max(seen) == 0
    if style == "iterable":  # the consumer starts its threads in the main process (each map batch is one item)
        assert max(DataLoader(dataset, batch_size=None, num_workers=0)) > 0
