# decode_sequence_examples against TensorFlow's tf.io.parse_sequence_example, on the same batches:
#
#   .venvs/tf/bin/python benchmarks/sequence_examples.py [--rounds N] [--batches N] [--batch-size N]
#
# Records come from workloads.sequence_rows (fixed seed): a context of an int64, a 12-byte string
# and 4 float32; feature lists of 10 to 50 steps, each step a 16-float32 embedding
# (FixedLenSequenceFeature [16]), an item id (FixedLenSequenceFeature []) and 0 to 3 int64 tags
# (VarLenFeature). Both decode batches held in memory as lists of bytes (TensorFlow: the list
# converted to a string tensor once, ahead of the timing), eager TensorFlow as users call it.
# Rounds in which the two take turns (benchmarks/_rounds.py): the median of the rounds with the
# spread (lowest..highest round), wall time and CPU time of the process (TensorFlow parses on
# threads of its own). Nothing here asserts.
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import workloads as W
from _rounds import compare, spread, turns

import tfrecord_lite as tfr


def specs(m: Any, int64: Any, float32: Any, string: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    context = {
        "user": m.FixedLenFeature([], int64),
        "name": m.FixedLenFeature([], string),
        "scores": m.VarLenFeature(float32),
    }
    sequence = {
        "embedding": m.FixedLenSequenceFeature([16], float32),
        "item": m.FixedLenSequenceFeature([], int64),
        "tags": m.VarLenFeature(int64),
    }
    return context, sequence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, default=8, help="batches decoded per round (default 8)")
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    import tensorflow as tf

    rows = W.sequence_rows(args.batches * args.batch_size)
    records = [tfr.encode_sequence_example(c, f) for c, f in rows]
    batches = [records[i : i + args.batch_size] for i in range(0, len(records), args.batch_size)]
    tensors = [tf.constant(b) for b in batches]
    ours_ctx, ours_seq = specs(tfr, "int64", "float32", "bytes")
    tf_ctx, tf_seq = specs(tf.io, tf.int64, tf.float32, tf.string)

    def ours() -> None:
        for batch in batches:
            tfr.decode_sequence_examples(batch, ours_ctx, ours_seq)

    def theirs() -> None:
        for tensor in tensors:
            tf.io.parse_sequence_example(tensor, tf_ctx, tf_seq)

    systems: dict[str, Callable[[], None]] = {"decode_sequence_examples": ours, "tf.io.parse_sequence_example": theirs}
    for fn in systems.values():
        fn()  # warm-up
    wall: dict[str, list[float]] = {name: [] for name in systems}
    cpu: dict[str, list[float]] = {name: [] for name in systems}
    for _, name in turns(list(systems), args.rounds):
        w, c = time.perf_counter(), time.process_time()
        systems[name]()
        wall[name].append(time.perf_counter() - w)
        cpu[name].append(time.process_time() - c)
    size = sum(map(len, records)) / len(records)
    print(f"{len(records)} SequenceExamples of {size:.0f} bytes on average, batches of {args.batch_size}")
    for name in systems:
        s = spread(wall[name])
        per = 1e3 / len(batches)
        print(f"  {name:30s} {s['median'] * per:7.2f} ms a batch ({s['low'] * per:.2f}..{s['high'] * per:.2f})")
    for label, times in (("wall", wall), ("cpu", cpu)):
        r = compare(times["decode_sequence_examples"], times["tf.io.parse_sequence_example"])
        print(f"  speed against TensorFlow, {label}: {r['median']:.2f}x ({r['low']:.2f}..{r['high']:.2f})")


if __name__ == "__main__":
    main()
