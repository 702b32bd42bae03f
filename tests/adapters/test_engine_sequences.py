# SequenceExamples through the engine readers (Ray Data, Dask, datasets) on real local engines:
# each feature list is a column of steps beside the context columns, found without a spec or typed
# by sequence_features, values equal decode_sequence_example's; Ray writes them back as feature lists.
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._records import write_records

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before `datasets` is imported: never ask the hub
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

CONTEXT = {"id": tfr.FixedLenFeature([], "int64")}
LISTS = {"frames": tfr.VarLenFeature("int64"), "xy": tfr.FixedLenSequenceFeature([2], "float32")}


def sequence(i: int) -> bytes:
    frames = [np.arange(k, dtype=np.int64) + i for k in range(i % 4)]
    return tfr.encode_sequence_example({"id": [i]}, {"frames": frames, "xy": [[i / 2, -i / 4]] * (i % 3)})


def write_file(path: Path, ids: range) -> list[bytes]:
    records = [sequence(i) for i in ids]
    write_records(path, records)
    return records


def assert_rows(rows: list[dict[str, Any]], records: list[bytes]) -> None:
    """Each row (any order) holds the context and the feature lists of the record with its id."""
    assert len(rows) == len(records)
    by_id = {int(np.asarray(row["id"]).ravel()[0]): row for row in rows}
    for record in records:
        context, lists = tfr.decode_sequence_example(record)
        row = by_id[int(context["id"][0])]
        got_frames = [np.asarray(step, dtype=np.int64).tolist() for step in row["frames"]]
        assert got_frames == [step.tolist() for step in lists["frames"]]
        got_xy = np.asarray([np.asarray(step, dtype=np.float32) for step in row["xy"]]).reshape(-1)
        assert got_xy.tolist() == np.asarray(lists["xy"], dtype=np.float32).reshape(-1).tolist()


@pytest.mark.ray
@pytest.mark.usefixtures("ray_cluster")
def test_ray_reads_feature_lists_and_writes_them_back(tmp_path: Path) -> None:
    from tfrecord_lite.ray import read_tfrecords, write_tfrecords

    records = write_file(tmp_path / "seq.tfrecord", range(60))
    found = read_tfrecords(tmp_path / "seq.tfrecord", batch_size=16)
    assert_rows(found.take_all(), records)
    typed = read_tfrecords(tmp_path / "seq.tfrecord", features=CONTEXT, sequence_features=LISTS, batch_size=16)
    assert_rows(typed.take_all(), records)
    paths = write_tfrecords(found, tmp_path / "out")  # the columns carry their mark through Ray
    assert_rows([_row(r) for path in paths for r in tfr.iter_records(path)], records)
    via_pandas = found.map_batches(lambda frame: frame, batch_format="pandas")  # pandas drops the mark
    paths = write_tfrecords(via_pandas, tmp_path / "named", feature_lists=["frames", "xy"])
    assert_rows([_row(r) for path in paths for r in tfr.iter_records(path)], records)


def _row(record: bytes) -> dict[str, Any]:
    context, lists = tfr.decode_sequence_example(record)
    return {"id": context["id"], **lists}


@pytest.mark.dask
@pytest.mark.usefixtures("dask_client")
def test_dask_frames_hold_the_feature_lists(tmp_path: Path) -> None:
    from tfrecord_lite.dask import read_tfrecords

    records = write_file(tmp_path / "a.tfrecord", range(40))
    records += write_file(tmp_path / "b.tfrecord", range(40, 70))
    found = read_tfrecords([tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"])
    assert list(found.columns) == ["id", "frames", "xy"]
    assert_rows(found.compute().to_dict("records"), records)
    typed = read_tfrecords(tmp_path / "a.tfrecord", features=CONTEXT, sequence_features=LISTS, npartitions=2)
    assert list(typed.columns) == ["id", "frames", "xy"]
    assert_rows(typed.compute().to_dict("records"), records[:40])


@pytest.mark.hf
def test_hf_dataset_infers_and_holds_the_feature_lists(tmp_path: Path) -> None:
    import datasets

    from tfrecord_lite.hf import to_hf_dataset

    records = write_file(tmp_path / "seq.tfrecord", range(30))
    ds = to_hf_dataset(tmp_path / "seq.tfrecord", cache_dir=tmp_path / "cache")
    assert isinstance(ds.features["frames"], datasets.List) and isinstance(ds.features["frames"].feature, datasets.List)
    assert_rows(list(ds), records)
    streamed = to_hf_dataset(tmp_path / "seq.tfrecord", features=CONTEXT, sequence_features=LISTS, streaming=True)
    assert_rows(list(streamed), records)
