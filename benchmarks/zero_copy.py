# copy=False against the default in the batched decoders: decode_examples on lists of 1024
# records from iter_records, and iter_example_batches(path, features=spec, batch_size=1024), each with bytes values
# copied (the default) and as views (copy=False). The four ways take turns in one process
# (_rounds); µs a record, median (lowest..highest), and the minor page faults a record
# (getrusage), which is where a batch of 64 KiB copies pays: glibc hands each freed batch
# back to the kernel, and the next batch faults its pages in again.
#
#   python benchmarks/zero_copy.py [--rounds N] [--only images small dense]
#   (in an interpreter with tfrecord_lite: .venvs/bench; the workloads are run.py's files)
from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import sys
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W
from _rounds import spread, timed, turns

import tfrecord_lite as tfr

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".work")
BATCH = 1024


def ways(wl: W.Workload, path: str) -> dict[str, Callable[[], None]]:
    spec = {key: tfr.FixedLenFeature(shape, dtype) for key, (dtype, shape) in wl.features.items()}

    def lists(copy: bool) -> None:
        records = tfr.iter_records(path)
        while batch := list(itertools.islice(records, BATCH)):
            tfr.decode_examples(batch, spec, copy=copy)

    def batches(copy: bool) -> None:
        for _ in tfr.iter_example_batches(path, features=spec, batch_size=BATCH, copy=copy):
            pass

    return {
        "lists, copy=True": lambda: lists(True),
        "lists, copy=False": lambda: lists(False),
        "batches, copy=True": lambda: batches(True),
        "batches, copy=False": lambda: batches(False),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", nargs="*", choices=[w.name for w in W.FULL], default=["images", "small", "dense"])
    args = parser.parse_args()
    print("| workload | way | µs a record | faults a record |\n|---|---|---:|---:|")
    for wl in (w for w in W.FULL if w.name in args.only):
        path = os.path.join(WORK, f"{wl.name}-{wl.count}.tfrecord")
        if not os.path.exists(path):
            sys.exit(f"{path} is missing: `python benchmarks/run.py --quick` (or a full run) writes the workloads")
        fns = ways(wl, path)
        for fn in fns.values():
            fn()  # warm-up: imports, page cache
        micros: dict[str, list[float]] = {name: [] for name in fns}
        faults: dict[str, list[float]] = {name: [] for name in fns}
        for _, name in turns(list(fns), args.rounds):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            seconds, _ = timed(fns[name])
            faults[name].append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / wl.count)
            micros[name].append(seconds / wl.count * 1e6)
        for name in fns:
            us = spread(micros[name])
            print(
                f"| {wl.name} | {name} | {us['median']:.2f} ({us['low']:.2f}..{us['high']:.2f}) | "
                f"{statistics.median(faults[name]):.1f} |"
            )
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
