# The benchmark workloads, defined once for every system. Values come from
# numpy's PCG64 with fixed seeds, so each run (and each system, in its own
# interpreter) sees exactly the same data. Only numpy is imported here: the
# peers' workers (the `tfrecord` package, TensorFlow) import this module too.
from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterator
from typing import Any

import numpy as np

# name -> (dtype, shape): every feature is fixed-length, so the same spec reads
# it as tf.io.FixedLenFeature, tfr.FixedLenFeature and a `tfrecord` description.
FeatureTable = dict[str, tuple[str, tuple[int, ...]]]


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    count: int
    seed: int
    features: FeatureTable
    description: str

    def columns(self) -> dict[str, Any]:
        """The whole workload as arrays, one row per Example (bytes features: a list of bytes)."""
        rng = np.random.default_rng(self.seed)
        out: dict[str, Any] = {}
        for key, (dtype, shape) in self.features.items():
            if dtype == "int64":
                out[key] = rng.integers(0, _INT_RANGE[key], size=(self.count, *shape), dtype=np.int64)
            elif dtype == "float32":
                out[key] = rng.standard_normal((self.count, *shape), dtype=np.float32)
            else:
                size = _BYTES_SIZE[key]
                out[key] = [rng.bytes(size) for _ in range(self.count)]
        return out

    def rows(self) -> Iterator[dict[str, Any]]:
        """One feature dict per Example: a Python int / bytes for scalars, 1-D arrays otherwise."""
        cols = self.columns()
        for i in range(self.count):
            row: dict[str, Any] = {}
            for key, (dtype, shape) in self.features.items():
                value = cols[key][i]
                row[key] = int(value) if dtype == "int64" and shape == () else value
            yield row


# Value ranges: small labels (1-2 byte varints), image sizes, and ids spread up
# to 2^40 (1-6 byte varints) so that int64 decoding meets varints of every length.
_INT_RANGE = {"label": 1000, "height": 4096, "width": 4096, "ids": 1 << 40}
_BYTES_SIZE = {"name": 12, "image": 64 * 1024}

_SMALL: FeatureTable = {"label": ("int64", ()), "floats": ("float32", (8,)), "name": ("bytes", ())}
_IMAGES: FeatureTable = {
    "image": ("bytes", ()),
    "height": ("int64", ()),
    "width": ("int64", ()),
    "label": ("int64", ()),
}
_DENSE: FeatureTable = {"x": ("float32", (1024,)), "ids": ("int64", (64,))}

FULL: list[Workload] = [
    Workload("small", 200_000, 1, _SMALL, "200k Examples: int64 label, 8 float32, 12-byte string"),
    Workload("images", 4_000, 2, _IMAGES, "4k Examples: 64 KiB image bytes, 3 int64"),
    Workload("dense", 20_000, 3, _DENSE, "20k Examples: 1024 float32, 64 int64"),
]
QUICK: list[Workload] = [dataclasses.replace(w, name=w.name, count=w.count // 10) for w in FULL]


def tfrecord_description(workload: Workload) -> dict[str, str]:
    """The `tfrecord` package's description dict for a workload."""
    return {key: {"int64": "int", "float32": "float", "bytes": "byte"}[d] for key, (d, _) in workload.features.items()}


def concatenated(source: str, target_bytes: int, path: str) -> str:
    """`path`: a file of whole copies of `source` (records concatenate), at least `target_bytes`
    long; made once, and again only when its size is not what the copies add up to."""
    size = os.path.getsize(source)
    copies = max(1, -(-target_bytes // size))
    if not (os.path.exists(path) and os.path.getsize(path) == copies * size):
        with open(path + ".tmp", "wb") as out:
            for _ in range(copies):
                with open(source, "rb") as f:
                    shutil.copyfileobj(f, out, 16 << 20)
        os.replace(path + ".tmp", path)
    return path


def sequence_rows(count: int, seed: int = 4) -> list[tuple[dict[str, Any], dict[str, list[Any]]]]:
    """SequenceExamples as (context, feature_lists) values: a user id, a 12-byte name and 4 float32 of
    context; 10 to 50 steps each of a 16-float32 embedding and an item id, and 0 to 3 tags per step."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        steps = int(rng.integers(10, 51))
        context = {"user": int(rng.integers(0, 1 << 30)), "name": rng.bytes(12), "scores": rng.random(4, np.float32)}
        lists = {
            "embedding": list(rng.standard_normal((steps, 16), dtype=np.float32)),
            "item": [int(v) for v in rng.integers(0, 1 << 20, steps)],
            "tags": [rng.integers(0, 1000, int(rng.integers(0, 4))) for _ in range(steps)],
        }
        out.append((context, lists))
    return out
