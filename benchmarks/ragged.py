# Batched RaggedFeature decoding against TensorFlow: decode_examples on lists of 1024 records
# against tf.io.parse_example on the same records (a tf.constant of each batch, made before
# timing), for a spec of two RaggedFeatures: token ids in paragraphs of sentences (RowLengths
# then RowSplits) and float weights in sentences (RowSplits), row splits int64 in both. Each
# system runs in its own interpreter (the two protobuf worlds stay apart) and serves one pass
# over the records per stdin line; the passes take turns, in a rotating order (_rounds.turns).
# µs per record, median (lowest..highest) of the rounds, and the ratio TensorFlow / ours.
#
#   .venvs/py/bin/python benchmarks/ragged.py --tf-python .venvs/tf/bin/python [--count N] [--rounds N]
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _rounds import compare, spread, turns

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".work")
BATCH = 1024
SEED = 11


def write_records(count: int, path: str) -> None:
    """`count` Examples of 1-3 paragraphs of 1-4 sentences of 0-11 token ids (fixed seed)."""
    import tfrecord_lite as tfr

    rng = np.random.default_rng(SEED)
    with tfr.TFRecordWriter(path) as writer:
        for i in range(count):
            sentences = rng.integers(1, 5, size=int(rng.integers(1, 4)))
            words = rng.integers(0, 12, size=int(sentences.sum()))
            ids = rng.integers(0, 1 << 20, size=int(words.sum()))
            writer.write_example(
                {
                    "ids": ids,
                    "weights": rng.random(len(ids), dtype=np.float32),
                    "paragraphs": sentences.astype(np.int64),
                    "sentences": np.concatenate([[0], np.cumsum(words)]).astype(np.int64),
                    "label": np.array([i % 10]),
                }
            )


def _ours(batches: list[list[bytes]]) -> Callable[[], Any]:
    import tfrecord_lite as tfr

    r = tfr.RaggedFeature
    spec = {
        "tokens": r("int64", "ids", [r.RowLengths("paragraphs"), r.RowSplits("sentences")]),
        "weights": r("float32", "weights", [r.RowSplits("sentences")]),
    }
    return lambda: [tfr.decode_examples(batch, spec) for batch in batches]


def _tensorflow(batches: list[list[bytes]]) -> Callable[[], Any]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    r = tf.io.RaggedFeature
    spec = {
        "tokens": r(tf.int64, "ids", [r.RowLengths("paragraphs"), r.RowSplits("sentences")], tf.int64),
        "weights": r(tf.float32, "weights", [r.RowSplits("sentences")], tf.int64),
    }
    tensors = [tf.constant(batch) for batch in batches]
    return lambda: [tf.io.parse_example(batch, spec) for batch in tensors]


def worker(system: str, path: str) -> None:
    """Serve passes on stdin lines: one pass per line, its seconds as JSON."""
    import tfrecord_lite as tfr

    records = list(tfr.iter_records(path))
    batches = [records[i : i + BATCH] for i in range(0, len(records), BATCH)]
    run = _tensorflow(batches) if system == "tf" else _ours(batches)
    run()  # warm-up
    print("ready", flush=True)
    for _ in sys.stdin:
        started = time.perf_counter()
        run()
        print(json.dumps(time.perf_counter() - started), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tf-python", required=True)
    parser.add_argument("--count", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--worker", nargs=2, metavar=("SYSTEM", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(*args.worker)
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, f"ragged-{args.count}.tfrecord")
    if not os.path.exists(path):
        write_records(args.count, path)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    pythons = {"ours": sys.executable, "tf": args.tf_python}
    procs = {
        system: subprocess.Popen(
            [python, os.path.abspath(__file__), "--tf-python", args.tf_python, "--worker", system, path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for system, python in pythons.items()
    }
    for proc in procs.values():
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    times: dict[str, list[float]] = {system: [] for system in procs}
    for _, system in turns(list(procs), args.rounds):
        proc = procs[system]
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("\n")
        proc.stdin.flush()
        times[system].append(json.loads(proc.stdout.readline()))
    for proc in procs.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    print(f"{args.count} records, batches of {BATCH}, {args.rounds} rounds")
    print("| system | µs/record |\n|---|---:|")
    for system, seconds in times.items():
        s = {k: v / args.count * 1e6 for k, v in spread(seconds).items()}
        print(f"| {system} | {s['median']:.2f} ({s['low']:.2f}..{s['high']:.2f}) |")
    ratio = compare(times["ours"], times["tf"])
    print(f"TensorFlow / ours: {ratio['median']:.2f}x ({ratio['low']:.2f}..{ratio['high']:.2f})")


if __name__ == "__main__":
    main()
