# The DataLoader calls users write, with 0 and 2 workers: torch's default collation, a per-record
# transform, and the bound that torch's own per-batch cost sets (docs/torch.md, "Choosing num_workers").
#
#   python benchmarks/plain_calls.py [--rounds N] [--epochs E] [--cpu] [--cells seed-map:0 seed-map:2 ...]
#
# Workloads: "seed" (6,000 Examples: 100x100x3 uint8 pixels stored raw, image.tobytes(), under "image",
# and an int64 "lable", as the seed dataset spells it), made here once; "images" (benchmarks/workloads.py:
# 4k Examples of 64 KiB bytes + 3 int64). Systems (cell = system:workers):
#   seed-map      DataLoader(TFRecordDataset(p, features=spec, transform=t), batch_size=32, shuffle=True)
#   seed-iter     DataLoader(IterableTFRecordDataset(p, features=spec, transform=t), batch_size=32)
#   seed-tfr      the `tfrecord` package's TFRecordDataset (its index with workers), the same transform
#   trivial       a Dataset of precomputed (100x100x3 uint8 tensor, int) items, the seed-map call: torch's bound
#   img-map       DataLoader(TFRecordDataset(p, features=spec), batch_size=32, shuffle=True)
#   img-batched   IterableTFRecordDataset(p, features=spec, batch_size=32), DataLoader(batch_size=None)
# t is the tutorials' transform: torch.from_numpy(np.frombuffer(ex["image"], np.uint8).reshape(100, 100, 3)
# .copy()), ex["lable"]. Every cell runs in a fresh interpreter, 1 + E epochs, with persistent workers;
# records/s of the epochs after the first (median), or with --cpu the main process's CPU time per batch
# (time.process_time). Cells take turns round after round; a cell prints its median and spread.
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as R
import workloads as W
from _rounds import spread, turns

SEED_COUNT, SIDE, BATCH = 6000, 100, 32
CELLS = ["seed-map:0", "seed-map:2", "seed-iter:0", "seed-iter:2", "seed-tfr:0", "seed-tfr:2", "trivial:0"]
CELLS += ["trivial:2", "img-map:0", "img-map:2", "img-batched:0", "img-batched:2"]


def make_seed(path: str) -> None:
    import tfrecord_lite as tfr

    rng = np.random.default_rng(0)
    with tfr.TFRecordWriter(path + ".tmp") as w:
        for i in range(SEED_COUNT):
            w.write_example({"image": rng.integers(0, 256, (SIDE, SIDE, 3), np.uint8).tobytes(), "lable": i})
    os.replace(path + ".tmp", path)


def to_tensor(ex: dict[str, Any]) -> Any:
    import torch

    label = ex["lable"] if np.ndim(ex["lable"]) == 0 else int(ex["lable"][0])  # the package: an array of one
    return torch.from_numpy(np.frombuffer(ex["image"], np.uint8).reshape(SIDE, SIDE, 3).copy()), label


def loader(system: str, workers: int, seed: str, images: str) -> tuple[Any, int]:
    import torch
    from torch.utils.data import DataLoader, Dataset

    import tfrecord_lite as tfr
    from tfrecord_lite.torch import IterableTFRecordDataset, TFRecordDataset

    kw: dict[str, Any] = {"num_workers": workers, "persistent_workers": workers > 0}
    spec = {"image": tfr.FixedLenFeature([], "bytes"), "lable": tfr.FixedLenFeature([], "int64")}
    ispec = {k: tfr.FixedLenFeature(shape, d) for k, (d, shape) in W.FULL[1].features.items()}
    if system == "seed-map":
        return DataLoader(TFRecordDataset(seed, features=spec, transform=to_tensor), BATCH, shuffle=True, **kw), 0
    if system == "seed-iter":
        return DataLoader(IterableTFRecordDataset(seed, features=spec, transform=to_tensor), BATCH, **kw), 0
    if system == "seed-tfr":
        from tfrecord.torch.dataset import TFRecordDataset as Package

        ds = Package(seed, seed + ".idx" if workers else None, {"image": "byte", "lable": "int"}, transform=to_tensor)
        return DataLoader(ds, BATCH, **kw), 0
    if system == "trivial":
        pixels = [torch.zeros(SIDE, SIDE, 3, dtype=torch.uint8) for _ in range(64)]

        class Precomputed(Dataset[Any]):
            def __len__(self) -> int:
                return SEED_COUNT

            def __getitem__(self, i: int) -> Any:
                return pixels[i % 64], i

        return DataLoader(Precomputed(), BATCH, shuffle=True, **kw), 0
    if system == "img-map":
        return DataLoader(TFRecordDataset(images, features=ispec), BATCH, shuffle=True, **kw), 1
    if system == "img-batched":
        ds = IterableTFRecordDataset(images, features=ispec, batch_size=BATCH)
        return DataLoader(ds, batch_size=None, **kw), 1
    raise SystemExit(f"unknown system {system!r}")


def child(system: str, workers: int, epochs: int, cpu: bool, seed: str, images: str) -> None:
    import torch

    torch.set_num_threads(1)  # as in DataLoader workers
    data, which = loader(system, workers, seed, images)
    count = (SEED_COUNT, W.FULL[1].count)[which]
    walls, cpus = [], []
    for _ in range(epochs + 1):
        wall, used, n = time.perf_counter(), time.process_time(), 0
        for batch in data:
            n += len(batch["label"] if isinstance(batch, dict) and "label" in batch else batch[-1])
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - used)
        if n != count:
            raise SystemExit(f"{system} yielded {n} records, the file has {count}")
    if cpu:
        print(json.dumps(statistics.median(cpus[1:]) / count * BATCH * 1e3))  # ms per batch
    else:
        print(json.dumps(count / statistics.median(walls[1:])))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--cpu", action="store_true", help="main-process CPU ms per batch instead of records/s")
    parser.add_argument("--cells", nargs="*", default=CELLS)
    parser.add_argument("--child", nargs=6)
    args = parser.parse_args()
    if args.child:
        system, workers, epochs, cpu, seed, images = args.child
        child(system, int(workers), int(epochs), cpu == "1", seed, images)
        return
    os.makedirs(R.WORK, exist_ok=True)
    seed = os.path.join(R.WORK, f"seed-{SEED_COUNT}.tfrecord")
    if not os.path.exists(seed):
        make_seed(seed)
    images = R.ensure_workload(W.FULL[1], sys.executable, R.ENV)["path"]
    for path in (seed, images):
        if not os.path.exists(path + ".idx"):
            import tfrecord_lite as tfr

            tfr.write_text_index(path, destination=path + ".idx")  # the `tfrecord` package's index
    results: dict[str, list[float]] = {cell: [] for cell in args.cells}
    for _round, cell in turns(args.cells, args.rounds):
        system, workers = cell.split(":")
        cmd = [sys.executable, __file__, "--child", system, workers, str(args.epochs), str(int(args.cpu)), seed, images]
        out = subprocess.run(cmd, env=R.ENV, capture_output=True, text=True, check=False)
        if out.returncode:
            R.log(f"{cell} failed:\n{out.stderr[-2000:]}")
            continue
        results[cell].append(json.loads(out.stdout.strip().splitlines()[-1]))
    unit = "ms CPU per batch, main process" if args.cpu else "records/s"
    for cell, values in results.items():
        if values:
            s = spread(values)
            print(f"{cell:16s} {s['median']:10.2f} ({s['low']:.2f}..{s['high']:.2f}) {unit}, {len(values)} rounds")


if __name__ == "__main__":
    main()
