"""TFDV's form of the statistics: a `DatasetFeatureStatisticsList` of tensorflow-metadata.

Strategy: filled in by written field names from the result objects, after the fields
TensorFlow Data Validation fills; tensorflow-metadata is imported here only, when asked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfrecord_lite._stats.results import DatasetStatistics

__all__ = ["to_tfdv", "write_tfdv"]


def to_tfdv(stats: DatasetStatistics) -> Any:
    raise NotImplementedError("to_tfdv")


def write_tfdv(stats: DatasetStatistics, path: str) -> None:
    raise NotImplementedError("write_tfdv")
