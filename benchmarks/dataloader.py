# DataLoader throughput: tfrecord_lite.torch with 0, 1 and 2 workers, beside the `tfrecord`
# package's TFRecordDataset (same file, batch size and workers) and, for decoding JPEGs,
# TensorFlow's tf.data with map(num_parallel_calls=AUTOTUNE), in one run.
#
#   python benchmarks/dataloader.py [--quick] [--rounds N] [--workers 0 1 2] [--epochs E]
#          [--workloads small images jpeg] [--lite-python P] [--tfrecord-python P] [--tf-python P]
#
# Workloads: "small" (200k Examples: int64 label, 8 float32, 12-byte string; batch 256) and
# "images" (4k Examples: 64 KiB bytes + 3 int64; batch 32) come from benchmarks/workloads.py (raw
# records: read, decode, batch); "jpeg" (1500 JPEG images, 256x256, quality 90, made here once;
# batch 32) is decoded and augmented: images.ImageTransform(random_crop=(224, 224),
# random_flip=True) -> uint8 CHW tensors, and labels (simplejpeg decodes when installed). Every
# (system, workload, workers) cell runs in its own interpreter: one DataLoader
# (persistent_workers=True when workers > 0) iterated for 1 + E epochs. "start-up" is the time to
# the first batch of the first epoch (workers started, files opened); "steady" is the median epoch
# time of the E epochs after the first, the number the table shows. The main process of a torch
# cell runs torch with one intra-op thread, as DataLoader workers do (else its OpenMP threads,
# spinning on 2 busy cores, made 0 workers 10x slower on the JPEG workload). Systems take turns,
# round after round (benchmarks/_rounds.py), and a cell reports the median of --rounds rounds with
# its spread. Systems:
#   lite-batched  IterableTFRecordDataset(batch_size=B): whole batches decoded by columns
#   lite-items    IterableTFRecordDataset + DataLoader(batch_size=B, collate_fn=ds.collate_fn)
#   lite-map      TFRecordDataset, shuffled: BatchSampler(RandomSampler) index lists, each batch
#                 read by random access (sorted by offset) and decoded by columns
#   tfrecord      tfrecord.torch.TFRecordDataset + DataLoader(batch_size=B), with its text index
#   lite-augment  IterableTFRecordDataset(record_type="raw") + DataLoader(collate_fn=ImageTransform(
#                 random_crop=, random_flip=).collate): each image written straight into the batch
#   tfrecord-augment  the `tfrecord` package's dataset, transform= the same ImageTransform
#   tf-data       tf.data.TFRecordDataset.map(parse, decode_jpeg, random_crop, random_flip,
#                 num_parallel_calls=AUTOTUNE).batch(B).prefetch(AUTOTUNE): TensorFlow's threads;
#                 decode_jpeg(dct_method="INTEGER_ACCURATE"): the work (and the pixels) of Pillow's and
#                 simplejpeg's decode, which ImageTransform does; TensorFlow's default ("") is libjpeg's
#                 fast integer DCT, a less exact and slightly cheaper decode
# Prints markdown tables and writes the JSON of every number (benchmarks/results/dataloader.json).
# Not a test: asserts nothing except that each epoch yields every record once.
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as R
import workloads as W
from _rounds import spread, turns

BATCH = {"small": 256, "images": 32, "jpeg": 32}
RAW_SYSTEMS = ("lite-batched", "lite-items", "lite-map", "tfrecord")
JPEG_SYSTEMS = ("lite-augment", "tfrecord-augment", "tf-data")
JPEG_COUNT, JPEG_SIZE, CROP = 1500, 256, 224


# --------------------------------------------------------------------------- the JPEG workload


