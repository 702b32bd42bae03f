# One cell of benchmarks/dataloader.py: the workloads made there (the seed's raw images, JPEGs), the
# transforms users write, the DataLoader each system is read through, and the epochs a cell times.
#
# dataloader.py runs every cell in a fresh interpreter (`dataloader.py --child JSON`), which calls
# child() here: build one loader, iterate it for 1 + E epochs, print the times as one JSON line.
# The transforms are module-level functions, so that DataLoader workers can run them under any
# start method. Only numpy is imported at module level (the TensorFlow venv imports this too).
from __future__ import annotations

import hashlib
import io
import json
import os
import random
import time
from typing import Any

import numpy as np

JPEG_SIZE, CROP = 256, 224
SEED_SHAPE = (100, 100, 3)
STEADY_SECONDS, MAX_EPOCHS = 2.0, 30  # a cell's steady epochs last this long at least (short epochs: more of them)
LABEL_KEYS = ("label", "lable", "image/class/label")


# --------------------------------------------------------------------------- workloads made here


def make_jpegs(path: str, count: int) -> None:
    """`count` JPEG Examples (256x256, quality 90; smooth gradients and shapes with some noise, so
    that they compress and decode like photos) under TensorFlow's image keys."""
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


def make_seed(path: str, count: int) -> None:
    """`count` Examples as the seed writes them: a 100x100x3 uint8 image as its raw bytes
    (`image.tobytes()`) under "image", and an int64 under "lable" (the seed's spelling)."""
    import tfrecord_lite as tfr

    rng = np.random.default_rng(5)
    with tfr.TFRecordWriter(path + ".tmp") as w:
        for _ in range(count):
            image = rng.integers(0, 256, SEED_SHAPE, dtype=np.uint8)
            w.write_example({"image": image.tobytes(), "lable": int(rng.integers(0, 10))})
    os.replace(path + ".tmp", path)


# --------------------------------------------------------------------------- transforms users write


def seed_transform(features: dict[str, Any]) -> Any:
    """The seed's per-record transform, as the PyTorch tutorials write it: np.frombuffer -> reshape
    -> tensor, and the label as an int (the same function for our dict and the `tfrecord` package's,
    whose bytes are a uint8 array and whose int a 1-element array)."""
    import torch

    image = np.frombuffer(features["image"], dtype=np.uint8).reshape(SEED_SHAPE)
    return torch.tensor(image), features["lable"].item()


def pil_transform(features: dict[str, Any]) -> Any:
    """A user's augmentation written with Pillow: decode, a random 224x224 crop, a horizontal flip
    half the time, and a CHW uint8 tensor."""
    import torch
    from PIL import Image

    image = Image.open(io.BytesIO(features["image/encoded"])).convert("RGB")
    x, y = random.randint(0, image.width - CROP), random.randint(0, image.height - CROP)
    image = image.crop((x, y, x + CROP, y + CROP))
    if random.random() < 0.5:
        image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    return torch.from_numpy(np.array(image)).permute(2, 0, 1), features["image/class/label"].item()


def pil_crop_flip(image: Any) -> Any:
    """The same crop and flip as a user's Pillow augmentation of a decoded image (ImageTransform's
    `augment=`, as torchvision transforms are given)."""
    from PIL import Image

    x, y = random.randint(0, image.width - CROP), random.randint(0, image.height - CROP)
    image = image.crop((x, y, x + CROP, y + CROP))
    return image.transpose(Image.Transpose.FLIP_LEFT_RIGHT) if random.random() < 0.5 else image


def _image_transform(**options: Any) -> Any:
    """ImageTransform's own crop and flip (num_threads= given), or augment= a user's."""
    from tfrecord_lite.images import ImageTransform

    if "augment" in options:
        return ImageTransform(**options)
    return ImageTransform(random_crop=(CROP, CROP), random_flip=True, **options)


class _TfrecordPackageRecord:
    """The `tfrecord` package's dict (numpy arrays) as the Example fields ImageTransform reads."""

    def __init__(self) -> None:
        self.transform = _image_transform()

    def __call__(self, features: dict[str, Any]) -> Any:
        image = features["image/encoded"]
        fields = {
            "image/encoded": [image if isinstance(image, bytes) else image.tobytes()],
            "image/class/label": features["image/class/label"],
        }
        return self.transform(fields)


