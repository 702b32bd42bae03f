"""`MixedTFRecordDataset`: items drawn at random, with weights, from several streaming datasets, each
divided among workers and ranks on its own; the mixing state (_datasets/mixing.py) is torch-free and
resumable."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from torch.utils.data import IterableDataset

from tfrecord_lite._datasets.mixing import copy_state, mixed_items, start_state
from tfrecord_lite._example.validate import check_choice, check_int
from tfrecord_lite._repr import describe
from tfrecord_lite.torch.consumers import worker_pass
from tfrecord_lite.torch.streaming import IterableTFRecordDataset

_SHOWN_DATASETS = 3  # datasets a MixedTFRecordDataset's repr shows


class MixedTFRecordDataset(IterableDataset[Any]):
    """Draws items from several IterableTFRecordDatasets at random with the given weights (each dataset
    split across workers and ranks on its own). Finite: stop="all" goes on with the remaining datasets
    when one ends, stop="first" ends with the first exhausted dataset; infinite=True restarts an exhausted
    dataset with its next epoch and never ends (unless every dataset is empty)."""

    def __init__(
        self,
        datasets: Sequence[IterableTFRecordDataset],
        *,
        weights: Sequence[float] | None = None,
        seed: int = 0,
        stop: str = "all",
        infinite: bool = False,
    ) -> None:
        if isinstance(datasets, IterableDataset):
            raise TypeError("datasets must be a list of IterableTFRecordDatasets ([ds1, ds2]), found one dataset")
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("no datasets to mix")
        for i, dataset in enumerate(self.datasets):
            if not isinstance(dataset, IterableTFRecordDataset):
                raise TypeError(f"datasets[{i}] must be an IterableTFRecordDataset, found {type(dataset).__name__}")
        if any(dataset.batch_size is not None for dataset in self.datasets):
            raise ValueError("mix datasets of single records (no batch_size): batch the mixture in the DataLoader")
        w = [1.0] * len(self.datasets) if weights is None else [float(x) for x in weights]
        if len(w) != len(self.datasets) or any(not x >= 0 for x in w) or sum(w) <= 0:
            raise ValueError(f"weights must be {len(self.datasets)} non-negative numbers, not all zero: {weights!r}")
        self.weights = w
        self.seed = check_int("seed", seed)
        self.stop = check_choice("stop", stop, ("all", "first"))
        self.infinite = bool(infinite)
        self._epoch = 0
        self._passes = 0  # passes begun by this copy in a DataLoader worker
        self._resume: dict[str, Any] | None = None
        self._state: dict[str, Any] = {}

    def __repr__(self) -> str:
        shown = ", ".join(repr(dataset) for dataset in self.datasets[:_SHOWN_DATASETS])
        more = f", ... ({len(self.datasets)} datasets)" if len(self.datasets) > _SHOWN_DATASETS else ""
        mode = "infinite" if self.infinite else f"stop={self.stop!r}"
        return describe("MixedTFRecordDataset", f"[{shown}{more}]", f"weights={self.weights}", mode)

    def set_epoch(self, epoch: int) -> None:
        """Use `epoch` for the next iteration (the datasets start at it too)."""
        self._epoch = int(epoch)
        if self._resume is not None and self._resume["epoch"] != self._epoch:
            self._resume = None

    def __iter__(self) -> Iterator[Any]:
        consumer, consumers = self.datasets[0]._consumer()
        state = self._resume
        self._resume = None
        if state is None:
            state = start_state(self.seed, self._epoch + worker_pass(self), self.weights, consumer, consumers)
        elif (state["consumer"], state["consumers"]) != (consumer, consumers):
            raise ValueError(
                "this state was saved by another consumer (rank x DataLoader worker): resume with "
                "the same world size and num_workers"
            )
        self._state = state = {**state, "consumer": consumer, "consumers": consumers}
        state["sources"] = [dict(s) for s in state["sources"]]
        return self._generate(state)

    def _start(self, consumer: int, consumers: int) -> dict[str, Any]:
        """The state at the start of the current epoch."""
        return start_state(self.seed, self._epoch, self.weights, consumer, consumers)

    def _generate(self, state: dict[str, Any]) -> Iterator[Any]:
        consumer, consumers = state["consumer"], state["consumers"]

        def open_source(i: int, epoch: int, skip: int) -> Iterator[tuple[int, Any]]:
            items = self.datasets[i]._items(epoch, consumer, consumers, skip)  # errors placed as _generate does
            return self.datasets[i]._stream.located(items, epoch, consumer, consumers, skip)

        return mixed_items(state, self.weights, open_source, stop=self.stop, infinite=self.infinite)

    def state_dict(self) -> dict[str, Any]:
        """The mixing position: RNG state and each dataset's epoch and items yielded (under "sources")."""
        if self._resume is not None:
            return copy_state(self._resume)
        return copy_state(self._state or self._start(*self.datasets[0]._consumer()))

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Make the next iteration continue right after the position that `state` records."""
        if len(state["sources"]) != len(self.datasets):
            raise ValueError(f"this state mixes {len(state['sources'])} datasets, this mixture {len(self.datasets)}")
        self._epoch = int(state["epoch"])
        self._resume = copy_state(state)