def make_jpegs(path: str, count: int) -> None:
    """`count` JPEG Examples (256x256, quality 90; smooth gradients and shapes with some noise, so
    that they compress and decode like photos) under TensorFlow's image keys."""
    import numpy as np
    from PIL import Image

    import tfrecord_lite as tfr

    rng = np.random.default_rng(4)
    y, x = np.mgrid[0:JPEG_SIZE, 0:JPEG_SIZE].astype(np.float32) / JPEG_SIZE
    with tfr.TFRecordWriter(path + ".tmp") as w:
        for i in range(count):
            a, b, c = rng.uniform(0.5, 6, 3)
            base = np.stack([np.sin(a * x + c), np.cos(b * y - c), np.sin(a * x * y * b)], axis=-1)
            pixels = ((base + 1) * 110 + rng.normal(0, 8, base.shape)).clip(0, 255).astype(np.uint8)
            jpeg = io.BytesIO()
            Image.fromarray(pixels).save(jpeg, "JPEG", quality=90)
            w.write_example({"image/encoded": jpeg.getvalue(), "image/class/label": i % 10})
    os.replace(path + ".tmp", path)


def ensure_jpegs(quick: bool) -> dict[str, Any]:
    count = JPEG_COUNT // 10 if quick else JPEG_COUNT
    os.makedirs(R.WORK, exist_ok=True)
    path = os.path.join(R.WORK, f"jpeg-{count}.tfrecord")
    if not os.path.exists(path):
        R.log(f"generating jpeg ({count} JPEG Examples) -> {os.path.relpath(path, R.ROOT)}")
        make_jpegs(path, count)
    return {"name": "jpeg", "count": count, "path": path, "features": {}}


def _transform() -> Any:
    from tfrecord_lite.images import ImageTransform

    return ImageTransform(random_crop=(CROP, CROP), random_flip=True)


class _TfrecordPackageRecord:
    """The `tfrecord` package's dict (numpy arrays) as the Example fields ImageTransform reads."""

    def __init__(self) -> None:
        self.transform = _transform()

    def __call__(self, features: dict[str, Any]) -> Any:
        image = features["image/encoded"]
        fields = {
            "image/encoded": [image if isinstance(image, bytes) else image.tobytes()],
            "image/class/label": features["image/class/label"],
        }
        return self.transform(fields)


# --------------------------------------------------------------------------- one cell (child process)


def _lite_loader(system: str, path: str, features: dict[str, Any], workers: int, batch: int) -> Any:
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler

    import tfrecord_lite as tfr
    from tfrecord_lite.torch import IterableTFRecordDataset, TFRecordDataset

    kw: dict[str, Any] = {"num_workers": workers, "persistent_workers": workers > 0}
    spec = {k: tfr.FixedLenFeature(shape, dtype) for k, (dtype, shape) in features.items()}
    if system == "lite-batched":
        return DataLoader(IterableTFRecordDataset(path, features=spec, batch_size=batch), batch_size=None, **kw)
    if system == "lite-map":
        mapped = TFRecordDataset(path, features=spec)
        sampler = BatchSampler(RandomSampler(mapped), batch_size=batch, drop_last=False)
        return DataLoader(mapped, sampler=sampler, batch_size=None, **kw)
    if system == "lite-augment":  # undecoded records; each batch decoded into its tensor by the transform
        records = IterableTFRecordDataset(path, record_type="raw")
        return DataLoader(records, batch_size=batch, collate_fn=_transform().collate, **kw)
    ds = IterableTFRecordDataset(path, features=spec)
    return DataLoader(ds, batch_size=batch, collate_fn=ds.collate_fn, **kw)


def _tfrecord_loader(system: str, path: str, features: dict[str, Any], workers: int, batch: int) -> Any:
    from tfrecord.torch.dataset import TFRecordDataset
    from torch.utils.data import DataLoader

    index = path + ".idx" if workers > 0 else None  # without one, every worker reads every record
    if system == "tfrecord-augment":
        description = {"image/encoded": "byte", "image/class/label": "int"}
        ds = TFRecordDataset(path, index, description, transform=_TfrecordPackageRecord())
    else:
        description = {k: {"int64": "int", "float32": "float", "bytes": "byte"}[d] for k, (d, _) in features.items()}
        ds = TFRecordDataset(path, index, description)
    return DataLoader(ds, batch_size=batch, num_workers=workers, persistent_workers=workers > 0)


