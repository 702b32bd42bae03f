"""torchdata.nodes sources over the PyTorch datasets (imports torch and torchdata; `import tfrecord_lite`
never imports this module, nor does tfrecord_lite.torch).

dataset_node(source) makes a `torchdata.nodes` source node of a dataset of tfrecord_lite.torch, so that
its items flow into `ParallelMapper`, `Batcher`, `Prefetcher` and `Loader` pipelines. The node holds
only the adaptation: the dataset reads and decodes as it does under a DataLoader, and the node maps the
nodes' protocol (reset with or without a state, next, get_state) onto the dataset's own.

An IterableTFRecordDataset is wrapped by _StreamNode: each reset without a state begins the next epoch
(set_epoch, as SamplerWrapper does for a sampler), its state is the epoch and the dataset's state_dict
(the items handed out, which the dataset counts as it yields them), and a reset with a state resumes
through load_state_dict, so that the records already read are not decoded again. A TFRecordDataset is
read in a sampler's order: SamplerWrapper over `sampler`, or over _Order, a permutation drawn from
(seed, epoch) alone, which is what a resume in a fresh process needs (torch's RandomSampler draws
another order there); the items are fetched by `[i]` in the node's own thread. What runs in threads is
what the pipeline maps: a dataset made with record_type="raw" hands out the records' bytes, and a
`ParallelMapper(..., method="thread")` decodes them (Pillow's decoding, inflate, CRC32C and numpy's large
copies release the GIL; an Example's Python decoding does not, except on free-threaded CPython).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

try:
    from torch.utils.data import Sampler
    from torchdata.nodes import BaseNode, Mapper, SamplerWrapper
except ModuleNotFoundError as exc:  # still a ModuleNotFoundError, which pytest.importorskip and others expect
    hint = f"tfrecord_lite.torchdata needs torchdata 0.11 or later ({exc}): pip install 'tfrlite[torchdata]'"
    raise ModuleNotFoundError(hint, name=exc.name) from exc

from tfrecord_lite.torch import IterableTFRecordDataset, TFRecordDataset

__all__ = ["dataset_node"]


def dataset_node(
    source: IterableTFRecordDataset | TFRecordDataset,
    *,
    sampler: Sampler[int] | None = None,
    shuffle: bool = False,
    seed: int = 0,
    initial_epoch: int = 0,
) -> BaseNode[Any]:
    """A torchdata.nodes source node of the items of `source`, a dataset of tfrecord_lite.torch.

    An IterableTFRecordDataset yields its items as under a DataLoader (its own shuffle, seed and
    batch_size apply). A TFRecordDataset yields `source[i]` for each index of `sampler`, or of a
    permutation drawn from (`seed`, epoch) with `shuffle=True`, else in order. Every reset of the node
    (each `iter()` of a `Loader`) after the first begins the next epoch, from `initial_epoch` on.
    `Loader.state_dict()` taken at any point and given to `load_state_dict` of the same pipeline, in
    this process or a fresh one, resumes right after the last item handed out.
    """
    if isinstance(source, IterableTFRecordDataset):
        if sampler is not None or shuffle:
            raise ValueError(
                "sampler= and shuffle= order a TFRecordDataset; an IterableTFRecordDataset shuffles itself "
                "(IterableTFRecordDataset(..., shuffle=True, seed=...))"
            )
        return _StreamNode(source, initial_epoch)
    if isinstance(source, TFRecordDataset):
        if sampler is not None and shuffle:
            raise ValueError("give sampler= or shuffle=True, not both: a sampler decides the order itself")
        order = sampler if sampler is not None else _Order(len(source), shuffle, seed)
        return Mapper(SamplerWrapper(order, initial_epoch=initial_epoch), source.__getitem__)
    raise TypeError(
        f"dataset_node takes a tfrecord_lite.torch TFRecordDataset or IterableTFRecordDataset, "
        f"not {type(source).__name__}"
    )


class _StreamNode(BaseNode[Any]):  # type: ignore[misc]  # torchdata is not type-checked (pyproject.toml)
    """The items of an IterableTFRecordDataset, one epoch a reset, resumable by the dataset's state_dict."""

    EPOCH_KEY = "epoch"
    DATASET_KEY = "dataset"

    def __init__(self, dataset: IterableTFRecordDataset, initial_epoch: int) -> None:
        super().__init__()
        self.dataset = dataset
        self.epoch = int(initial_epoch)
        self._started = False
        self._it: Iterator[Any] | None = None

    def reset(self, initial_state: dict[str, Any] | None = None) -> None:
        super().reset(initial_state)
        if initial_state is not None:
            self.epoch = int(initial_state[self.EPOCH_KEY])
            self.dataset.load_state_dict(initial_state[self.DATASET_KEY])
        else:
            if self._started:
                self.epoch += 1
            self.dataset.set_epoch(self.epoch)
        self._started = False
        self._it = iter(self.dataset)

    def next(self) -> Any:
        self._started = True
        return next(self._it)  # type: ignore[arg-type]

    def get_state(self) -> dict[str, Any]:
        return {self.EPOCH_KEY: self.epoch, self.DATASET_KEY: self.dataset.state_dict()}


class _Order(Sampler[int]):
    """The indices 0..n-1, in order or in a permutation drawn from (seed, epoch) only."""

    def __init__(self, n: int, shuffle: bool, seed: int) -> None:
        self.n, self.shuffle, self.seed = n, shuffle, int(seed)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[int]:
        if not self.shuffle:
            return iter(range(self.n))
        return iter(np.random.default_rng([self.seed, self.epoch]).permutation(self.n).tolist())
