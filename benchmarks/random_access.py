# Random-access benchmark for tfrecord_lite.TFRecordFile (issue 4's targets):
#
#   python benchmarks/random_access.py [--quick] [--rounds N] [--out FILE.json]
#
# Measures, each as the median of --rounds rounds in this one process (the two sides of a
# comparison taking turns, benchmarks/_rounds.py; the JSON keeps each one's spread too):
#   - random raw reads/s (f[i], CRC verified, and verify=False) on the small workload;
#   - f.example(i) in random order vs per-record decode of a sequential read
#     (decode_example over iter_records), records/s and their ratio;
#   - index build (tfr.write_index: one CRC-verified scan + the sidecar written)
#     in GB/s on the images workload and records/s on the small one;
#   - the time to open an indexed file of 10M records (1M with --quick);
#   - bytes of index per record.
# Workloads come from benchmarks/workloads.py (fixed seeds) and are written once
# into benchmarks/.work/random_access/. Prints a table; writes the same as JSON
# (default benchmarks/results/random_access.json). Nothing here asserts.
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import workloads as W
from _rounds import rounds, spread

import tfrecord_lite as tfr
from tfrecord_lite._wire.framing import frame

WORK = os.path.join(HERE, ".work", "random_access")
TARGETS = {
    "random_reads_per_s": (">=", 500_000),
    "example_random_vs_sequential": (">=", 0.8),
    "build_images_gb_per_s": (">=", 1.0),
    "build_small_records_per_s": (">=", 1_000_000),
    "open_indexed_ms": ("<", 50.0),
    "index_bytes_per_record": ("<=", 16.0),
}


def workload_file(wl: W.Workload) -> str:
    """The workload's TFRecord file (generated once; a manifest says it is complete)."""
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, f"{wl.name}-{wl.count}.tfrecord")
    done = path + ".done"
    if not (os.path.exists(path) and os.path.exists(done)):
        print(f"generating {wl.name} ({wl.count} Examples)", file=sys.stderr)
        with tfr.TFRecordWriter(path) as w:
            for row in wl.rows():
                w.write_example(row)
        with open(done, "w") as fh:
            fh.write(str(os.path.getsize(path)))
    return path


def many_records_file(count: int) -> str:
    """A file of `count` identical 8-byte records (24 bytes framed), indexed once."""
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, f"many-{count}.tfrecord")
    record = frame(b"12345678")
    if not (os.path.exists(path) and os.path.getsize(path) == count * len(record)):
        print(f"generating {count} records", file=sys.stderr)
        chunk = record * 100_000
        with open(path, "wb") as fh:
            left = count
            while left:
                n = min(left, 100_000)
                fh.write(chunk if n == 100_000 else record * n)
                left -= n
    with tfr.TFRecordFile(path, verify=False):  # builds the sidecar if missing or stale
        pass
    return path


