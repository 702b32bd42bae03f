# What write-through costs TFRecordWriter (issue 12: each write() reaches the kernel before it
# returns, one os.writev per record, so that SIGKILL loses at most the record in flight):
#
#   python benchmarks/write_through.py [--rounds N] [--quick] [--dir DIR] [--out FILE.json]
#
# For records of the sizes of run.py's three workloads (small ~110 B, dense ~4.4 KiB, images
# 64 KiB; random bytes, prepared untimed), each round writes them once with the default
# writer (write-through) and once with buffered=True (the 1 MiB buffer the writer used
# before), taking turns in an order that rotates between rounds (benchmarks/_rounds.py).
# Writes go to DIR (default /dev/shm, a tmpfs, so that no disk sets the pace). Prints
# records/s, median and spread (min..max over rounds), and the ratio of the medians; writes
# the raw times as JSON (default benchmarks/results/write_through.json). Nothing here asserts.
from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from _rounds import spread, timed, turns

import tfrecord_lite as tfr

SIZES = {"small": (110, 200_000), "dense": (4_500, 20_000), "images": (65_536, 4_000)}
MODES = {"write-through": False, "buffered=True": True}


def write_all(path: str, records: list[bytes], buffered: bool) -> None:
    with tfr.TFRecordWriter(path, buffered=buffered) as w:
        for r in records:
            w.write(r)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a tenth of the records")
    parser.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else HERE)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "write_through.json"))
    args = parser.parse_args()
    path = os.path.join(args.dir, f"write-through-{os.getpid()}.tfrecord")
    times: dict[str, dict[str, list[float]]] = {}
    counts = {}
    try:
        for name, (size, n) in SIZES.items():
            n //= 10 if args.quick else 1
            records = [os.urandom(size) for _ in range(n)]
            counts[name] = n
            times[name] = {mode: [] for mode in MODES}
            for _, mode in turns(list(MODES), args.rounds):
                times[name][mode].append(timed(functools.partial(write_all, path, records, MODES[mode]))[0])
    finally:
        if os.path.exists(path):
            os.unlink(path)
    print(f"TFRecordWriter.write, {args.rounds} rounds, into {args.dir}: records/s, median (min..max)")
    summary = {}
    for name, modes in times.items():
        rates = {mode: spread([counts[name] / s for s in secs]) for mode, secs in modes.items()}
        med = {mode: r["median"] for mode, r in rates.items()}
        cells = [
            f"{mode} {r['median'] / 1e3:8.1f}k ({r['low'] / 1e3:.1f}..{r['high'] / 1e3:.1f}k)"
            for mode, r in rates.items()
        ]
        ratio = med["write-through"] / med["buffered=True"]
        print(f"{name:<7} " + "   ".join(cells) + f"   write-through / buffered {ratio:.2f}x")
        summary[name] = {"records": counts[name], "median_rec_s": med, "seconds": modes, "ratio": ratio}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"python": platform.python_version(), "rounds": args.rounds, "results": summary}, fh, indent=1)


if __name__ == "__main__":
    main()
