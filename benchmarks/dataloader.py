# DataLoader throughput: tfrecord_lite.torch against the `tfrecord` package's
# TFRecordDataset, same file, same batch size, same number of workers, in one run.
#
#   python benchmarks/dataloader.py [--quick] [--rounds N] [--workers 0 1 2]
#                                   [--tfrecord-python /work/venv-bench/bin/python]
#
# Workloads "small" (200k Examples: int64 label, 8 float32, 12-byte string) and
# "images" (4k Examples: 64 KiB bytes + 3 int64) come from benchmarks/workloads.py
# and are generated once by run.py's ensure_workload into benchmarks/.work/. Every
# (system, workload, workers) cell runs in its own subprocess under the interpreter
# where that system is installed; a cell is one full pass over the file through a
# fresh DataLoader (worker start-up included, as a user pays it every epoch),
# measured after a warm-up pass; the systems take turns, round after round
# (benchmarks/_rounds.py), and each cell reports the median of --rounds rounds (the
# JSON also has each cell's spread: its lowest and highest round). The `tfrecord` package reads with its
# text index when workers > 0 (without one every worker reads the whole file and
# each record comes out num_workers times); tfrecord_lite with its index sidecar
# (as ShardedWriter writes it), which lets it read through the memory map. Systems:
#   lite-batched  IterableTFRecordDataset(batch_size=B): whole batches decoded by columns
#   lite-items    IterableTFRecordDataset + DataLoader(batch_size=B, collate_fn=collate)
#   lite-map      TFRecordDataset, shuffled: BatchSampler(RandomSampler) index lists, each
#                 batch read by random access and decoded by columns (a harder task: random order)
#   tfrecord      tfrecord.torch.TFRecordDataset + DataLoader(batch_size=B)
# Prints a markdown table and the JSON of every number. Not a test: asserts nothing
# except that each pass yielded every record once.
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as R
import workloads as W
from _rounds import spread, turns

BATCH = {"small": 256, "images": 32}
SYSTEMS = ("lite-batched", "lite-items", "lite-map", "tfrecord")


# --------------------------------------------------------------------------- one cell (child process)


def _lite_loader(system: str, path: str, features: dict[str, Any], workers: int, batch: int) -> Any:
    from torch.utils.data import DataLoader

    import tfrecord_lite as tfr
    from tfrecord_lite.torch import IterableTFRecordDataset, collate

    spec = {k: tfr.FixedLenFeature(shape, dtype) for k, (dtype, shape) in features.items()}
    if system == "lite-batched":
        ds = IterableTFRecordDataset(path, spec, batch_size=batch)
        return DataLoader(ds, batch_size=None, num_workers=workers)
    if system == "lite-map":
        from torch.utils.data import BatchSampler, RandomSampler

        from tfrecord_lite.torch import TFRecordDataset

        mapped = TFRecordDataset(path, spec)
        sampler = BatchSampler(RandomSampler(mapped), batch_size=batch, drop_last=False)
        return DataLoader(mapped, sampler=sampler, batch_size=None, num_workers=workers)
    return DataLoader(IterableTFRecordDataset(path, spec), batch_size=batch, num_workers=workers, collate_fn=collate)


def _tfrecord_loader(path: str, features: dict[str, Any], workers: int, batch: int) -> Any:
    from tfrecord.torch.dataset import TFRecordDataset
    from torch.utils.data import DataLoader

    description = {k: {"int64": "int", "float32": "float", "bytes": "byte"}[d] for k, (d, _) in features.items()}
    index = path + ".idx" if workers > 0 else None
    return DataLoader(TFRecordDataset(path, index, description), batch_size=batch, num_workers=workers)


def child(system: str, path: str, features: dict[str, Any], workers: int, batch: int, runs: int, count: int) -> None:
    first = next(iter(features))
    seconds: list[float] = []
    for run in range(runs + 1):  # the first pass warms the page cache and imports
        loader = (
            _tfrecord_loader(path, features, workers, batch)
            if system == "tfrecord"
            else _lite_loader(system, path, features, workers, batch)
        )
        start = time.perf_counter()
        n = sum(len(b[first]) for b in loader)
        elapsed = time.perf_counter() - start
        if n != count:
            raise SystemExit(f"{system} yielded {n} records, the file has {count}")
        if run:
            seconds.append(elapsed)
    print(json.dumps({"seconds": seconds}))