def measure(quick: bool, n_rounds: int) -> dict[str, Any]:
    workloads = {w.name: w for w in (W.QUICK if quick else W.FULL)}
    small = workload_file(workloads["small"])
    images = workload_file(workloads["images"])
    results: dict[str, Any] = {"seconds": {}}  # each measure's rounds: median, low, high

    def median_times(fns: dict[str, Callable[[], Any]], n: int = n_rounds) -> dict[str, float]:
        """Median seconds of each function over `n` rounds in which they take turns, after a warm-up."""
        times = rounds(fns, n)
        results["seconds"].update({name: spread(ts) for name, ts in times.items()})
        return {name: results["seconds"][name]["median"] for name in fns}

    # -- random raw reads
    f = tfr.TFRecordFile(small)
    n = len(f)
    order = np.random.default_rng(0).integers(0, n, n).tolist()

    def reads(ff: tfr.TFRecordFile) -> Callable[[], None]:
        def go() -> None:
            for i in order:
                ff[i]

        return go

    unverified = tfr.TFRecordFile(small, verify=False)
    t = median_times({"random_reads": reads(f), "random_reads_unverified": reads(unverified)})
    results["random_reads_per_s"] = n / t["random_reads"]
    results["random_reads_unverified_per_s"] = n / t["random_reads_unverified"]
    unverified.close()

    # -- f.example(i) random vs sequential per-record decode
    decode = tfr.decode_example
    picks = order[: max(n // 4, 1000)]

    def random_examples() -> None:
        for i in picks:
            f.example(i)

    def sequential_decode() -> None:
        for r in tfr.iter_records(small):
            decode(r)

    t = median_times({"example_random": random_examples, "decode_sequential": sequential_decode})
    results["example_random_per_s"] = len(picks) / t["example_random"]
    results["decode_sequential_per_s"] = n / t["decode_sequential"]
    results["example_random_vs_sequential"] = results["example_random_per_s"] / results["decode_sequential_per_s"]
    f.close()

    # -- index build (CRC-verified scan + sidecar written), no sidecar beforehand
    for name, path in (("images", images), ("small", small)):
        size = os.path.getsize(path)
        with tfr.TFRecordFile(path) as g:
            count = len(g)

        def build(p: str = path) -> None:
            tfr.write_index(p, destination=p + ".bench-idx")

        seconds = median_times({f"build_{name}": build})[f"build_{name}"]
        os.unlink(path + ".bench-idx")
        results[f"build_{name}_gb_per_s"] = size / seconds / 1e9
        results[f"build_{name}_records_per_s"] = count / seconds

    # -- opening an indexed file of many records
    many = 1_000_000 if quick else 10_000_000
    big = many_records_file(many)

    def open_close() -> None:
        with tfr.TFRecordFile(big) as h:
            h[many // 2]

    results["open_indexed_ms"] = median_times({"open_indexed": open_close}, max(n_rounds, 5))["open_indexed"] * 1e3
    results["open_indexed_records"] = many
    results["index_bytes_per_record"] = os.path.getsize(big + ".tfrlidx") / many
    results["workloads"] = {"small": os.path.getsize(small), "images": os.path.getsize(images)}
    return results


def rate(v: float) -> str:
    return f"{v / 1e6:.2f}M" if v >= 1e6 else f"{v / 1e3:.0f}k"


def table(r: dict[str, Any]) -> str:
    rows: list[list[str]] = [
        ["random raw reads (f[i], CRC)", f"{rate(r['random_reads_per_s'])}/s", "random_reads_per_s"],
        ["random raw reads (verify=False)", f"{rate(r['random_reads_unverified_per_s'])}/s", ""],
        ["f.example(i), random", f"{rate(r['example_random_per_s'])}/s", ""],
        ["decode_example over iter_records", f"{rate(r['decode_sequential_per_s'])}/s", ""],
        ["  ratio random / sequential", f"{r['example_random_vs_sequential']:.2f}", "example_random_vs_sequential"],
        ["index build, images", f"{r['build_images_gb_per_s']:.2f} GB/s", "build_images_gb_per_s"],
        ["index build, small", f"{rate(r['build_small_records_per_s'])} rec/s", "build_small_records_per_s"],
        [
            f"open indexed file, {r['open_indexed_records']:,} records",
            f"{r['open_indexed_ms']:.2f} ms",
            "open_indexed_ms",
        ],
        ["index size", f"{r['index_bytes_per_record']:.2f} B/record", "index_bytes_per_record"],
    ]
    lines = ["| measure | value | target | met |", "|---|---|---|---|"]
    for label, value, key in rows:
        if key:
            op, goal = TARGETS[key]
            ok = {">=": r[key] >= goal, "<": r[key] < goal, "<=": r[key] <= goal}[op]
            shown = rate(goal) + "/s" if goal >= 1000 else str(goal)
            lines.append(f"| {label} | {value} | {op} {shown} | {'yes' if ok else 'NO'} |")
        else:
            lines.append(f"| {label} | {value} | | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="workloads at 1/10 size, 1M records for the open test")
    parser.add_argument(
        "--rounds", "--runs", dest="rounds", type=int, default=3, help="rounds per measurement (median)"
    )
    parser.add_argument("--out", default=os.path.join(HERE, "results", "random_access.json"))
    args = parser.parse_args()
    results = measure(args.quick, args.rounds)
    results["rounds"] = args.rounds
    results["targets"] = {k: [op, goal] for k, (op, goal) in TARGETS.items()}
    results["machine"] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "load_average_1min": os.getloadavg()[0],  # other work on the machine slows every number
    }
    results["quick"] = args.quick
    print(table(results))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(results, fh, indent=2)
    print(f"\nwritten to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
