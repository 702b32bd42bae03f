"""One small typed dataset that the engine adapters' tests (Ray, Dask, datasets) all read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import tfrecord_lite as tfr
from tests._records import write_records

SPEC = {
    "id": tfr.FixedLenFeature([], "int64"),
    "xy": tfr.FixedLenFeature([2], "float32"),
    "name": tfr.FixedLenFeature([], "string"),
    "tags": tfr.VarLenFeature("int64"),
}


def example(i: int) -> dict[str, Any]:
    return {"id": [i], "xy": [i / 2, -i / 4], "name": [f"n{i}".encode()], "tags": np.arange(i % 4, dtype=np.int64)}


def write_file(
    path: Path, ids: range, compression: str | None = None, make: Callable[[int], Any] = example
) -> list[bytes]:
    records = [tfr.encode_example(make(i)) for i in ids]
    write_records(path, records, compression)
    return records
