# Ray Data read benchmark (issue 10): tfrecord_lite.ray.read_tfrecords(...).materialize() against
# Ray's own ray.data.read_tfrecords (its default path, which parses with TensorFlow) on the small and
# dense workloads, each written as 4 uncompressed shards, on a local Ray cluster of 2 CPUs.
#
#   python3 tasks.py bench-ray [--quick] [--rounds N] [--workloads small,dense] [--out FILE.json]
#
# (an interpreter with ray[data], pyarrow and tensorflow-cpu: tasks.py's env "bench-engines").
# After one warm-up read each, the two readers alternate for --rounds rounds; a round is one
# materialize() of the whole workload. Prints records/s (median and spread = (max - min) / median
# over the rounds) and the ratio; checks both read the same rows (count and column checksums).
# Writes the same as JSON (default benchmarks/results/ray_read.json). Nothing here asserts a speed.
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import workloads as W

import tfrecord_lite as tfr

WORK = os.path.join(HERE, ".work", "ray_read")
SHARDS = 4


def write_workload(workload: W.Workload) -> str:
    """The workload as SHARDS uncompressed shards in its own folder (written once)."""
    folder = os.path.join(WORK, f"{workload.name}-{workload.count}")
    if not os.path.isdir(folder):
        os.makedirs(WORK, exist_ok=True)
        partial = folder + ".partial"
        with tfr.ShardedWriter(os.path.join(partial, "data"), num_shards=SHARDS, index=False) as writer:
            for row in workload.rows():
                writer.write_example(row)
        os.rename(partial, folder)
    return folder


def spec_of(workload: W.Workload) -> dict[str, Any]:
    return {key: tfr.FixedLenFeature(shape, dtype) for key, (dtype, shape) in workload.features.items()}


def flat_sum(array: Any) -> float | int:
    """The sum of every number in an Arrow array, whatever its nesting (lists, Ray's tensor types):
    exact for integers, in float64 for floats."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array.type, pa.ExtensionType):
        array = array.storage
    if pa.types.is_struct(array.type):  # Ray's variable-shaped tensors: struct<data, shape>
        array = array.field("data")
    while pa.types.is_list(array.type) or pa.types.is_large_list(array.type) or pa.types.is_fixed_size_list(array.type):
        array = array.flatten()
    if pa.types.is_integer(array.type):
        return int(pc.sum(array.cast(pa.int64())).as_py() or 0)
    return float(pc.sum(array.cast(pa.float64())).as_py() or 0.0)


def checksum(ds: Any, workload: W.Workload) -> tuple[int, int, str]:
    """(rows, the sum of every integer, the sum of every float to 9 digits): equal for two readers
    that read the same rows (floats summed in another order differ in the last digits only)."""
    rows, integers, floats = 0, 0, 0.0
    for table in ds.iter_batches(batch_format="pyarrow", batch_size=None):
        rows += table.num_rows
        for key, (dtype, _) in workload.features.items():
            if dtype != "bytes":
                total = sum(flat_sum(chunk) for chunk in table.column(key).chunks)
                if dtype == "int64":
                    integers += int(total)
                else:
                    floats += total
    return rows, integers, f"{floats:.9g}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a tenth of each workload")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workloads", default="small,dense", help="comma-separated: small, dense")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "ray_read.json"))
    args = parser.parse_args(argv)

    import ray
    import ray.data

    import tfrecord_lite.ray as lite

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    readers = {
        "tfrecord_lite": lambda folder, w: lite.read_tfrecords(folder, features=spec_of(w)),
        "ray.data.read_tfrecords (TensorFlow)": lambda folder, w: ray.data.read_tfrecords(
            sorted(glob.glob(os.path.join(folder, "data-*-of-*.tfrecord")))
        ),
    }
    results: dict[str, Any] = {"machine": platform.platform(), "ray": ray.__version__, "workloads": {}}
    for workload in W.QUICK if args.quick else W.FULL:
        if workload.name not in args.workloads.split(","):
            continue
        folder = write_workload(workload)
        sums = {name: checksum(read(folder, workload).materialize(), workload) for name, read in readers.items()}
        if len(set(sums.values())) != 1:
            print(f"{workload.name}: the readers disagree: {sums}")
            return 1
        times: dict[str, list[float]] = {name: [] for name in readers}
        for _ in range(args.rounds):
            for name, read in readers.items():
                started = time.perf_counter()
                read(folder, workload).materialize()
                times[name].append(time.perf_counter() - started)
        row: dict[str, Any] = {"records": workload.count}
        for name, seconds in times.items():
            rates = [workload.count / s for s in seconds]
            median = statistics.median(rates)
            row[name] = {"records_per_s": median, "spread": (max(rates) - min(rates)) / median, "rates": rates}
            print(f"{workload.name:6} {name:38} {median:12,.0f} records/s  spread {row[name]['spread']:.0%}")
        names = list(readers)
        row["ratio"] = row[names[0]]["records_per_s"] / row[names[1]]["records_per_s"]
        print(f"{workload.name:6} ratio {row['ratio']:.1f}x  (same rows: {sums[names[0]]})")
        results["workloads"][workload.name] = row
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