# --------------------------------------------------------------------------- driver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="workloads at 1/10 size")
    parser.add_argument("--rounds", "--runs", dest="rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--workloads", nargs="+", default=["small", "images"])
    parser.add_argument("--lite-python", default=sys.executable)
    parser.add_argument("--tfrecord-python", default="/work/venv-bench/bin/python")
    parser.add_argument("--child", nargs=7, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        system, path, features, workers, batch, runs, count = args.child
        child(system, path, json.loads(features), int(workers), int(batch), int(runs), int(count))
        return

    import tfrecord_lite as tfr

    pythons = {system: args.lite_python for system in SYSTEMS}
    pythons["tfrecord"] = args.tfrecord_python
    if not R.has_module(args.tfrecord_python, "tfrecord"):
        R.log(f"skipping tfrecord: not importable by {args.tfrecord_python}")
        del pythons["tfrecord"]
    results: list[dict[str, Any]] = []
    for wl in W.QUICK if args.quick else W.FULL:
        if wl.name not in args.workloads:
            continue
        entry = R.ensure_workload(wl, args.lite_python)
        path = entry["path"]
        if not os.path.exists(path + ".idx"):  # both systems read with their index
            tfr.write_text_index(path, path + ".idx")
        tfr.write_index(path)
        features = json.dumps(entry["features"])
        for workers in args.workers:
            row: dict[str, Any] = {
                "workload": wl.name,
                "records": wl.count,
                "workers": workers,
                "batch": BATCH[wl.name],
            }
            seconds: dict[str, list[float]] = {system: [] for system in pythons}
            for _, system in turns(list(pythons), args.rounds):  # so that load drift hits all alike
                secs = run_cell(pythons[system], system, path, features, workers, BATCH[wl.name], wl.count)
                if secs is not None:
                    seconds[system].append(secs)
            row["seconds"] = {system: spread(secs) for system, secs in seconds.items() if secs}
            for system in pythons:  # None where every run of it failed
                cell = row["seconds"].get(system)
                row[system] = wl.count / cell["median"] if cell else None
                if cell:
                    R.log(f"{wl.name:7s} workers={workers} {system:13s} {row[system]:>12,.0f} records/s")
            results.append(row)
    print(table(results))
    print(
        json.dumps(
            {
                "benchmark": "dataloader",
                "runs": args.rounds,
                "rounds": args.rounds,
                "quick": args.quick,
                "machine": R.machine(),
                "results": results,
            },
            indent=1,
        )
    )


def run_cell(python: str, system: str, path: str, features: str, workers: int, batch: int, count: int) -> float | None:
    """Seconds of one measured pass (after a warm-up pass) in a fresh interpreter, None if it failed."""
    cmd = [python, __file__, "--child", system, path, features, str(workers), str(batch), "1", str(count)]
    out = subprocess.run(cmd, env=R.ENV, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        R.log(f"{system} failed with {workers} workers on {path}:\n{out.stderr[-2000:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"][0]


def _ratio(row: dict[str, Any], system: str) -> float | None:
    if row.get(system) and row.get("tfrecord"):
        return row[system] / row["tfrecord"]
    return None


def table(results: list[dict[str, Any]]) -> str:
    """Markdown: records/s per system and the ratios to the `tfrecord` package."""
    lines = [
        (
            "| workload | workers | batch | lite batched (rec/s) | lite per-item (rec/s) | lite map, shuffled (rec/s) "
            "| `tfrecord` 1.14 (rec/s) | batched / tfrecord | per-item / tfrecord | map / tfrecord |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results:
        cells = [f"{row[s]:,.0f}" if row.get(s) else "-" for s in SYSTEMS]
        ratios = [f"{r:.2f}x" if r else "-" for r in (_ratio(row, s) for s in SYSTEMS[:3])]
        lines.append(f"| {row['workload']} | {row['workers']} | {row['batch']} | " + " | ".join(cells + ratios) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