def _tf_data(path: str, batch: int) -> Any:
    import tensorflow as tf

    spec = {
        "image/encoded": tf.io.FixedLenFeature([], tf.string),
        "image/class/label": tf.io.FixedLenFeature([], tf.int64),
    }

    def parse(record: Any) -> Any:
        f = tf.io.parse_single_example(record, spec)
        image = tf.io.decode_jpeg(f["image/encoded"], channels=3, dct_method="INTEGER_ACCURATE")
        image = tf.image.random_flip_left_right(tf.image.random_crop(image, [CROP, CROP, 3]))
        return tf.transpose(image, [2, 0, 1]), f["image/class/label"]

    ds = tf.data.TFRecordDataset(path).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.batch(batch).prefetch(tf.data.AUTOTUNE)


def _size(batch: Any) -> int:
    if isinstance(batch, dict):
        return len(next(iter(batch.values())))
    return len(batch[-1])  # (images, labels)


def child(system: str, path: str, features: dict[str, Any], workers: int, batch: int, epochs: int, count: int) -> None:
    if system != "tf-data":  # as in DataLoader workers: no OpenMP threads contending with the workers
        import torch

        torch.set_num_threads(1)
    if system == "tf-data":
        loader = _tf_data(path, batch)
    elif system.startswith("tfrecord"):
        loader = _tfrecord_loader(system, path, features, workers, batch)
    else:
        loader = _lite_loader(system, path, features, workers, batch)
    seconds: list[float] = []
    startup = 0.0
    for epoch in range(epochs + 1):  # the first epoch starts the workers and warms the page cache
        start = time.perf_counter()
        n = 0
        for b in loader:
            if not n and not epoch:
                startup = time.perf_counter() - start
            n += _size(b)
        seconds.append(time.perf_counter() - start)
        if n != count:
            raise SystemExit(f"{system} yielded {n} records, the file has {count}")
    print(json.dumps({"startup": startup, "first": seconds[0], "steady": seconds[1:]}))


# --------------------------------------------------------------------------- driver


