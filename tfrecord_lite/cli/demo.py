"""The one-command demo: `python -m tfrecord_lite.cli.demo` (or `python3 tasks.py demo`).

It runs the job this library exists for on a small real image set that ships
inside scikit-learn (the 8x8 handwritten digits, no network needed): image
files in class folders -> sharded TFRecords of raw pixels with a label map ->
verify and inspect (with the functions behind `tfrecord-lite verify / schema /
head`) -> a PyTorch DataLoader over the shards (tfrecord_lite.torch, reading the
pixels with a RawFeature) feeding a small CNN for a few epochs, printing
accuracy and read throughput. Every step is a
public API call, so the file doubles as an end-to-end example.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from tfrecord_lite import images
from tfrecord_lite._datasets.schema import collect_schema, decode_record
from tfrecord_lite._example.raw import RawFeature
from tfrecord_lite._example.spec import FixedLenFeature
from tfrecord_lite._records.reader import iter_records
from tfrecord_lite._records.verify import verify_file
from tfrecord_lite.cli.inspect import format_schema
from tfrecord_lite.cli.output import format_report, render_record

MARKER = ".tfrecord-lite-demo"  # only a folder holding this file is ever cleared by the demo


def _step(n: int, text: str) -> None:
    print(f"\n[{n}/5] {text}", flush=True)


def _prepare(out: str) -> None:
    """Create `out`, clearing a previous demo run there (never a folder the demo did not make)."""
    if os.path.isdir(out) and os.listdir(out):
        if not os.path.exists(os.path.join(out, MARKER)):
            raise SystemExit(f"demo: {out} exists and is not a demo folder; choose another with --out")
        shutil.rmtree(out)
    os.makedirs(out)
    open(os.path.join(out, MARKER), "w").close()


def write_digit_images(folder: str, limit: int | None = None) -> int:
    """scikit-learn's digits as 8x8 grayscale PNG files in one folder per class; returns the count."""
    from PIL import Image
    from sklearn.datasets import load_digits

    digits = load_digits()
    pixels = np.clip(digits.images * 16, 0, 255).astype(np.uint8)  # 0..16 -> 0..255
    n = len(pixels) if limit is None else min(limit, len(pixels))
    for i in range(n):
        cls = os.path.join(folder, str(int(digits.target[i])))
        os.makedirs(cls, exist_ok=True)
        Image.fromarray(pixels[i], mode="L").save(os.path.join(cls, f"digit-{i:04d}.png"))
    return n


def _model() -> Any:
    from torch import nn

    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10),
    )  # fmt: skip


def _accuracy(model: Any, loader: Any) -> float:
    import torch

    model.eval()
    right = total = 0
    with torch.no_grad():
        for x, y in loader:
            right += int((model(x).argmax(1) == y).sum())
            total += len(y)
    model.train()
    return right / max(total, 1)


