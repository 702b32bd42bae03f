# A real torch.distributed group: 2 processes (torch.multiprocessing.spawn, gloo over
# tcp://127.0.0.1), each with a DataLoader of 2 workers. Every rank gathers what its
# loaders yielded to rank 0, which writes it to a file the test then checks: each record
# exactly once overall, equal record and batch counts per rank where asked for, for the
# map-style path (DistributedSampler) and the streaming path (forked and spawned workers).
from __future__ import annotations

import datetime
import json
import socket
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler

from tests.adapters.test_torch import SPEC, ids, write_shards
from tfrecord_lite.torch import IterableTFRecordDataset, TFRecordDataset, collate

WORLD = 2
SIZES = [7, 0, 13, 9]  # 29 records: not a multiple of 2 ranks x 2 workers
TOTAL = sum(SIZES)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def batches(loader: DataLoader) -> list[list[int]]:
    return [ids([batch]) for batch in loader]


def run_rank(rank: int, port: int, paths: list[str], out: str) -> None:
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=WORLD,
        timeout=datetime.timedelta(seconds=90),
    )
    try:
        got: dict[str, Any] = {}
        ds = TFRecordDataset(paths, features=SPEC)
        sampler = DistributedSampler(ds, shuffle=True, seed=3)
        sampler.set_epoch(1)
        got["map"] = batches(DataLoader(ds, batch_size=4, sampler=sampler, num_workers=2, collate_fn=collate))
        for even, ctx in ((None, "fork"), ("drop", "fork"), ("pad", "spawn")):
            stream = IterableTFRecordDataset(paths, features=SPEC, shuffle=True, shuffle_buffer=4, seed=3, even=even)
            stream.set_epoch(1)
            loader = DataLoader(stream, batch_size=4, num_workers=2, multiprocessing_context=ctx, collate_fn=collate)
            got[f"stream-{even}"] = batches(loader)
        gathered: list[Any] = [None] * WORLD
        dist.all_gather_object(gathered, got)
        if rank == 0:
            Path(out).write_text(json.dumps(gathered))
    finally:
        dist.destroy_process_group()


@pytest.fixture(scope="module")
def per_rank(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, list[list[int]]]]:
    directory = tmp_path_factory.mktemp("ddp")
    paths = write_shards(directory, SIZES)
    out = directory / "gathered.json"
    mp.spawn(run_rank, args=(free_port(), paths, str(out)), nprocs=WORLD, join=True)
    return json.loads(out.read_text())


def flat(per_rank: list[dict[str, list[list[int]]]], key: str) -> list[list[int]]:
    return [[i for batch in rank[key] for i in batch] for rank in per_rank]


def test_map_style_with_distributed_sampler(per_rank: list[dict[str, Any]]) -> None:
    ranks = flat(per_rank, "map")
    assert len(ranks[0]) == len(ranks[1]) == 15  # DistributedSampler pads 29 to 30
    seen = Counter(ranks[0] + ranks[1])
    assert set(seen) == set(range(TOTAL))
    assert sum(seen.values()) - TOTAL == 1 and max(seen.values()) == 2  # its one padding record


def test_stream_each_record_exactly_once(per_rank: list[dict[str, Any]]) -> None:
    ranks = flat(per_rank, "stream-None")
    assert sorted(ranks[0] + ranks[1]) == list(range(TOTAL))
    assert ranks[0] and ranks[1]


@pytest.mark.parametrize("even", ["drop", "pad"])
def test_stream_equal_counts_per_rank(per_rank: list[dict[str, Any]], even: str) -> None:
    key = f"stream-{even}"
    assert len(per_rank[0][key]) == len(per_rank[1][key])  # same number of batches: no rank waits forever
    ranks = flat(per_rank, key)
    assert len(ranks[0]) == len(ranks[1])
    both = ranks[0] + ranks[1]
    if even == "drop":
        assert len(set(both)) == len(both) and len(both) == 4 * (TOTAL // 4)  # record ranges: < 1 lost per consumer
    else:
        assert set(both) == set(range(TOTAL)) and len(both) == 4 * -(-TOTAL // 4)
