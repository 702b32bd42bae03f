"""What the PyTorch datasets over a TFDS split do, without torch: `SplitRecords` (map-style: `len`,
`[i]` decoded and transformed) and `SplitStream` (each consumer's share of the records, streamed).
tfrecord_lite/torch/tfds.py mixes them into torch's Dataset and IterableDataset and says which consumer
the calling process is (its rank times its DataLoader workers).

Strategy for exactly once: the split's runs of records per shard, in file order, are one sequence of
N records; consumer c of C reads records [c*N//C, (c+1)*N//C), cut into runs of the shards they
lie in and streamed from there, so the consumers' shares are disjoint, cover the split, differ in
size by at most one, and each opens only the shards its share touches. Every consumer computes the
same division from dataset_info.json alone (no scan, no communication); the DataLoader's workers
get the dataset, its seed included, from the process that made it, and ranks that shuffle the
shards must share a seed. With shuffle_files, epoch e reads the shards in an order drawn from seed + e
(`set_epoch`); a persistent DataLoader worker, which never sees set_epoch, counts its passes instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from tfrecord_lite._example.validate import check_int
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions
from tfrecord_lite._tfds.info_files import read_info
from tfrecord_lite._tfds.reading import ReaderOptions, Split
from tfrecord_lite._tfds.split_strings import FileRun


def share(runs: list[FileRun], consumer: int, consumers: int) -> list[FileRun]:
    """The runs of records consumer `consumer` of `consumers` reads: a contiguous 1/consumers."""
    total = sum(r.take for r in runs)
    lo, hi = consumer * total // consumers, (consumer + 1) * total // consumers
    out, first = [], 0
    for run in runs:
        start, stop = max(lo, first), min(hi, first + run.take)
        if start < stop:
            out.append(replace(run, skip=run.skip + start - first, take=stop - start))
        first += run.take
    return out


class SplitRecords:
    """A TFDS split as a map-style dataset: `len`, `[i]` the i-th example decoded (then `transform`)."""

    def __init__(
        self,
        source: str | os.PathLike[str],
        *,
        split: str = "train",
        decode: bool = True,
        transform: Callable[[Any], Any] | None = None,
        compression: Compression = "auto",
        verify: bool = True,
        on_error: OnError = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        options = ReaderOptions(compression, verify, on_error, max_skipped, storage_options, max_record_bytes)
        self.split = Split(read_info(os.fspath(source), storage_options), split, decode=decode, options=options)
        self.transform = transform

    def __len__(self) -> int:
        return len(self.split)

    def __getitem__(self, i: int) -> Any:
        example = self.split[i]
        return example if self.transform is None else self.transform(example)


class SplitStream:
    """A TFDS split streamed: each consumer (`_consumer()`, given by the torch subclass) reads its
    share of the records once, decoded (then `transform`)."""

    def __init__(
        self,
        source: str | os.PathLike[str],
        *,
        split: str = "train",
        decode: bool = True,
        shuffle_files: bool = False,
        seed: int | None = None,
        transform: Callable[[Any], Any] | None = None,
        compression: Compression = "auto",
        verify: bool = True,
        on_error: OnError = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        options = ReaderOptions(compression, verify, on_error, max_skipped, storage_options, max_record_bytes)
        info = read_info(os.fspath(source), storage_options)
        self.split = Split(info, split, decode=decode, shuffle_files=shuffle_files, seed=seed, options=options)
        self.transform = transform
        self.world = self._world()  # (rank, world size) where the dataset is made: workers do not know it
        if shuffle_files and seed is None and self.world is not None and self.world[1] > 1:
            raise ValueError("shuffle_files over several ranks needs a seed, so that every rank shuffles alike")
        self._epoch = self._passes = 0

    def set_epoch(self, epoch: int) -> None:
        """Read epoch `epoch` next: with shuffle_files, the shards in an order of its own, drawn from
        seed + epoch (every rank and worker draws the same)."""
        self._epoch = check_int("epoch", epoch, minimum=0)

    def _pass(self) -> int:  # pragma: no cover - the torch subclass counts a persistent worker's passes
        return 0

    def _world(self) -> tuple[int, int] | None:  # pragma: no cover - torch.distributed's, in the subclass
        return None

    def _worker_info(self) -> Any:  # pragma: no cover - torch's get_worker_info, in the subclass
        return None

    def _consumer(self) -> tuple[int, int]:
        """(consumer index, number of consumers): rank x DataLoader worker."""
        rank, world = self.world or (0, 1)
        info = self._worker_info()
        wid, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        return rank * workers + wid, world * workers

    def __len__(self) -> int:
        return len(self.split)

    def __iter__(self) -> Iterator[Any]:
        consumer, consumers = self._consumer()
        runs = share(self.split.epoch_runs(self._epoch + self._pass()), consumer, consumers)
        for record in self.split.iter_records(runs, interleave=False):
            example = self.split.decode(record)
            yield example if self.transform is None else self.transform(example)
