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