def run_cell(
    python: str, system: str, path: str, features: str, workers: int, batch: int, epochs: int, count: int
) -> Any:
    """{"startup", "first", "steady"} seconds of one cell in a fresh interpreter, None if it failed."""
    cmd = [python, __file__, "--child", system, path, features, str(workers), str(batch), str(epochs), str(count)]
    out = subprocess.run(cmd, env=R.ENV, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        R.log(f"{system} failed with {workers} workers on {path}:\n{out.stderr[-2000:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def measure(args: argparse.Namespace, pythons: dict[str, str], entry: dict[str, Any], systems: list[str]) -> list[Any]:
    """The rows of one workload: one per number of workers (tf-data: one row, its own threads)."""
    rows = []
    features = json.dumps(entry["features"])
    for workers in args.workers:
        present = [s for s in systems if s in pythons and (s != "tf-data" or workers == args.workers[0])]
        cells: dict[str, list[dict[str, Any]]] = {s: [] for s in present}
        loads = [loadavg()]
        for _, system in turns(present, args.rounds):
            python = pythons[system]
            got = run_cell(
                python, system, entry["path"], features, workers, BATCH[entry["name"]], args.epochs, entry["count"]
            )
            if got is not None:
                cells[system].append(got)
        loads.append(loadavg())
        row: dict[str, Any] = {"workload": entry["name"], "records": entry["count"], "workers": workers, "load": loads}
        for system, runs in cells.items():
            if not runs:
                continue
            steady = [statistics.median(r["steady"]) for r in runs]
            row[system] = {
                "rec_s": entry["count"] / statistics.median(steady),
                "steady_s": spread(steady),
                "startup_s": spread([r["startup"] for r in runs]),
                "first_epoch_s": spread([r["first"] for r in runs]),
            }
            R.log(f"{entry['name']:7s} workers={workers} {system:17s} {row[system]['rec_s']:>10,.0f} rec/s "
                  f"(start-up {row[system]['startup_s']['median']:.2f} s) load {loads[-1]}")  # fmt: skip
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]], systems: tuple[str, ...]) -> str:
    """Markdown: steady records/s per system (spread of the rounds), start-up, and the ratios to 0
    workers and to the `tfrecord` package with the same workers."""
    head = "| workload | workers | system | rec/s, steady (lowest..highest) | ÷ 0 workers | ÷ `tfrecord` | start-up s |"
    lines = [head, "|---|---:|---|---:|---:|---:|---:|"]
    zero = {(r["workload"], s): r[s]["rec_s"] for r in rows if r["workers"] == 0 for s in systems if s in r}
    for row in rows:
        for system in systems:
            cell = row.get(system)
            if not cell:
                continue
            wl = row["workload"]
            peer = "tfrecord-augment" if wl == "jpeg" else "tfrecord"
            steady = cell["steady_s"]
            low, high = row["records"] / steady["high"], row["records"] / steady["low"]
            base = zero.get((wl, system))
            ratio0 = f"{cell['rec_s'] / base:.2f}×" if base and row["workers"] else "–"
            other = row.get(peer)
            ratio_peer = (
                f"{cell['rec_s'] / other['rec_s']:.2f}×" if other and not system.startswith(("tf", "tfrecord")) else "–"
            )
            workers = "threads" if system == "tf-data" else str(row["workers"])
            lines.append(
                f"| {wl} | {workers} | {system} | {cell['rec_s']:,.0f} ({low:,.0f}..{high:,.0f}) | {ratio0} | "
                f"{ratio_peer} | {cell['startup_s']['median']:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="workloads at 1/10 size")
    parser.add_argument("--rounds", "--runs", dest="rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2, help="measured epochs after the first, per cell")
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--workloads", nargs="+", default=["small", "images", "jpeg"])
    parser.add_argument("--systems", nargs="+", default=list(RAW_SYSTEMS + JPEG_SYSTEMS))
    parser.add_argument("--lite-python", default=sys.executable)
    parser.add_argument("--tfrecord-python", default=sys.executable)
    parser.add_argument("--tf-python", default=os.path.join(R.ROOT, ".venvs", "tf", "bin", "python"))
    parser.add_argument("--out", default=os.path.join(R.RESULTS, "dataloader.json"))
    parser.add_argument("--child", nargs=7, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        system, path, features, workers, batch, epochs, count = args.child
        child(system, path, json.loads(features), int(workers), int(batch), int(epochs), int(count))
        return

    import tfrecord_lite as tfr

    pythons = {s: args.lite_python for s in ("lite-batched", "lite-items", "lite-map", "lite-augment")}
    if R.has_module(args.tfrecord_python, "tfrecord"):
        pythons["tfrecord"] = pythons["tfrecord-augment"] = args.tfrecord_python
    else:
        R.log(f"skipping tfrecord: not importable by {args.tfrecord_python}")
    if os.path.exists(args.tf_python) and R.has_module(args.tf_python, "tensorflow"):
        pythons["tf-data"] = args.tf_python
    pythons = {s: p for s, p in pythons.items() if s in args.systems}
    chosen = [wl for wl in (W.QUICK if args.quick else W.FULL) if wl.name in args.workloads]
    entries = [R.ensure_workload(wl, args.lite_python, R.ENV) for wl in chosen]
    if "jpeg" in args.workloads:
        entries.append(ensure_jpegs(args.quick))
    rows: list[dict[str, Any]] = []
    for entry in entries:
        path = entry["path"]
        if not os.path.exists(path + ".idx"):  # both systems read with their index
            tfr.write_text_index(path, destination=path + ".idx")
        tfr.write_index(path)
        systems = list(JPEG_SYSTEMS if entry["name"] == "jpeg" else RAW_SYSTEMS)
        rows.extend(measure(args, pythons, entry, systems))
    print(table(rows, RAW_SYSTEMS + JPEG_SYSTEMS))
    result = {"benchmark": "dataloader", "rounds": args.rounds, "epochs": args.epochs, "quick": args.quick}
    result |= {"machine": R.machine(), "results": rows}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
