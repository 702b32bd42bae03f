"""The torch datasets over a TFDS split: a real DataLoader with 2 workers and a 2-rank gloo group read
every record of the stored folder exactly once; the map-style dataset equals load()."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from tfrecord_lite import tfds
from tfrecord_lite.torch import IterableTFDSDataset, TFDSDataset


def ident(example: dict[str, Any]) -> str:
    return str(example["text"])


def test_map_style_equals_load(data: Path) -> None:
    folder = data / "everything"
    dataset = TFDSDataset(folder, split="train+test", transform=ident)
    assert [dataset[i] for i in range(len(dataset))] == [ident(ex) for ex in tfds.load(folder, split="train+test")]


def test_two_workers_read_each_record_once(data: Path) -> None:
    folder = data / "everything"
    dataset = IterableTFDSDataset(folder, split="train+test", transform=ident)
    loader = torch.utils.data.DataLoader(dataset, num_workers=2, batch_size=None)
    seen = list(loader)
    assert sorted(seen) == sorted(ident(ex) for ex in tfds.load(folder, split="train+test"))


def _rank(rank: int, port: int, out: str, folder: str) -> None:
    torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        with pytest.raises(ValueError, match="needs a seed"):
            IterableTFDSDataset(folder, split="train", shuffle_files=True)
        dataset = IterableTFDSDataset(folder, split="train+test", shuffle_files=True, seed=7, transform=ident)
        loader = torch.utils.data.DataLoader(dataset, num_workers=2, batch_size=None)
        Path(out, f"{rank}.txt").write_text("\n".join(loader))
    finally:
        torch.distributed.destroy_process_group()


def test_two_ranks_of_two_workers_read_each_record_once(data: Path, tmp_path: Path) -> None:
    folder = data / "everything"
    from tests._servers import free_port

    port = free_port()
    torch.multiprocessing.spawn(_rank, args=(port, str(tmp_path), str(folder)), nprocs=2, join=True)
    seen = [line for rank in (0, 1) for line in (tmp_path / f"{rank}.txt").read_text().split("\n")]
    assert sorted(seen) == sorted(ident(ex) for ex in tfds.load(folder, split="train+test"))
    assert os.path.getsize(tmp_path / "0.txt") and os.path.getsize(tmp_path / "1.txt")


def test_each_epoch_reads_the_shards_in_an_order_of_its_own(data: Path) -> None:
    folder = data / "everything"
    everything = sorted(ident(ex) for ex in tfds.load(folder, split="train+test"))

    def epochs(dataset: Any, count: int) -> list[list[str]]:
        out = []
        for epoch in range(count):
            dataset.set_epoch(epoch)
            out.append(list(dataset))
        return out

    def shuffled() -> Any:
        return IterableTFDSDataset(folder, split="train+test", shuffle_files=True, seed=3, transform=ident)

    first = epochs(shuffled(), 4)
    assert all(sorted(epoch) == everything for epoch in first)
    assert len({tuple(epoch) for epoch in first}) > 1  # 4 epochs of 4 shards (seed 3): not one order
    assert first == epochs(shuffled(), 4)
    in_file_order = IterableTFDSDataset(folder, split="train+test", transform=ident)
    assert len({tuple(epoch) for epoch in epochs(in_file_order, 2)}) == 1
    with pytest.raises(ValueError, match="epoch"):
        in_file_order.set_epoch(-1)


def test_persistent_workers_take_the_next_epochs_order_each_pass(data: Path) -> None:
    folder = data / "everything"
    dataset = IterableTFDSDataset(folder, split="train+test", shuffle_files=True, seed=3, transform=ident)
    loader = torch.utils.data.DataLoader(dataset, num_workers=2, batch_size=None, persistent_workers=True)
    passes = [list(loader) for _ in range(3)]
    fresh = IterableTFDSDataset(folder, split="train+test", shuffle_files=True, seed=3, transform=ident)
    for epoch, seen in enumerate(passes):
        fresh.set_epoch(epoch)  # what each pass reads, one worker at a time
        expected = torch.utils.data.DataLoader(fresh, num_workers=2, batch_size=None)
        assert seen == list(expected)
    assert len({tuple(p) for p in passes}) > 1
