# Ray read of many small files: tfrecord_lite.ray.read_tfrecords over a folder of 400 uncompressed
# files of 500 records each (an int64 and 8 floats a record), on a local Ray cluster of 2 CPUs.
#
#   .venvs/engines/bin/python benchmarks/ray_files.py [--files N] [--records N] [--rounds N] [--out FILE.json]
#
# Two plans take turns round by round (_rounds.py), a round being one materialize() of the folder: Ray's
# default request ("grouped": Ray asks for its read_op_min_num_blocks tasks, 200, and each reads a run
# of neighbouring files), and override_num_blocks = the number of files ("a task per file", what the
# reader did before it grouped files). Prints records/s (median and the lowest and highest round) and
# the ratio; checks that each plan's warm-up read gives every record once. Writes the same as JSON (default
# benchmarks/results/ray_files.json). Nothing here asserts a speed.
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from _rounds import compare, rounds, spread

import tfrecord_lite as tfr

WORK = os.path.join(HERE, ".work", "ray_files")
SPEC = {"id": tfr.FixedLenFeature([], "int64"), "x": tfr.FixedLenFeature([8], "float32")}


def make_folder(files: int, records: int) -> str:
    folder = os.path.join(WORK, f"{files}x{records}")
    if not os.path.isdir(folder):
        os.makedirs(folder + ".tmp", exist_ok=True)
        for f in range(files):
            with tfr.TFRecordWriter(os.path.join(folder + ".tmp", f"part-{f:05d}.tfrecord")) as writer:
                for i in range(records):
                    writer.write(tfr.encode_example({"id": [f * records + i], "x": [0.5] * 8}))
        os.replace(folder + ".tmp", folder)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "ray_files.json"))
    args = parser.parse_args()
    import ray

    from tfrecord_lite.ray import read_tfrecords

    folder = make_folder(args.files, args.records)
    total = args.files * args.records
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)

    def read(**options: Any) -> Any:
        return read_tfrecords(folder, features=SPEC, **options).materialize()

    plans = {"grouped": lambda: read(), "a task per file": lambda: read(override_num_blocks=args.files)}
    for plan in plans.values():  # the warm-up read of each, checked (the timed reads are not)
        ds = plan()
        ids = ds.sum("id")
        assert ds.count() == total and ids == total * (total - 1) // 2, (ds.count(), ids)
    times = rounds(plans, args.rounds, warmup=False)
    report: dict[str, Any] = {"files": args.files, "records": args.records, "machine": platform.platform()}
    for name, seconds in times.items():
        rates = spread([total / s for s in seconds])
        report[name] = rates
        print(f"{name:16} {rates['median']:>10,.0f} records/s (rounds {rates['low']:,.0f}–{rates['high']:,.0f})")
    ratio = compare(times["grouped"], times["a task per file"])
    print(f"grouped / a task per file {ratio['median']:.2f}× (rounds {ratio['low']:.2f}–{ratio['high']:.2f})")
    report["ratio"] = ratio
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    ray.shutdown()


if __name__ == "__main__":
    main()
