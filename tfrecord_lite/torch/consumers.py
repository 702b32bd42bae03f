"""Who the calling process is to torch: the rank and world size of the initialised default process
group, the pass a DataLoader worker's copy of a dataset begins, and how the worker's fetcher will
collate what a dataset method returns (`fetched_by`, which also swaps torch's default collation for
`worker_collate`). What a consumer reads is decided below the adapters (_datasets/plan.py)."""

from __future__ import annotations

import sys
from typing import Any

import torch.distributed as dist
from torch.utils.data import default_collate, default_convert, get_worker_info

from tfrecord_lite._loader.collate import worker_collate


def distributed() -> tuple[int, int] | None:
    """(rank, world_size) of the initialised default process group, else None."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return None


def worker_pass(dataset: Any) -> int:
    """How many passes this copy of `dataset` began before, in a DataLoader worker (0 in the main
    process). A persistent worker never sees set_epoch() calls made after it started, so each pass
    it begins counts as the next epoch: what set_epoch(epoch) before each pass asks for."""
    if get_worker_info() is None:
        return 0
    dataset._passes += 1
    return int(dataset._passes - 1)


def fetched_by(dataset: Any) -> tuple[bool, bool]:
    """(pack, view) for the dataset method that calls this, as DataLoader's worker fetcher calls it:
    pack when the fetcher hands what it returns to torch's default_convert and then to the queue
    (batch_size=None), where a transport.Packed passes untouched while a dict is walked value by
    value; view when the fetcher collates the items with the dataset's own collate_fn, which alone
    sees them, so that their bytes values may be memoryviews until transport.py copies them. Both
    False in the main process or when anything else calls (a wrapping dataset: as before). A fetcher
    that collates with torch's default_collate is given collate.worker_collate instead: the same
    values, without a shared-memory segment per tensor of every batch."""
    if get_worker_info() is None:
        return False, False
    fetcher = sys._getframe(2).f_locals.get("self")  # 0: here, 1: the dataset's method, 2: its caller
    if fetcher is None or getattr(fetcher, "dataset", None) is not dataset:
        return False, False
    collate_fn, batched = getattr(fetcher, "collate_fn", None), getattr(fetcher, "auto_collation", None)
    if batched is True and collate_fn is default_collate:  # the values of torch's, in reused shared memory
        fetcher.collate_fn = collate_fn = worker_collate
    own = collate_fn is not None and collate_fn in (getattr(dataset, "collate_fn", None), worker_collate)
    return collate_fn is default_convert and batched is False, batched is True and own
