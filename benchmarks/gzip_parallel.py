# Parallel inflate of one big GZIP file (issue 14: "consider rapidgzip for big single
# files when more than one core is free"):
#
#   python benchmarks/gzip_parallel.py [--quick] [--rounds N] [FILE.gz]
#
# Inflates the whole file (default: the small workload gzipped to 1 GiB, 64 MiB with
# --quick, as benchmarks/gzip_random_access.py makes it) with ISA-L in this thread and
# with rapidgzip at parallelization 1 and 2, taking turns in each round; prints the
# median wall and CPU seconds of each with the spread (lowest..highest round). Needs
# `pip install rapidgzip` (not a dependency of tfrecord_lite). Nothing here asserts.
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import gzip_random_access as G
import workloads as W

STEP = 4 << 20


def with_isal(path: str) -> int:
    from isal import isal_zlib

    d, n = isal_zlib.decompressobj(31), 0
    with open(path, "rb") as fh:
        while chunk := fh.read(STEP):
            n += len(d.decompress(chunk))
    return n


def with_rapidgzip(threads: int) -> Callable[[str], int]:
    def run(path: str) -> int:
        import rapidgzip

        n = 0
        with rapidgzip.open(path, parallelization=threads) as fh:
            while data := fh.read(STEP):
                n += len(data)
        return n

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file", nargs="?")
    parser.add_argument("--quick", action="store_true", help="a 64 MiB file instead of 1 GiB")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    path = args.file or G.gz_file(
        next(w for w in W.QUICK if w.name == "small"), (64 if args.quick else 1024) << 20, None
    )
    systems = {"isal": with_isal, "rapidgzip-1": with_rapidgzip(1), "rapidgzip-2": with_rapidgzip(2)}
    names = list(systems)
    wall: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}
    for r in range(args.rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            t, c = time.perf_counter(), time.process_time()
            systems[name](path)
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    size = os.path.getsize(path)
    print(f"{path}: {size / 2**20:.0f} MiB, {args.rounds} rounds, load average {os.getloadavg()[0]:.1f}")
    for name in names:
        w, c = wall[name], cpu[name]
        print(
            f"{name:12} wall {statistics.median(w):6.2f} s ({min(w):.2f}..{max(w):.2f}), "
            f"{size / statistics.median(w) / 1e6:5.0f} MB/s in | CPU {statistics.median(c):6.2f} s "
            f"({min(c):.2f}..{max(c):.2f})"
        )


if __name__ == "__main__":
    main()
