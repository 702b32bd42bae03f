# DatasetStatistics.to_tfdv() / write_tfdv(): the file is read back as TFDV reads it (a TFRecord of one
# serialized DatasetFeatureStatisticsList, parsed with tensorflow-metadata's statistics_pb2), and its
# fields are compared with numbers computed here with numpy over records decoded one by one.
# tensorflow-metadata lives in the tf env (the py env keeps a protobuf too old for it).
from __future__ import annotations

import numpy as np
import pytest

statistics_pb2 = pytest.importorskip("tensorflow_metadata.proto.v0.statistics_pb2")

import tfrecord_lite as tfr


def _records():
    rng = np.random.default_rng(2)
    out = []
    for i in range(900):
        features = {
            "label": int(rng.integers(0, 4)),
            "x": rng.standard_normal(int(rng.integers(1, 4))).astype(np.float32),
            "word": [b"alpha", b"beta", b"gamma"][i % 3] * (1 + i % 2),
        }
        if i % 4 == 0:
            del features["x"]
        out.append(tfr.encode_example(features))
    return out


def _written(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    records = _records()
    with tfr.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    out = str(tmp_path / "stats.tfrecord")
    tfr.statistics(path).write_tfdv(out)
    (payload,) = list(tfr.iter_records(out))
    return statistics_pb2.DatasetFeatureStatisticsList.FromString(payload), records


def _decoded(records, key):
    rows = [tfr.decode_example(r) for r in records]
    return [row[key] for row in rows if key in row]


def test_written_file_parses_and_matches_numpy(tmp_path):
    proto, records = _written(tmp_path)
    (dataset,) = proto.datasets
    assert dataset.num_examples == len(records)
    features = {f.name: f for f in dataset.features}
    pb = statistics_pb2.FeatureNameStatistics

    x = features["x"]
    assert x.type == pb.FLOAT
    rows = _decoded(records, "x")
    values = np.concatenate([np.asarray(v, dtype=np.float64) for v in rows])
    common = x.num_stats.common_stats
    assert common.num_non_missing == len(rows) and common.num_missing == len(records) - len(rows)
    assert common.min_num_values == min(map(len, rows)) and common.max_num_values == max(map(len, rows))
    assert common.avg_num_values == pytest.approx(np.mean([len(r) for r in rows]))
    assert common.tot_num_values == len(values)
    assert len(common.num_values_histogram.buckets) == 10
    assert common.num_values_histogram.type == statistics_pb2.Histogram.QUANTILES
    assert x.num_stats.mean == pytest.approx(values.mean())
    assert x.num_stats.std_dev == pytest.approx(values.std())
    assert x.num_stats.min == pytest.approx(values.min()) and x.num_stats.max == pytest.approx(values.max())
    assert x.num_stats.median == pytest.approx(np.median(values))
    standard, quantiles = x.num_stats.histograms
    assert standard.type == statistics_pb2.Histogram.STANDARD
    assert sum(b.sample_count for b in standard.buckets) == pytest.approx(len(values))
    assert quantiles.type == statistics_pb2.Histogram.QUANTILES
    assert [b.low_value for b in quantiles.buckets] == pytest.approx(np.quantile(values, np.arange(10) / 10))

    label = features["label"]
    assert label.type == pb.INT and label.num_stats.num_zeros == sum(int(v[0]) == 0 for v in _decoded(records, "label"))

    word = features["word"]
    assert word.type == pb.STRING
    words = [v[0] for v in _decoded(records, "word")]
    assert word.string_stats.unique == len(set(words))
    assert word.string_stats.avg_length == pytest.approx(np.mean([len(w) for w in words]))
    counts = {w.decode(): words.count(w) for w in set(words)}
    assert {t.value: t.frequency for t in word.string_stats.top_values} == counts
    ranks = word.string_stats.rank_histogram.buckets
    assert [b.low_rank for b in ranks] == list(range(len(counts)))
    assert [b.sample_count for b in ranks] == sorted(counts.values(), reverse=True)


def test_sequence_feature_lists_use_tfx_paths(tmp_path):
    path = str(tmp_path / "seq.tfrecord")
    with tfr.TFRecordWriter(path) as writer:
        for i in range(20):
            steps = [np.array([i, i + 1], np.int64)] * (i % 5)
            writer.write(tfr.encode_sequence_example({"id": i}, {"tok": steps}))
    proto = tfr.statistics(path).to_tfdv()
    by_path = {tuple(f.path.step) or (f.name,): f for f in proto.datasets[0].features}
    tok = by_path["##SEQUENCE##", "tok"]
    lengths = [i % 5 for i in range(20)]
    assert tok.num_stats.common_stats.num_non_missing == 20
    assert tok.num_stats.common_stats.tot_num_values == 2 * sum(lengths)
    histogram = tok.num_stats.common_stats.feature_list_length_histogram
    assert [b.low_value for b in histogram.buckets] == pytest.approx(np.quantile(lengths, np.arange(10) / 10))
    assert ("id",) in by_path
