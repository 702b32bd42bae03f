"""TFDV's form of the statistics: a `DatasetFeatureStatisticsList` of tensorflow-metadata
(`tensorflow_metadata.proto.v0.statistics_pb2`), and the file TFDV reads it from.

Strategy: the result objects copied field by field into the proto, after the fields TensorFlow Data
Validation's basic generators fill: per feature its type and common statistics (presence, value
counts and their quantiles histogram; for a feature list the histogram of its lengths), numeric
statistics (mean, standard deviation, zeros, extremes, median, a standard and a quantiles
histogram) for int64 and float features, string statistics (distinct values, top values, average
length, rank histogram) for bytes features, bytes statistics for images. A SequenceExample's
feature lists are named by the path ("##SEQUENCE##", key), as tfx-bsl's decoder nests them.
tensorflow-metadata (which needs no TensorFlow) is imported here only, when asked; the file is a
TFRecord of one record, the serialized proto, which `tfdv.load_statistics` reads.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfrecord_lite._stats.results import DatasetStatistics, FeatureStatistics, NumberStats

__all__ = ["DATASET_NAME", "SEQUENCE_PATH", "to_tfdv", "write_tfdv"]

DATASET_NAME = "All Examples"  # the name TFDV gives the unsliced dataset
SEQUENCE_PATH = "##SEQUENCE##"  # where tfx-bsl's decoder puts a SequenceExample's feature lists
_DECILES = [k / 10 for k in range(11)]


def _statistics_pb2() -> Any:
    try:
        from tensorflow_metadata.proto.v0 import statistics_pb2
    except ImportError:
        raise ImportError(
            "to_tfdv / write_tfdv need tensorflow-metadata (no TensorFlow): pip install 'tfrlite[stats]'"
        ) from None
    return statistics_pb2


def to_tfdv(stats: DatasetStatistics) -> Any:
    """The statistics as a DatasetFeatureStatisticsList holding one dataset."""
    pb = _statistics_pb2()
    out = pb.DatasetFeatureStatisticsList()
    dataset = out.datasets.add(name=DATASET_NAME, num_examples=stats.records)
    for feature in stats.features:
        _fill_feature(pb, dataset.features.add(), feature, stats.records)
    return out


def write_tfdv(stats: DatasetStatistics, path: str) -> None:
    """to_tfdv() as TFDV stores statistics: a TFRecord file of one record, the serialized proto."""
    from tfrecord_lite._records.writer import TFRecordWriter

    record = to_tfdv(stats).SerializeToString()
    with TFRecordWriter(path) as writer:
        writer.write(record)


def _fill_feature(pb: Any, out: Any, feature: FeatureStatistics, records: int) -> None:
    if feature.section == "feature_lists":
        out.path.step.extend([SEQUENCE_PATH, feature.name])
    else:
        out.name = feature.name
    kinds = pb.FeatureNameStatistics
    if feature.kind in ("int64", "float"):
        out.type = kinds.INT if feature.kind == "int64" else kinds.FLOAT
        _fill_numbers(pb, out.num_stats, feature)
        common = out.num_stats.common_stats
    elif feature.image is not None:
        out.type = kinds.BYTES
        _fill_bytes(out.bytes_stats, feature)
        common = out.bytes_stats.common_stats
    else:
        out.type = kinds.STRING
        _fill_strings(pb, out.string_stats, feature)
        common = out.string_stats.common_stats
    _fill_common(pb, common, feature, records)


def _fill_common(pb: Any, out: Any, feature: FeatureStatistics, records: int) -> None:
    counts = feature.value_counts
    out.num_non_missing = feature.present
    out.num_missing = records - feature.present
    if counts.count:
        out.min_num_values = int(counts.min or 0)
        out.max_num_values = int(counts.max or 0)
        out.avg_num_values = float(counts.mean or 0.0)
        out.tot_num_values = round((counts.mean or 0.0) * counts.count)
        _fill_quantiles(pb, out.num_values_histogram, counts)
    if feature.sequence_lengths is not None and feature.sequence_lengths.count:
        _fill_quantiles(pb, out.feature_list_length_histogram, feature.sequence_lengths)


def _fill_quantiles(pb: Any, out: Any, stats: NumberStats) -> None:
    """A QUANTILES histogram: ten buckets between deciles, a tenth of the values each."""
    out.type = pb.Histogram.QUANTILES
    deciles = dict(stats.quantiles)
    bounds = [deciles.get(q) for q in _DECILES]
    if any(b is None for b in bounds):
        return
    share = (stats.count - stats.nans) / 10
    for low, high in itertools.pairwise(bounds):
        out.buckets.add(low_value=low, high_value=high, sample_count=share)


def _fill_numbers(pb: Any, out: Any, feature: FeatureStatistics) -> None:
    numbers = feature.numbers
    assert numbers is not None
    if numbers.mean is not None:
        out.mean = numbers.mean
        out.std_dev = numbers.std or 0.0
    out.num_zeros = numbers.zeros
    if numbers.min is not None and numbers.max is not None:
        out.min, out.max = float(numbers.min), float(numbers.max)
    if numbers.median is not None:
        out.median = numbers.median
    standard = out.histograms.add(type=pb.Histogram.STANDARD, num_nan=numbers.nans)
    edges, counts = numbers.histogram.edges, numbers.histogram.counts
    for k, count in enumerate(counts):
        standard.buckets.add(low_value=edges[k], high_value=edges[k + 1], sample_count=float(count))
    quantiles = out.histograms.add(num_nan=numbers.nans)
    _fill_quantiles(pb, quantiles, numbers)


def _fill_strings(pb: Any, out: Any, feature: FeatureStatistics) -> None:
    if feature.categories is not None:
        out.unique = feature.categories.distinct
        for rank, top in enumerate(feature.categories.top):
            out.top_values.add(value=top.text, frequency=float(top.count))
            out.rank_histogram.buckets.add(low_rank=rank, high_rank=rank, label=top.text, sample_count=float(top.count))
    if feature.lengths is not None and feature.lengths.mean is not None:
        out.avg_length = feature.lengths.mean


def _fill_bytes(out: Any, feature: FeatureStatistics) -> None:
    if feature.categories is not None:
        out.unique = feature.categories.distinct
    lengths = feature.lengths
    if lengths is not None and lengths.count:
        out.avg_num_bytes = float(lengths.mean or 0.0)
        out.min_num_bytes = float(lengths.min or 0)
        out.max_num_bytes = float(lengths.max or 0)
        out.max_num_bytes_int = int(lengths.max or 0)
