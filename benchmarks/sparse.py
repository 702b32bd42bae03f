# SparseFeature, batched: tfrecord_lite against TensorFlow's tf.io.parse_example on the same records
# with the same spec (tf.io.SparseFeature objects, which tfrecord_lite takes as they are), two ways:
# from a file (iter_example_batches against TFRecordDataset(path).batch(B).map(parse_example)) and
# on lists of records in memory (decode_examples against parse_example called on each list):
#
#   .venvs/tf/bin/python benchmarks/sparse.py [--quick] [--rounds N] [--batch B]
#
# Workloads, generated from fixed seeds (bag-of-words style records: sorted ids, some repeated):
#   - rank1:  SparseFeature("ids", "weights", float32, 100_000), 1-64 entries a record, unsorted;
#   - rank2:  SparseFeature(["row", "col"], "weights", float32, [64, 64]), 1-32 entries, unsorted;
#   - sorted: as rank1 with already_sorted=True and its ids written in order.
# The four run in rounds in which they take turns (benchmarks/_rounds.py), after a warm-up; the
# table gives the median records per second and the ratio ours ÷ TensorFlow's (the median of the
# rounds, the spread the lowest..highest ratio of one round). TensorFlow's results are fetched as
# numpy arrays (as ours are numpy); files are written once into benchmarks/.work/sparse/.
# Nothing here asserts.
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
import tensorflow as tf
from _rounds import compare, rounds, spread

import tfrecord_lite as tfr

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".work", "sparse")


def _records(n: int, seed: int, rank: int, sort: bool, most: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(1, most + 1))
        if rank == 1:
            ids = rng.integers(0, 100_000, k)
            ids = np.sort(ids) if sort else ids
            features = {"ids": ids, "weights": rng.random(k, dtype=np.float32), "label": [int(rng.integers(2))]}
        else:
            features = {
                "row": rng.integers(0, 64, k),
                "col": rng.integers(0, 64, k),
                "weights": rng.random(k, np.float32),
            }
        out.append(tfr.encode_example(features))
    return out


def workloads(n: int) -> dict[str, tuple[list[bytes], dict[str, Any]]]:
    return {
        "rank1": (_records(n, 1, 1, False, 64), {"s": tf.io.SparseFeature("ids", "weights", tf.float32, 100_000)}),
        "rank2": (
            _records(n, 2, 2, False, 32),
            {"s": tf.io.SparseFeature(["row", "col"], "weights", tf.float32, [64, 64])},
        ),
        "sorted": (
            _records(n, 3, 1, True, 64),
            {"s": tf.io.SparseFeature("ids", "weights", tf.float32, 100_000, already_sorted=True)},
        ),
    }


def _batches(records: list[bytes], size: int) -> list[list[bytes]]:
    return [records[i : i + size] for i in range(0, len(records), size)]


def _fetched(s: Any) -> tuple[np.ndarray, ...]:
    return s.indices.numpy(), s.values.numpy(), s.dense_shape.numpy()


def systems(records: list[bytes], spec: dict[str, Any], batch: int, path: str) -> dict[str, Callable[[], Any]]:
    """The four ways, each giving the batches' Sparse fields."""
    batches = _batches(records, batch)
    dataset = tf.data.TFRecordDataset(path).batch(batch).map(lambda x: tf.io.parse_example(x, spec)["s"])
    return {
        "ours_file": lambda: [b["s"] for b in tfr.iter_example_batches(path, features=spec, batch_size=batch)],
        "tf_file": lambda: [_fetched(s) for s in dataset],
        "ours_list": lambda: [tfr.decode_examples(b, spec)["s"] for b in batches],
        "tf_list": lambda: [_fetched(tf.io.parse_example(b, spec)["s"]) for b in batches],
    }


def _same(ours: list[tfr.Sparse], theirs: list[tuple[np.ndarray, ...]]) -> bool:
    pairs = zip(ours, theirs, strict=True)
    return all(np.array_equal(a.indices, b[0]) and np.array_equal(a.dense_shape, b[2]) for a, b in pairs)


def _write(path: str, records: list[bytes]) -> None:
    if not os.path.exists(path):
        with tfr.TFRecordWriter(path) as w:
            for record in records:
                w.write(record)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="8 192 records a workload (default 65 536)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per measurement (default 5)")
    parser.add_argument("--batch", type=int, default=1024, help="records a batch (default 1024)")
    args = parser.parse_args()
    n = 8192 if args.quick else 65536
    os.makedirs(WORK, exist_ok=True)
    print(f"{n} records a workload, batches of {args.batch}, {args.rounds} rounds, wall time")
    print("| workload | from a file: ours rec/s | TF rec/s | ours ÷ TF | on lists: ours rec/s | TF rec/s | ours ÷ TF |")
    print("|---|---:|---:|---|---:|---:|---|")
    for name, (records, spec) in workloads(n).items():
        path = os.path.join(WORK, f"{name}-{n}.tfrecord")
        _write(path, records)
        fns = systems(records, spec, args.batch, path)
        if not (_same(fns["ours_file"](), fns["tf_file"]()) and _same(fns["ours_list"](), fns["tf_list"]())):
            print(f"| {name} | results differ from TensorFlow's |")
            continue
        times = rounds(fns, args.rounds)
        cells = []
        for way in ("file", "list"):
            ratio = compare(times[f"ours_{way}"], times[f"tf_{way}"])
            rate = [n / spread(times[f"{who}_{way}"])["median"] for who in ("ours", "tf")]
            cells.append(
                f"{rate[0]:,.0f} | {rate[1]:,.0f} | {ratio['median']:.2f}× ({ratio['low']:.2f}..{ratio['high']:.2f})"
            )
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
