"""The `tfrecord` package's `tfrecord.torch.dataset`: `TFRecordDataset` and `MultiTFRecordDataset`,
streaming (`IterableDataset`) datasets with the package's arguments.

Strategy: an iteration is the compat reader's loader for the calling DataLoader worker's shard
(`(worker id, workers)`; the whole file in the main process), then the package's shuffle queue
and the transform. The reader shares records out by record number, so with or without an index
file every record reaches exactly one worker (the package's workers each read every record when
no index is given). Each worker seeds numpy's global state from its torch seed, as the package
does, so its shuffle queue and split sampling differ from its siblings'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

try:
    import torch.utils.data
except ModuleNotFoundError as exc:  # still a ModuleNotFoundError, as the package's users expect
    raise ModuleNotFoundError(
        f"tfrecord_lite.compat.tfrecord.torch needs PyTorch ({exc}): pip install 'tfrlite[torch]'", name=exc.name
    ) from exc

from tfrecord_lite.compat.tfrecord import iterator_utils, reader
from tfrecord_lite.compat.tfrecord.reader import Description

__all__ = ["MultiTFRecordDataset", "TFRecordDataset"]


def _worker_shard() -> tuple[int, int] | None:
    """This DataLoader worker's shard, its numpy state seeded as the package seeds it; None outside workers."""
    info = torch.utils.data.get_worker_info()
    if info is None:
        return None
    np.random.seed(info.seed % np.iinfo(np.uint32).max)
    return info.id, info.num_workers


def _check_transform(transform: Any) -> Callable[[Any], Any] | None:
    if transform is not None and not callable(transform):
        raise TypeError(f"transform must be a callable (applied to each item), found {type(transform).__name__}")
    return transform  # type: ignore[no-any-return]


def _finish(items: Iterator[Any], queue_size: int | None, transform: Callable[[Any], Any] | None) -> Iterator[Any]:
    if queue_size:
        items = iterator_utils.shuffle_iterator(items, queue_size)
    return map(transform, items) if transform is not None else items


class TFRecordDataset(torch.utils.data.IterableDataset[Any]):
    """The records of one TFRecord file, decoded as `tfrecord_loader` decodes them (Examples, or
    SequenceExamples when `sequence_description` is given), optionally shuffled through a queue of
    `shuffle_queue_size` items and transformed. `index_path` is optional, even with workers."""

    def __init__(
        self,
        data_path: str,
        index_path: str | None,
        description: Description = None,
        shuffle_queue_size: int | None = None,
        transform: Callable[[Any], Any] | None = None,
        sequence_description: Description = None,
        compression_type: str | None = None,
    ) -> None:
        super().__init__()
        self.data_path = data_path
        self.index_path = index_path
        self.description = description
        self.sequence_description = sequence_description
        self.shuffle_queue_size = shuffle_queue_size
        self.transform = _check_transform(transform)
        self.compression_type = compression_type

    def __iter__(self) -> Iterator[Any]:
        items = reader.tfrecord_loader(
            data_path=self.data_path,
            index_path=self.index_path,
            description=self.description,
            shard=_worker_shard(),
            sequence_description=self.sequence_description,
            compression_type=self.compression_type,
        )
        return _finish(items, self.shuffle_queue_size, self.transform)


class MultiTFRecordDataset(torch.utils.data.IterableDataset[Any]):
    """Items drawn at random from several files (`data_pattern.format(split)` for each key of
    `splits`, weighted by its value); infinite by default, `infinite=False` ends when all are read."""

    def __init__(
        self,
        data_pattern: str,
        index_pattern: str | None,
        splits: Mapping[str, float],
        description: Description = None,
        shuffle_queue_size: int | None = None,
        transform: Callable[[Any], Any] | None = None,
        sequence_description: Description = None,
        compression_type: str | None = None,
        infinite: bool = True,
    ) -> None:
        super().__init__()
        self.data_pattern = data_pattern
        self.index_pattern = index_pattern
        self.splits = splits
        self.description = description
        self.sequence_description = sequence_description
        self.shuffle_queue_size = shuffle_queue_size
        self.transform = _check_transform(transform)
        self.compression_type = compression_type
        self.infinite = infinite

    def __iter__(self) -> Iterator[Any]:
        items = reader.multi_tfrecord_loader(
            data_pattern=self.data_pattern,
            index_pattern=self.index_pattern,
            splits=self.splits,
            description=self.description,
            sequence_description=self.sequence_description,
            compression_type=self.compression_type,
            infinite=self.infinite,
            shard=_worker_shard(),
        )
        return _finish(items, self.shuffle_queue_size, self.transform)