# --------------------------------------------------------------------------- loaders


def _lite_loader(cell: dict[str, Any]) -> Any:
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler

    import tfrecord_lite as tfr
    from tfrecord_lite.torch import IterableTFRecordDataset, TFRecordDataset

    system, path, batch, workers = cell["system"], cell["path"], cell["batch"], cell["workers"]
    kw: dict[str, Any] = {"num_workers": workers, "persistent_workers": workers > 0}
    threads = {"num_threads": cell["threads"]} if cell["threads"] != 1 else {}  # 1: the default, on any version
    spec = {k: tfr.FixedLenFeature(shape, dtype) for k, (dtype, shape) in cell["features"].items()}
    per_record = seed_transform if cell["workload"] == "seed" else None
    if system == "lite-batched":
        batches = IterableTFRecordDataset(path, features=spec, batch_size=batch, **threads)
        return DataLoader(batches, batch_size=None, **kw)
    if system == "lite-map":
        mapped = TFRecordDataset(path, features=spec, **threads)
        sampler = BatchSampler(RandomSampler(mapped), batch_size=batch, drop_last=False)
        return DataLoader(mapped, sampler=sampler, batch_size=None, **kw)
    if system == "lite-map-plain":  # the call users write: default collate, shuffle=True
        mapped = TFRecordDataset(path, features=spec, transform=per_record, **threads)
        return DataLoader(mapped, batch_size=batch, shuffle=True, **kw)
    if system == "lite-items-plain":
        items = IterableTFRecordDataset(path, features=spec, transform=per_record, **threads)
        return DataLoader(items, batch_size=batch, **kw)
    if system == "lite-raw":
        raw = {"image": tfr.RawFeature(SEED_SHAPE, "uint8"), "lable": tfr.FixedLenFeature([], "int64")}
        batches = IterableTFRecordDataset(path, features=raw, batch_size=batch, output="torch", **threads)
        return DataLoader(batches, batch_size=None, **kw)
    if system == "lite-augment":  # undecoded records; each batch decoded into its tensor by the transform,
        records = IterableTFRecordDataset(path, record_type="raw")  # on its threads (reading needs none)
        return DataLoader(records, batch_size=batch, collate_fn=_image_transform(**threads).collate, **kw)
    if system in ("lite-pil", "lite-pil-augment"):
        transform = pil_transform if system == "lite-pil" else _image_transform(augment=pil_crop_flip)
        items = IterableTFRecordDataset(path, features=spec, transform=transform, **threads)
        return DataLoader(items, batch_size=batch, **kw)
    ds = IterableTFRecordDataset(path, features=spec, **threads)
    return DataLoader(ds, batch_size=batch, collate_fn=ds.collate_fn, **kw)


def _tfrecord_loader(cell: dict[str, Any]) -> Any:
    from tfrecord.torch.dataset import TFRecordDataset
    from torch.utils.data import DataLoader

    path, workers = cell["path"], cell["workers"]
    index = path + ".idx" if workers > 0 else None  # without one, every worker reads every record
    kinds = {"int64": "int", "float32": "float", "bytes": "byte"}
    description = {k: kinds[dtype] for k, (dtype, _) in cell["features"].items()}
    if cell["system"] == "tfrecord-augment":
        ds = TFRecordDataset(path, index, description, transform=_TfrecordPackageRecord())
    elif cell["system"] == "tfrecord-plain":  # an IterableDataset: DataLoader cannot shuffle it
        ds = TFRecordDataset(path, index, description, transform=seed_transform)
    else:
        ds = TFRecordDataset(path, index, description)
    return DataLoader(ds, batch_size=cell["batch"], num_workers=workers, persistent_workers=workers > 0)


