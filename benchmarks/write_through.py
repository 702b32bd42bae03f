# TFRecordWriter.write, buffered (the default) and write-through (buffered=False: each record in the
# kernel's page cache before write() returns, so that SIGKILL loses at most the record in flight;
# stored into a shared map of the file when the records are small, else one os.writev each), beside
# TensorFlow's tf.io.TFRecordWriter writing the same records:
#
#   python benchmarks/write_through.py [--rounds N] [--quick] [--dir DIR] [--tf-python P] [--out FILE.json]
#
# For records of the sizes of run.py's three workloads (small ~110 B, dense ~4.4 KiB, images
# 64 KiB; seeded random bytes, prepared untimed), each round writes them once with each mode, in
# an order that rotates between rounds (benchmarks/_rounds.py), after one warm-up write of each.
# TensorFlow (if --tf-python has it) writes the same records in its own process, --rounds times
# after a warm-up, between the rounds of the others. Writes go to DIR (default /dev/shm, a tmpfs,
# so that no disk sets the pace). Prints records/s, median and spread (min..max), and the ratios of
# the medians; writes the raw times as JSON (default benchmarks/results/write_through.json).
# Nothing here asserts.
from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _rounds import spread, timed, turns

SIZES = {"small": (110, 200_000), "dense": (4_500, 20_000), "images": (65_536, 4_000)}
MODES = {"buffered (default)": True, "buffered=False": False}

_TF_CHILD = """
import json, random, sys, time
import tensorflow as tf
size, n, rounds, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = random.Random(size)
records = [rng.randbytes(size) for _ in range(n)]
times = []
for r in range(rounds + 1):
    start = time.perf_counter()
    with tf.io.TFRecordWriter(path) as w:
        for rec in records:
            w.write(rec)
    if r:
        times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def write_all(path: str, records: list[bytes], buffered: bool) -> None:
    import tfrecord_lite as tfr

    with tfr.TFRecordWriter(path, buffered=buffered) as w:
        for r in records:
            w.write(r)


def tf_times(python: str, size: int, n: int, rounds: int, path: str) -> list[float]:
    out = subprocess.run(
        [python, "-c", _TF_CHILD, str(size), str(n), str(rounds), path], capture_output=True, text=True
    )
    if out.returncode != 0:
        print(f"TensorFlow failed:\n{out.stderr[-1500:]}", file=sys.stderr)
        return []
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a tenth of the records")
    parser.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else HERE)
    parser.add_argument("--tf-python", default=os.path.join(os.path.dirname(HERE), ".venvs", "tf", "bin", "python"))
    parser.add_argument("--out", default=os.path.join(HERE, "results", "write_through.json"))
    args = parser.parse_args()
    path = os.path.join(args.dir, f"write-through-{os.getpid()}.tfrecord")
    times: dict[str, dict[str, list[float]]] = {}
    counts = {}
    loads = [loadavg()]
    try:
        for name, (size, n) in SIZES.items():
            n //= 10 if args.quick else 1
            rng = random.Random(size)
            records = [rng.randbytes(size) for _ in range(n)]
            counts[name] = n
            times[name] = {mode: [] for mode in MODES}
            for mode in MODES:  # warm-up
                write_all(path, records, MODES[mode])
            for _, mode in turns(list(MODES), args.rounds):
                times[name][mode].append(timed(functools.partial(write_all, path, records, MODES[mode]))[0])
            if os.path.exists(args.tf_python):
                times[name]["TensorFlow"] = tf_times(args.tf_python, size, n, args.rounds, path)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    loads.append(loadavg())
    print(f"TFRecordWriter.write, {args.rounds} rounds, into {args.dir}, load {loads[0]} -> {loads[1]}: "
          "records/s, median (min..max)")  # fmt: skip
    summary = {}
    for name, modes in times.items():
        rates = {mode: spread([counts[name] / s for s in secs]) for mode, secs in modes.items() if secs}
        med = {mode: r["median"] for mode, r in rates.items()}
        cells = [
            f"{mode} {r['median'] / 1e3:.1f}k ({r['low'] / 1e3:.1f}..{r['high'] / 1e3:.1f}k)"
            for mode, r in rates.items()
        ]
        through = med["buffered=False"] / med["buffered (default)"]
        line = f"{name:<7} " + "   ".join(cells) + f"   write-through / buffered {through:.2f}x"
        if "TensorFlow" in med:
            line += f"   buffered / TF {med['buffered (default)'] / med['TensorFlow']:.2f}x"
        print(line)
        summary[name] = {"records": counts[name], "median_rec_s": med, "seconds": modes, "through_ratio": through}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(
            {"python": platform.python_version(), "rounds": args.rounds, "load": loads, "results": summary},
            fh,
            indent=1,
        )


if __name__ == "__main__":
    main()
