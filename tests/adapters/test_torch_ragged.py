"""RaggedFeature values collated for PyTorch: padded in every ragged dimension with a lengths
tensor per dimension, lists of tensors, or torch.nested tensors; the same batch whether it is
decoded by columns or item by item, and through a DataLoader over a real file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from tfrecord_lite.torch import Collate, TFRecordDataset

R = tfr.RaggedFeature
SPEC = {
    "flat": R("int64", value_key="v"),
    "rows": R("float32", value_key="w", partitions=[R.RowSplits("s")]),
    "deep": R("int64", value_key="v", partitions=[R.RowLengths("p"), R.RowSplits("s")]),
    "names": R("bytes", value_key="b", partitions=[R.UniformRowLength(1)]),
}


def _records() -> list[bytes]:
    rng = np.random.default_rng(3)
    out = []
    for i in range(9):
        lengths = rng.integers(0, 4, size=int(rng.integers(1, 4)))
        total = int(lengths.sum())
        paragraphs = [len(lengths)] if i % 2 else [1, len(lengths) - 1]
        out.append(
            tfr.encode_example(
                {
                    "v": np.arange(total) + i,
                    "w": np.arange(total, dtype=np.float32) / 2,
                    "s": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                    "p": np.array(paragraphs, np.int64),
                    "b": np.array([b"n%d" % j for j in range(i % 3)], dtype=object),
                }
            )
        )
    return out


def _dense(ragged: tfr.Ragged, pad: float) -> list[Any]:
    """The padded batch computed from to_list(), the long way round."""
    last = ragged.ragged_rank  # depth of the lists of values; 0 is the batch
    widths = [0] * (last + 1)

    def measure(values: list[Any], depth: int) -> None:
        widths[depth] = max(widths[depth], len(values))
        if depth < last:
            for v in values:
                measure(v, depth + 1)

    def fill(values: list[Any], depth: int) -> list[Any]:
        if depth == last:
            return list(values) + [pad] * (widths[depth] - len(values))
        return [fill(v, depth + 1) for v in values] + [fill([], depth + 1)] * (widths[depth] - len(values))

    rows = ragged.to_list()
    measure(rows, 0)
    return [fill(row, 1) for row in rows]


def test_padded_in_every_ragged_dimension() -> None:
    records = _records()
    columns = tfr.decode_examples(records, SPEC)
    batch = Collate(pad_value=-1).for_spec(SPEC).columns(columns)
    for key in ("flat", "rows", "deep"):
        assert batch[key].tolist() == _dense(columns[key], -1), key
        assert batch[f"{key}_length"].tolist() == columns[key].row_lengths().tolist()
    deep = columns["deep"]
    assert batch["deep_length_1"].shape == batch["deep"].shape[:2]
    assert batch["deep_length_2"].shape == batch["deep"].shape[:3]
    assert batch["deep_length_1"][1, : deep.row(1).nrows].tolist() == deep.row(1).row_lengths().tolist()
    assert batch["names"] == columns["names"].to_list()  # bytes stay lists


@pytest.mark.parametrize("varlen", ["pad", "list"])
def test_items_and_columns_collate_alike(varlen: str) -> None:
    records = _records()
    collate = Collate(varlen=varlen).for_spec(SPEC)
    by_columns = collate.columns(tfr.decode_examples(records, SPEC))
    by_items = collate([tfr.decode_example(r, SPEC) for r in records])
    assert by_columns.keys() == by_items.keys()
    for key, value in by_columns.items():
        assert _plain(value) == _plain(by_items[key]), key


def _plain(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def test_nested_tensors_for_one_ragged_dimension() -> None:
    records = _records()
    spec = {"flat": SPEC["flat"], "ids": tfr.VarLenFeature("int64")}
    collate = Collate(varlen="nested").for_spec(spec)
    columns = tfr.decode_examples([*records, tfr.encode_example({"v": np.array([7]), "ids": np.array([1, 2])})], spec)
    batch = collate.columns(columns)
    assert batch["flat"].is_nested and batch["flat"].layout == torch.jagged
    assert [t.tolist() for t in batch["flat"].unbind()] == columns["flat"].to_list()
    items = collate([tfr.decode_example(r, spec) for r in records])
    assert [t.tolist() for t in items["flat"].unbind()] == columns["flat"].to_list()[:-1]
    with pytest.raises(ValueError, match="'deep' has 3 ragged dimensions"):
        collate.columns(tfr.decode_examples(records, {"deep": SPEC["deep"]}))


def test_a_dataloader_batches_ragged_features(tmp_path: Path) -> None:
    path = str(tmp_path / "ragged.tfrecord")
    with tfr.TFRecordWriter(path) as writer:
        for record in _records():
            writer.write(record)
    ds = TFRecordDataset(path, features=SPEC)
    loader = torch.utils.data.DataLoader(ds, batch_size=4, collate_fn=ds.collate_fn, num_workers=0)
    batches = list(loader)
    expected = tfr.decode_examples(_records()[:4], SPEC)
    assert batches[0]["deep"].tolist() == _dense(expected["deep"], 0)
    assert sum(len(b["flat_length"]) for b in batches) == 9