class _BareThreads:
    """The bound of a transform's threads: the Examples decoded beforehand (untimed), the transform
    mapped over them by a bare ThreadPoolExecutor (num_threads > 1) or plain map, batched by torch's
    default_collate; an iterable of batches like a DataLoader's."""

    def __init__(self, cell: dict[str, Any]) -> None:
        from concurrent.futures import ThreadPoolExecutor

        import tfrecord_lite as tfr

        spec = {k: tfr.FixedLenFeature(shape, dtype) for k, (dtype, shape) in cell["features"].items()}
        self.items = [tfr.decode_example(record, spec) for record in tfr.iter_records(cell["path"])]
        self.batch = cell["batch"]
        self.pool = ThreadPoolExecutor(cell["threads"]) if cell["threads"] > 1 else None

    def __iter__(self) -> Any:
        from torch.utils.data import default_collate

        mapped = self.pool.map(pil_transform, self.items) if self.pool else map(pil_transform, self.items)
        batch = []
        for item in mapped:
            batch.append(item)
            if len(batch) == self.batch:
                yield default_collate(batch)
                batch = []
        if batch:
            yield default_collate(batch)


def _tf_data(cell: dict[str, Any]) -> Any:
    import tensorflow as tf

    if cell["system"] == "tf-data-raw":
        raw_spec = {"image": tf.io.FixedLenFeature([], tf.string), "lable": tf.io.FixedLenFeature([], tf.int64)}

        def parse(record: Any) -> Any:
            f = tf.io.parse_single_example(record, raw_spec)
            return tf.reshape(tf.io.decode_raw(f["image"], tf.uint8), SEED_SHAPE), f["lable"]

    else:
        jpeg_spec = {
            "image/encoded": tf.io.FixedLenFeature([], tf.string),
            "image/class/label": tf.io.FixedLenFeature([], tf.int64),
        }

        def parse(record: Any) -> Any:
            f = tf.io.parse_single_example(record, jpeg_spec)
            image = tf.io.decode_jpeg(f["image/encoded"], channels=3, dct_method="INTEGER_ACCURATE")
            image = tf.image.random_flip_left_right(tf.image.random_crop(image, [CROP, CROP, 3]))
            return tf.transpose(image, [2, 0, 1]), f["image/class/label"]

    ds = tf.data.TFRecordDataset(cell["path"]).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.batch(cell["batch"]).prefetch(tf.data.AUTOTUNE)


# --------------------------------------------------------------------------- the epochs of one cell


def _labels(batch: Any) -> Any:
    if isinstance(batch, dict):
        return next((batch[k] for k in LABEL_KEYS if k in batch), next(iter(batch.values())))
    return batch[-1]  # (images, labels)


def _ints(labels: Any) -> bytes:
    values = labels.numpy() if hasattr(labels, "numpy") else labels
    return np.asarray(values, dtype=np.int64).reshape(-1).tobytes()


def child(cell: dict[str, Any]) -> None:
    """Print {"startup", "first", "steady", "order"}: seconds to the first batch, of the first epoch,
    of each epoch after it, and a digest of the labels in the order the first epoch gave them."""
    system = cell["system"]
    if system.startswith("tf-data"):
        loader = _tf_data(cell)
    else:  # as in DataLoader workers: no OpenMP threads contending with the workers
        import torch

        torch.set_num_threads(1)
        if system.startswith("bare"):
            loader = _BareThreads(cell)
        else:
            loader = _tfrecord_loader(cell) if system.startswith("tfrecord") else _lite_loader(cell)
    seconds: list[float] = []
    startup = 0.0
    order = hashlib.sha1()
    epoch = 0  # the first epoch starts the workers and warms the page cache; then `epochs`, or more
    while epoch <= cell["epochs"] or (sum(seconds[1:]) < STEADY_SECONDS and epoch <= MAX_EPOCHS):
        start = time.perf_counter()
        n = 0
        for b in loader:
            if not epoch:
                if not n:
                    startup = time.perf_counter() - start
                order.update(_ints(_labels(b)))
            n += len(_labels(b))
        seconds.append(time.perf_counter() - start)
        if n != cell["count"]:
            raise SystemExit(f"{system} yielded {n} records, the file has {cell['count']}")
        epoch += 1
    print(json.dumps({"startup": startup, "first": seconds[0], "steady": seconds[1:], "order": order.hexdigest()}))
