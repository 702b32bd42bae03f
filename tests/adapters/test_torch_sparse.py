"""SparseFeature values batched for PyTorch: items' Sparse values and decode_examples' batch Sparse
both become one torch.sparse_coo_tensor, the item's number its first dimension, through Collate
and the datasets (also across a DataLoader worker)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from torch.utils.data import DataLoader

from tfrecord_lite.torch import TFRecordDataset, collate, to_torch

SPEC = {"s": tfr.SparseFeature(["i", "j"], "v", "float32", [4, 3]), "y": tfr.FixedLenFeature([], "int64")}


def records(n: int) -> list[bytes]:
    out = []
    for k in range(n):
        ids = np.arange(k % 4, dtype=np.int64)
        out.append(tfr.encode_example({"i": 3 - ids, "j": ids % 3, "v": ids.astype(np.float32) + k, "y": [k]}))
    return out


def dense_batch(data: list[bytes]) -> np.ndarray:
    return np.stack([tfr.decode_example(r, SPEC)["s"].to_dense() for r in data])


def test_items_and_columns_collate_to_one_sparse_tensor() -> None:
    data = records(6)
    from_items = collate([tfr.decode_example(r, SPEC) for r in data])
    from_columns = collate.columns(tfr.decode_examples(data, SPEC))
    for batch in (from_items, from_columns):
        s = batch["s"]
        assert s.layout == torch.sparse_coo and s.dtype == torch.float32 and tuple(s.shape) == (6, 4, 3)
        assert np.array_equal(s.to_dense().numpy(), dense_batch(data))
        assert batch["y"].tolist() == list(range(6))
    assert torch.equal(from_items["s"]._indices(), from_columns["s"]._indices())


def test_one_item_becomes_a_sparse_tensor() -> None:
    item = to_torch(tfr.decode_example(records(3)[2], SPEC))
    assert item["s"].layout == torch.sparse_coo and tuple(item["s"].shape) == (4, 3)


def test_bytes_stay_a_batch_sparse() -> None:
    spec = {"s": tfr.SparseFeature("i", "v", "bytes", 3)}
    data = [tfr.encode_example({"i": [2, 0], "v": [b"x", b"y"]}), tfr.encode_example({"i": [1], "v": [b"z"]})]
    expected = tfr.decode_examples(data, spec)["s"]
    for batch in (collate([tfr.decode_example(r, spec) for r in data])["s"], collate.columns({"s": expected})["s"]):
        assert isinstance(batch, tfr.Sparse) and batch.values == expected.values == [b"y", b"x", b"z"]
        assert np.array_equal(batch.indices, expected.indices) and batch.dense_shape.tolist() == [2, 3]


def test_an_index_outside_the_shape_names_the_key() -> None:
    bad = tfr.encode_example({"i": [7], "j": [0], "v": [1.0], "y": [0]})
    with pytest.raises(ValueError, match=r"'s': .*size is 4 but found index 7"):
        collate([tfr.decode_example(bad, SPEC)])
    with pytest.raises(ValueError, match="'s': "):
        collate.columns(tfr.decode_examples([bad], SPEC))


@pytest.mark.parametrize("workers", [0, 1])
def test_a_dataset_batches_sparse_features(tmp_path: Path, workers: int) -> None:
    data = records(10)
    path = tmp_path / "s.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for r in data:
            w.write(r)
    ds = TFRecordDataset(path, features=SPEC)
    loader = DataLoader(ds, batch_size=4, collate_fn=ds.collate_fn, num_workers=workers)
    with warnings.catch_warnings():  # torch rebuilds a worker's sparse tensor without checks, and says so
        warnings.filterwarnings("ignore", "Sparse invariant checks", UserWarning)
        batches: list[Any] = list(loader)
    got = np.concatenate([b["s"].to_dense().numpy() for b in batches])
    assert np.array_equal(got, dense_batch(data))
    assert np.array_equal(ds[[1, 2]]["s"].to_dense().numpy(), dense_batch(data[1:3]))
