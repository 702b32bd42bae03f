# tfrecord_lite.torch with a transform, through real DataLoaders over real files: the items are the
# transform's, so a VarLenFeature that the transform makes one length (or one number) is stacked into
# one tensor, not padded with lengths nor left a list of tensors; without a transform the spec's ragged
# keys still pad. And the `tfrecord` package's call shape (path, index_path, description), which would
# put the description in transform=, is refused with the call to write instead.
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from torch.utils.data import DataLoader

from tfrecord_lite.torch import Collate, IterableTFRecordDataset, TFRecordDataset

SPEC = {"tokens": tfr.VarLenFeature("int64"), "label": tfr.FixedLenFeature([], "int64")}


@pytest.fixture
def path(tmp_path: Path) -> str:
    target = str(tmp_path / "a.tfrecord")
    with tfr.TFRecordWriter(target) as writer:
        for i in range(10):
            writer.write_example({"tokens": list(range(1, i % 4 + 2)), "label": i})
    return target


def first_four(item: dict[str, Any]) -> dict[str, Any]:
    """Each record's tokens padded or cut to 4: one length."""
    tokens = np.zeros(4, np.int64)
    tokens[: min(4, len(item["tokens"]))] = item["tokens"][:4]
    return {**item, "tokens": tokens}


def token_sum(item: dict[str, Any]) -> dict[str, Any]:
    return {**item, "tokens": item["tokens"].sum()}


def as_tensor(item: dict[str, Any]) -> dict[str, Any]:
    return {**first_four(item), "tokens": torch.as_tensor(first_four(item)["tokens"])}


@pytest.mark.parametrize("transform", [first_four, token_sum, as_tensor])
@pytest.mark.parametrize("varlen", ["pad", "list"])
def test_transformed_equal_shapes_are_stacked(path: str, transform: Any, varlen: str) -> None:
    dataset = TFRecordDataset(path, features=SPEC, transform=transform, collate_fn=Collate(varlen=varlen))
    loader = DataLoader(dataset, batch_size=4, collate_fn=dataset.collate_fn)
    batches = list(loader)
    for batch in batches:
        assert isinstance(batch["tokens"], torch.Tensor) and set(batch) == {"tokens", "label"}
    tokens = torch.cat([b["tokens"] for b in batches])
    expected = [transform(tfr.decode_example(r, SPEC))["tokens"] for r in tfr.iter_records(path)]
    assert tokens.tolist() == [np.asarray(t).tolist() for t in expected]


def test_streaming_with_workers_stacks_them_too(path: str) -> None:
    dataset = IterableTFRecordDataset(path, features=SPEC, transform=token_sum)
    loader = DataLoader(dataset, batch_size=5, collate_fn=dataset.collate_fn, num_workers=2)
    batches = list(loader)
    assert all(isinstance(b["tokens"], torch.Tensor) and b["tokens"].shape == (5,) for b in batches)
    assert sorted(torch.cat([b["label"] for b in batches]).tolist()) == list(range(10))


def test_a_transform_that_keeps_ragged_values_pads_them(path: str) -> None:
    dataset = TFRecordDataset(path, features=SPEC, transform=lambda item: item)
    batch = next(iter(DataLoader(dataset, batch_size=4, collate_fn=dataset.collate_fn)))
    assert batch["tokens"].shape == (4, 4) and batch["tokens_length"].tolist() == [1, 2, 3, 4]


def test_without_a_transform_the_spec_keys_pad_even_a_regular_batch(path: str) -> None:
    dataset = TFRecordDataset(path, features=SPEC)
    batch = next(iter(DataLoader(dataset, batch_size=1, collate_fn=dataset.collate_fn)))
    assert batch["tokens"].shape == (1, 1) and batch["tokens_length"].tolist() == [1]
    batched = IterableTFRecordDataset(
        path, features=SPEC, transform=token_sum, batch_size=1
    )  # collated before its transform
    assert next(iter(batched))["tokens_length"].tolist() == [1]


@pytest.mark.parametrize("dataset_class", [TFRecordDataset, IterableTFRecordDataset])
def test_the_tfrecord_package_call_shape_is_refused(path: str, dataset_class: Any) -> None:
    """The tfrecord package's (data_path, index_path, description) by position: everything after
    `source` is a keyword here, and an index path given as the spec says to drop it."""
    description = {"tokens": "int", "label": "int"}
    with pytest.raises(TypeError, match="positional argument"):
        dataset_class(path, None, description)
    with pytest.raises(TypeError, match=r"if it is an index path .* drop it"):
        dataset_class(path, features="train.index")
