# The list path against TensorFlow in wall AND CPU time: decode_examples on lists of 1024
# records from iter_records (one thread) against TFRecordDataset.batch(1024).map(parse_example),
# which reads and parses on threads of its own, so that its wall time falls when a second core is
# free while its CPU time does not. One pass of each system per round, in turns, each in its own
# interpreter (the two protobuf worlds stay apart); µs per record, median (lowest..highest).
#
#   .venvs/bench/bin/python benchmarks/list_cpu.py --tf-python .venvs/tf/bin/python [--rounds N]
from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".work")
BATCH = 1024


def _lite_pass(wl: W.Workload, path: str) -> None:
    import tfrecord_lite as tfr

    spec = {key: tfr.FixedLenFeature(shape, dtype) for key, (dtype, shape) in wl.features.items()}
    records = tfr.iter_records(path)
    while batch := list(itertools.islice(records, BATCH)):
        tfr.decode_examples(batch, spec)


def _tf_pass_maker(wl: W.Workload, path: str) -> Any:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    kinds = {"int64": tf.int64, "float32": tf.float32, "bytes": tf.string}
    spec = {key: tf.io.FixedLenFeature(list(shape), kinds[d]) for key, (d, shape) in wl.features.items()}
    batches = tf.data.TFRecordDataset(path).batch(BATCH).map(lambda x: tf.io.parse_example(x, spec))

    def run() -> None:
        for _ in batches:
            pass

    return run


def worker(system: str, name: str) -> None:
    """Serve passes on stdin lines: one pass per line, its (wall, CPU) seconds as JSON."""
    wl = next(w for w in W.FULL if w.name == name)
    path = os.path.join(WORK, f"{wl.name}-{wl.count}.tfrecord")
    run = _tf_pass_maker(wl, path) if system == "tf" else lambda: _lite_pass(wl, path)
    run()  # warm-up
    print("ready", flush=True)
    for _ in sys.stdin:
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tf-python", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=[w.name for w in W.FULL], default=["dense", "images"])
    parser.add_argument("--worker", nargs=2, metavar=("SYSTEM", "WORKLOAD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(*args.worker)
    print("| workload | system | wall µs/record | CPU µs/record |\n|---|---|---:|---:|")
    for wl in (w for w in W.FULL if w.name in args.only):
        procs = {
            system: subprocess.Popen(
                [python, os.path.abspath(__file__), "--tf-python", args.tf_python, "--worker", system, wl.name],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for system, python in (("tfrecord_lite", sys.executable), ("tf", args.tf_python))
        }
        for proc in procs.values():
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        times: dict[str, list[list[float]]] = {system: [] for system in procs}
        for r in range(args.rounds):
            for system in list(procs)[r % 2 :] + list(procs)[: r % 2]:
                proc = procs[system]
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write("\n")
                proc.stdin.flush()
                times[system].append(json.loads(proc.stdout.readline()))
        for system, proc in procs.items():
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
            walls = [w / wl.count * 1e6 for w, _ in times[system]]
            cpus = [c / wl.count * 1e6 for _, c in times[system]]
            print(
                f"| {wl.name} | {system} | {statistics.median(walls):.2f} ({min(walls):.2f}..{max(walls):.2f}) | "
                f"{statistics.median(cpus):.2f} ({min(cpus):.2f}..{max(cpus):.2f}) |",
                flush=True,
            )
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
