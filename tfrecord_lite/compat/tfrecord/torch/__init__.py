"""The `tfrecord` package's `tfrecord.torch`: its two PyTorch datasets (importing this imports torch).

Strategy: the package's names re-exported from the one module that holds them.
"""

from __future__ import annotations

from tfrecord_lite.compat.tfrecord.torch import dataset
from tfrecord_lite.compat.tfrecord.torch.dataset import MultiTFRecordDataset, TFRecordDataset

__all__ = ["MultiTFRecordDataset", "TFRecordDataset", "dataset"]
