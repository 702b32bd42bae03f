"""The torch datasets over a TensorFlow Datasets split: the torch-free records and streams of
_tfds/torch_data.py mixed into torch's Dataset and IterableDataset."""

from __future__ import annotations

from torch.utils.data import Dataset, IterableDataset, get_worker_info

from tfrecord_lite._tfds.torch_data import SplitRecords, SplitStream
from tfrecord_lite.torch.consumers import distributed, worker_pass


class TFDSDataset(SplitRecords, Dataset):  # type: ignore[type-arg]
    """A TFDS split (tfrecord_lite.tfds.load) map-style: `[i]` as tfds.as_numpy hands it, then `transform`."""


class IterableTFDSDataset(SplitStream, IterableDataset):  # type: ignore[type-arg]
    """A TFDS split streamed: each record once over DataLoader workers and ranks, then `transform`;
    with shuffle_files, `set_epoch(e)` reads the shards in epoch e's order."""

    _world, _worker_info = staticmethod(distributed), staticmethod(get_worker_info)

    def _pass(self) -> int:
        return worker_pass(self)