def train(
    shards: list[str], pixels: RawFeature, *, epochs: int, batch_size: int, workers: int, seed: int
) -> dict[str, Any]:
    """Train a small CNN from the shards through tfrecord_lite.torch (the images read as `pixels`);
    returns accuracy and throughput."""
    import torch
    from torch.utils.data import DataLoader, random_split

    from tfrecord_lite.torch import TFRecordDataset

    torch.manual_seed(seed)
    torch.set_num_threads(1)  # the model is tiny: more threads only add overhead next to the workers
    features = {"image/encoded": pixels, "image/class/label": FixedLenFeature([], "int64")}
    dataset = TFRecordDataset(shards, features=features, transform=images.ImageTransform(scale=True))
    n_val = max(1, len(dataset) // 10)
    train_set, val_set = random_split(
        dataset, [len(dataset) - n_val, n_val], generator=torch.Generator().manual_seed(seed)
    )
    options: dict[str, Any] = {"num_workers": workers, "persistent_workers": workers > 0}
    train_loader = DataLoader(
        train_set, batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(seed), **options
    )
    val_loader = DataLoader(val_set, batch_size=256, **options)
    print(
        f"      {len(train_set)} training and {len(val_set)} validation images, "
        f"batch {batch_size}, {workers} DataLoader workers"
    )

    start = time.perf_counter()
    seen = sum(len(y) for _, y in train_loader)  # one pass without training: the read + decode rate
    read_rate = seen / (time.perf_counter() - start)
    print(f"      read throughput: {read_rate:,.0f} images/s (records read, pixels as arrays, batched)")

    model = _model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = torch.nn.CrossEntropyLoss()
    val_acc = 0.0
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        total_loss = count = 0.0
        for x, y in train_loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            total_loss += loss.item() * len(y)
            count += len(y)
        seconds = time.perf_counter() - start
        val_acc = _accuracy(model, val_loader)
        print(f"      epoch {epoch}/{epochs}: loss {total_loss / max(count, 1):.3f}, validation accuracy "
              f"{100 * val_acc:.1f}%, {count / seconds:,.0f} images/s while training")  # fmt: skip
    return {"train": len(train_set), "val": len(val_set), "val_accuracy": val_acc, "read_rate": read_rate, "seen": seen}


def run(
    out: str,
    *,
    limit: int | None = None,
    epochs: int = 5,
    shards: int = 4,
    batch_size: int = 64,
    workers: int = 2,
    seed: int = 0,
) -> dict[str, Any]:
    """The whole demo; returns what it measured (used by the tests)."""
    t0 = time.perf_counter()
    _prepare(out)
    folder, prefix = os.path.join(out, "images"), os.path.join(out, "shards", "digits")
    print("tfrecord_lite demo: scikit-learn's 8x8 handwritten digits -> TFRecord shards -> PyTorch")

    _step(1, "image files in class folders")
    n = write_digit_images(folder, limit)
    print(f"      wrote {n} PNG files to {folder}/<digit>/digit-NNNN.png")

    _step(
        2,
        f"pack into shards + label map   (tfrecord-lite pack-images {folder} {prefix} --shards {shards} --format raw)",
    )
    start = time.perf_counter()
    packed = images.pack_images(folder, prefix=prefix, num_shards=shards, seed=seed, format="raw")
    assert packed.raw_feature is not None  # the digits are all 8x8 grayscale
    seconds = time.perf_counter() - start
    size = sum(os.path.getsize(p) for p in packed.paths)
    print(f"      {packed.written} images in {len(packed.paths)} shards ({size / 1024:.0f} KiB) in {seconds:.2f} s: "
          f"{os.path.basename(packed.paths[0])} ...")  # fmt: skip
    print(
        f"      label map {packed.label_map_path}: {len(packed.label_map)} classes, "
        + ", ".join(f"{k}->{v}" for k, v in list(packed.label_map.items())[:4])
        + ", ..."
    )

    _step(3, f"verify and inspect   (tfrecord-lite verify / schema / head {os.path.dirname(prefix)})")
    reports = [verify_file(p) for p in packed.paths]
    for path, report in zip(packed.paths, reports, strict=True):
        print("      " + format_report(path, report).replace("\n", "\n      "))
    if not all(r.ok for r in reports):
        raise SystemExit("demo: verification failed")
    records = (r for p in packed.paths for r in iter_records(p))
    print("      " + format_schema(collect_schema(records, limit=None)).replace("\n", "\n      "))
    first = next(iter(iter_records(packed.paths[0])))
    print("      " + render_record(decode_record(first), f"{packed.paths[0]} #0").replace("\n", "\n      "))
    pixels = images.decode_image(first, mode="L")
    print(
        f"      decoded back: HWC uint8 array of shape {pixels.shape}, label {images.parse_image_record(first).label}; "
        f"read as tfr.{packed.raw_feature!r}"
    )

    _step(4, f"read back through a PyTorch DataLoader while training a small CNN for {epochs} epochs")
    result = train(packed.paths, packed.raw_feature, epochs=epochs, batch_size=batch_size, workers=workers, seed=seed)

    _step(5, "done")
    print(f"      validation accuracy {100 * result['val_accuracy']:.1f}% after {epochs} epochs; "
          f"read throughput {result['read_rate']:,.0f} images/s; total {time.perf_counter() - t0:.1f} s")  # fmt: skip
    print(f"      the files are in {out}; try: tfrecord-lite head -n 1 {os.path.dirname(prefix)}")
    result.update(images=n, shards=packed.paths, label_map=packed.label_map)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Command line of the demo."""
    parser = argparse.ArgumentParser(
        prog="python -m tfrecord_lite.cli.demo",
        description="Image files -> TFRecord shards -> PyTorch training, on scikit-learn's digits.",
    )
    parser.add_argument(
        "--out", default="demo-output", help="working folder (default ./demo-output; cleared on each run)"
    )
    parser.add_argument("--limit", type=int, default=None, help="use only the first N of the 1797 images")
    parser.add_argument("--epochs", type=int, default=5, help="training epochs (default 5)")
    parser.add_argument("--shards", type=int, default=4, help="number of shards (default 4)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("limit", "epochs", "shards", "batch_size"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    try:
        import sklearn  # noqa: F401
        import torch  # noqa: F401
        from PIL import Image  # noqa: F401
    except ImportError as err:
        print(
            f"demo: needs torch, Pillow and scikit-learn ({err.name} is missing): "
            "pip install 'tfrlite[torch,images]' scikit-learn, or run `python3 tasks.py demo`",
            file=sys.stderr,
        )
        return 2
    run(
        args.out,
        limit=args.limit,
        epochs=args.epochs,
        shards=args.shards,
        batch_size=args.batch_size,
        workers=args.workers,
        seed=args.seed,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
