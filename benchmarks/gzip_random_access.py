# Random access into GZIP files (issue 14's targets):
#
#   python benchmarks/gzip_random_access.py [--quick] [--rounds N] [--out FILE.json]
#
# For the small and images workloads, gzipped into a file of about 1 GiB compressed
# (64 MiB with --quick; the workload's Examples repeated, deflated by the [fast]
# library at its default level), measures in --rounds rounds:
#   - the index build (one pass; seconds and compressed MB/s);
#   - the sidecar's size as a share of the compressed file (target <= 2 %);
#   - a random record f[i] with the index warm (opened, the OS cache warm): the
#     median and 90th percentile over 300 random reads per round (target <= 5 ms),
#     for the indexed_gzip index of a TensorFlow-style file (one stream, no flush
#     points) and for a file written with seek_every="4M";
#   - opening the indexed file.
# Reads are timed in wall time and in this process's CPU time: on a shared machine
# the second says what a read costs when the CPU is not taken by others.
# Prints each measure's median over the rounds and its spread (lowest-highest: _rounds.spread);
# writes them as JSON (default benchmarks/results/gzip_random_access.json). Nothing here asserts.
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import workloads as W
from _rounds import spread, timed

import tfrecord_lite as tfr

WORK = os.path.join(HERE, ".work", "gzip_random_access")
READS = 300


def gz_file(wl: W.Workload, target: int, seek_every: str | None) -> str:
    """The workload's Examples repeated into a GZIP file of about `target` compressed bytes."""
    os.makedirs(WORK, exist_ok=True)
    tag = f"-seek{seek_every}" if seek_every else ""
    path = os.path.join(WORK, f"{wl.name}-{target >> 20}M{tag}.tfrecord.gz")
    if os.path.exists(path + ".done"):
        return path
    print(f"generating {path}", file=sys.stderr)
    records = [tfr.encode_example(row) for row in wl.rows()]
    with tfr.TFRecordWriter(path, compression="gzip", fast=True, seek_every=seek_every) as writer:
        while os.path.getsize(path) < target:
            for record in records:
                writer.write(record)
    with open(path + ".done", "w") as fh:
        fh.write(str(os.path.getsize(path)))
    return path


def measure(path: str, rounds: int, build: bool) -> dict[str, Any]:
    sidecar = path + ".tfrlidx"
    builds: list[float] = []
    if build:
        for _ in range(rounds):
            if os.path.exists(sidecar):
                os.unlink(sidecar)
            builds.append(timed(lambda: tfr.TFRecordFile(path).close())[0])
    opens, reads, p90s, cpu = [], [], [], []
    rng = np.random.default_rng(0)
    for _ in range(rounds):
        spent, f = timed(lambda: tfr.TFRecordFile(path))
        opens.append(spent)
        picks = rng.integers(0, len(f), READS).tolist()
        f[picks[0]]  # warm
        times, cpu_times = [], []
        for i in picks:
            t, c = time.perf_counter(), time.process_time()
            f[i]
            times.append(time.perf_counter() - t)
            cpu_times.append(time.process_time() - c)
        reads.append(statistics.median(times))
        p90s.append(float(np.percentile(times, 90)))
        cpu.append(statistics.median(cpu_times))
        records = len(f)
        f.close()
    size = os.path.getsize(path)
    out: dict[str, Any] = {
        "compressed_bytes": size,
        "records": records,
        "sidecar_share": os.path.getsize(sidecar) / size,
        "open_ms": spread([s * 1e3 for s in opens]),
        "random_record_ms": spread([s * 1e3 for s in reads]),
        "random_record_p90_ms": spread([s * 1e3 for s in p90s]),
        "random_record_cpu_ms": spread([s * 1e3 for s in cpu]),
    }
    if builds:
        out["build_s"] = spread(builds)
        out["build_mb_per_s"] = spread([size / s / 1e6 for s in builds])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="64 MiB files instead of 1 GiB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-build", action="store_true", help="keep existing sidecars: reads only")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "gzip_random_access.json"))
    args = parser.parse_args()
    target = (64 if args.quick else 1024) << 20
    workloads = {w.name: w for w in W.QUICK}
    results: dict[str, Any] = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "load_average": os.getloadavg(),
    }
    for name in ("small", "images"):
        for seek_every in (None, "4M"):
            path = gz_file(workloads[name], target, seek_every)
            key = f"{name}{'-seek_every' if seek_every else ''}"
            results[key] = measure(path, args.rounds, build=seek_every is None and not args.no_build)
            r = results[key]
            line = (
                f"{key:18} {r['compressed_bytes'] / 2**20:7.0f} MiB {r['records']:>10,} records | "
                f"random f[i] {r['random_record_ms']['median']:6.2f} ms "
                f"({r['random_record_ms']['low']:.2f}-{r['random_record_ms']['high']:.2f}), "
                f"p90 {r['random_record_p90_ms']['median']:.2f} ms, "
                f"CPU {r['random_record_cpu_ms']['median']:.2f} ms | "
                f"sidecar {100 * r['sidecar_share']:.2f} % | open {r['open_ms']['median']:.1f} ms"
            )
            if "build_s" in r:
                b = r["build_mb_per_s"]
                line += f" | build {b['median']:.0f} MB/s ({b['low']:.0f}-{b['high']:.0f})"
            print(line, flush=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
