# tfr.statistics over run.py's workloads: records per second of the whole pass (reading, batch
# decoding without a spec, every accumulator and sketch), by the wall clock and by the process's CPU
# time (the steadier one on a shared machine), median of the rounds with the lowest and highest
# round, after a warm-up. (Not named statistics.py: that would shadow the standard library's module,
# which _rounds imports, for every script here.) The workload files are generated into .work/ the first time
# (the same rows as run.py's, from workloads.py's fixed seeds), as statistics-<name>-<count>.tfrecord.
#
#   python benchmarks/dataset_statistics.py [--quick] [--rounds N] [--only small images dense]
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import workloads as W
from _rounds import spread, timed

import tfrecord_lite as tfr

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".work")


def workload_file(wl: W.Workload) -> str:
    """The workload's file in .work/, written once."""
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, f"statistics-{wl.name}-{wl.count}.tfrecord")
    if not os.path.exists(path):
        with tfr.TFRecordWriter(path + ".tmp") as writer:
            for row in wl.rows():
                writer.write_example(row)
        os.replace(path + ".tmp", path)
    return path


def measure(path: str, n: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of each of n rounds, after a warm-up."""
    tfr.statistics(path)
    walls, cpus = [], []
    for _ in range(n):
        cpu = time.process_time()
        seconds, _ = timed(lambda: tfr.statistics(path))
        walls.append(seconds)
        cpus.append(time.process_time() - cpu)
    return walls, cpus


def main() -> None:
    parser = argparse.ArgumentParser(description="tfr.statistics: records per second")
    parser.add_argument("--quick", action="store_true", help="workloads a tenth of the size")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=[w.name for w in W.FULL], default=["small"])
    args = parser.parse_args()
    print("| workload | records | MB | records/s, wall: median (lowest..highest round) | records/s, CPU time | MB/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for wl in (w for w in (W.QUICK if args.quick else W.FULL) if w.name in args.only):
        path = workload_file(wl)
        size = os.path.getsize(path) / 1e6
        walls, cpus = measure(path, args.rounds)
        wall, cpu = spread([wl.count / t for t in walls]), spread([wl.count / t for t in cpus])
        print(
            f"| {wl.name} | {wl.count:,} | {size:.0f} | {wall['median']:,.0f} ({wall['low']:,.0f}..{wall['high']:,.0f})"
            f" | {cpu['median']:,.0f} ({cpu['low']:,.0f}..{cpu['high']:,.0f}) | {size / spread(walls)['median']:,.0f} |"
        )
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
