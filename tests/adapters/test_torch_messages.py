"""Records of other types through the torch datasets, on real files and real DataLoaders: a
user's own message (a class made from a descriptor set, and a generated one) as `record_type`,
its items the message's fields as the protobuf runtime parses them, batched, and carried to
spawned DataLoader workers; TF Ranking's ExampleListWithContext (`record_type="elwc"`), with and
without specs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
from google.protobuf import timestamp_pb2
from torch.utils.data import DataLoader

import tfrecord_lite as tfr
from tests.datasets.test_messages import descriptor_set, elwc, orders, runtime_class
from tfrecord_lite.torch import IterableTFRecordDataset, TFRecordDataset


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, list[Any]]:
    """The orders file, the class load_message_class makes, and the runtime's own parse of each."""
    folder = tmp_path_factory.mktemp("shop")
    (folder / "shop.pb").write_bytes(descriptor_set())
    reference = runtime_class(descriptor_set(), "shop.Order")
    records = orders(reference)
    with tfr.TFRecordWriter(folder / "orders.tfrecord") as writer:
        for record in records:
            writer.write(record)
    cls = tfr.load_message_class(folder / "shop.pb", message="shop.Order")
    return folder / "orders.tfrecord", cls, [reference.FromString(r) for r in records]


def test_a_users_message_is_a_record_type(shop: tuple[Path, Any, list[Any]]) -> None:
    path, cls, parsed = shop
    ds = TFRecordDataset(path, record_type=cls)
    assert len(ds) == 5 and "record_type=shop.Order" in repr(ds)
    for i, expected in enumerate(parsed):
        item = ds[i]
        assert set(item) == {"order_id", "item_names", "total", "note", "weight"}
        assert item["order_id"] == expected.order_id and item["weight"] == expected.weight
        assert item["item_names"] == list(expected.item_names)
        assert item["total"] == {"currency": "EUR", "cents": 199 * i}
        assert item["note"] == ({"text": expected.note.text} if expected.HasField("note") else None)
    streamed = list(IterableTFRecordDataset(path, record_type=cls))
    assert [item["order_id"] for item in streamed] == [p.order_id for p in parsed]


def test_messages_batch_and_travel_to_spawned_workers(shop: tuple[Path, Any, list[Any]]) -> None:
    path, cls, parsed = shop
    keep = ["order_id", "weight", "total"]

    loader = DataLoader(
        TFRecordDataset(path, record_type=cls, transform=_numbers),
        batch_size=5,
        num_workers=1,
        multiprocessing_context="spawn",
    )
    (batch,) = list(loader)
    assert sorted(batch) == sorted(keep)
    assert batch["order_id"].tolist() == [p.order_id for p in parsed]
    np.testing.assert_allclose(batch["weight"].numpy(), [p.weight for p in parsed])
    assert batch["total"].tolist() == [p.total.cents for p in parsed]


def _numbers(item: dict[str, Any]) -> dict[str, Any]:
    """What a model takes of an order: its numbers (a module-level function: spawned workers import it)."""
    return {"order_id": item["order_id"], "weight": item["weight"], "total": item["total"]["cents"]}


def test_a_generated_class_is_a_record_type(tmp_path: Path) -> None:
    path = tmp_path / "times.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        for seconds in (5, 7):
            writer.write(timestamp_pb2.Timestamp(seconds=seconds, nanos=3).SerializeToString())
    ds = TFRecordDataset(path, record_type=timestamp_pb2.Timestamp, output="torch")
    batch = next(iter(DataLoader(ds, batch_size=2)))
    assert batch["seconds"].tolist() == [5, 7] and batch["nanos"].tolist() == [3, 3]


def test_a_record_that_is_no_such_message_names_its_place(shop: tuple[Path, Any, list[Any]], tmp_path: Path) -> None:
    _, cls, _ = shop
    path = tmp_path / "bad.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        writer.write(b"\x0a\x05a")
    with pytest.raises(tfr.DecodeError, match=r"not a valid shop\.Order.*bad\.tfrecord.*record 0"):
        TFRecordDataset(path, record_type=cls)[0]
    with pytest.raises(ValueError, match="take no feature spec"):
        TFRecordDataset(path, record_type=cls, features={"x": tfr.FixedLenFeature([], "int64")})


def test_elwc_records_are_their_context_and_stacked_examples(tmp_path: Path) -> None:
    path = tmp_path / "lists.tfrecord"
    shoes = [{"doc": b"a", "rel": 2, "score": [0.5, 0.25]}, {"doc": b"b", "rel": 0, "score": [1.0, 2.0]}]
    lists = [
        ({"query": b"red shoes", "qid": 1}, shoes),
        ({"query": b"hat", "qid": 2}, [{"doc": b"c", "rel": 1, "score": [3.0, 4.0]}]),
    ]
    with tfr.TFRecordWriter(path) as writer:
        for context, examples in lists:
            writer.write(elwc(context, examples))
    plain = TFRecordDataset(path, record_type="elwc")[0]
    assert plain["query"] == [b"red shoes"] and plain["qid"].tolist() == [1]
    assert plain["rel"].tolist() == [[2], [0]] and plain["doc"] == [[b"a"], [b"b"]]
    np.testing.assert_array_equal(plain["score"], np.float32([[0.5, 0.25], [1.0, 2.0]]))
    ds = TFRecordDataset(
        path,
        record_type="elwc",
        context_features={"qid": tfr.FixedLenFeature([], "int64")},
        features={"rel": tfr.FixedLenFeature([], "int64"), "score": tfr.FixedLenFeature([2], "float32")},
    )
    first, second = ds[0], ds[1]
    assert sorted(first) == ["qid", "rel", "score"] and first["qid"] == 1
    assert first["rel"].tolist() == [2, 0] and second["rel"].tolist() == [1]
    assert first["score"].shape == (2, 2) and second["score"].shape == (1, 2)
    batch = next(iter(DataLoader(ds, batch_size=2, collate_fn=ds.collate_fn)))  # lists of 2 and 1: padded
    assert batch["rel"].tolist() == [[2, 0], [1, 0]] and batch["rel_length"].tolist() == [2, 1]
    assert batch["qid"].tolist() == [1, 2]
    streamed = list(
        IterableTFRecordDataset(path, record_type="elwc", features={"rel": tfr.FixedLenFeature([], "int64")})
    )
    assert [item["rel"].tolist() for item in streamed] == [[2, 0], [1]]
    with pytest.raises(ValueError, match="elwc"):
        TFRecordDataset(path, record_type="elwc", sequence_features={"x": tfr.FixedLenSequenceFeature([], "int64")})
