# tfrecord_lite.hf with the real `datasets` library on local files (no hub: HF_HUB_OFFLINE): values
# equal decode_example's, HF Features from the spec, the TF image layout as an Image() column of PIL
# images, the same rows built by 2 processes, and streaming shards that are the files.
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._engine_data import SPEC, example

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before `datasets` is imported: never ask the hub
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

pytestmark = pytest.mark.hf


def write_files(folder: Path, counts: list[int]) -> list[bytes]:
    records, start = [], 0
    for number, n in enumerate(counts):
        with tfr.TFRecordWriter(folder / f"part-{number:05d}-of-{len(counts):05d}.tfrecord") as writer:
            for i in range(start, start + n):
                records.append(tfr.encode_example(example(i)))
                writer.write(records[-1])
        start += n
    return records


def test_dataset_values_and_features(tmp_path: Path) -> None:
    import datasets

    from tfrecord_lite.hf import to_hf_dataset

    records = write_files(tmp_path, [70, 30])
    ds = to_hf_dataset(str(tmp_path / "part-*"), features=SPEC, cache_dir=tmp_path / "cache", batch_size=16)
    assert isinstance(ds, datasets.Dataset) and len(ds) == 100
    assert ds.features == datasets.Features(
        {
            "id": datasets.Value("int64"),
            "xy": datasets.List(datasets.Value("float32"), length=2),
            "name": datasets.Value("binary"),
            "tags": datasets.List(datasets.Value("int64")),
        }
    )
    assert all(Path(f["filename"]).is_relative_to(tmp_path / "cache") for f in ds.cache_files)  # Arrow on disk
    for record, row in zip(records, ds.with_format("numpy"), strict=True):
        for key, value in tfr.decode_example(record, SPEC).items():
            np.testing.assert_array_equal(row[key], value)


def test_two_processes_build_the_same_rows(tmp_path: Path) -> None:
    from tfrecord_lite.hf import to_hf_dataset

    write_files(tmp_path, [40, 25, 35])
    one = to_hf_dataset(str(tmp_path / "part-*"), features=SPEC, cache_dir=tmp_path / "one")
    two = to_hf_dataset(str(tmp_path / "part-*"), features=SPEC, cache_dir=tmp_path / "two", num_proc=2)
    assert one["id"] == two["id"] == list(range(100))
    assert one.data.table.equals(two.data.table)


def test_a_record_that_does_not_fit_the_spec_is_named_not_wrapped(tmp_path: Path) -> None:
    from tests.records.test_spec_errors_located import BAD, _offsets, assert_placed, write
    from tests.records.test_spec_errors_located import SPEC as XSPEC
    from tfrecord_lite.hf import to_hf_dataset

    good, bad = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    write(good, n=7, bad=None)
    write(bad)
    with pytest.raises(tfr.FeatureError) as caught:  # not datasets' DatasetGenerationError
        to_hf_dataset([str(good), str(bad)], features=XSPEC, cache_dir=tmp_path / "cache")
    assert_placed(caught.value, bad, BAD, _offsets(bad)[BAD])


def test_streaming_shards_are_the_files(tmp_path: Path) -> None:
    import datasets
    from datasets.distributed import split_dataset_by_node

    from tfrecord_lite.hf import to_hf_dataset

    write_files(tmp_path, [10, 20, 30, 40])
    ds = to_hf_dataset(str(tmp_path / "part-*"), features=SPEC, streaming=True)
    assert isinstance(ds, datasets.IterableDataset) and ds.num_shards == 4
    assert [row["id"] for row in ds] == list(range(100))
    ranks = [[row["id"] for row in split_dataset_by_node(ds, rank=r, world_size=2)] for r in range(2)]
    assert sorted(ranks[0] + ranks[1]) == list(range(100)) and len(ranks[0]) == 10 + 30


def test_tf_image_layout_becomes_an_image_column(tmp_path: Path) -> None:
    import datasets
    from PIL import Image

    from tfrecord_lite._images.records import image_example
    from tfrecord_lite.hf import to_hf_dataset

    path = tmp_path / "images.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        for label, size in enumerate([(4, 3), (5, 7)]):
            buf = io.BytesIO()
            Image.new("RGB", size, (label * 100, 0, 0)).save(buf, "PNG")
            writer.write(image_example(buf.getvalue(), "png", size[1], size[0], label, f"c{label}", f"{label}.png"))
    ds = to_hf_dataset(path, cache_dir=tmp_path / "cache")  # spec inferred from the file
    assert ds.features["image"] == datasets.Image() and "image/encoded" not in ds.features
    first = ds[0]["image"]
    assert isinstance(first, Image.Image) and first.size == (4, 3) and first.getpixel((0, 0)) == (0, 0, 0)
    assert ds[1]["image"].size == (5, 7) and ds["image/class/label"] == [0, 1]
    streamed = next(iter(to_hf_dataset(path, streaming=True)))
    assert isinstance(streamed["image"], Image.Image) and streamed["image"].size == (4, 3)
    raw = to_hf_dataset(path, cache_dir=tmp_path / "raw", image_keys=None)
    assert raw.features["image/encoded"] == datasets.Value("binary")


def test_s3_with_storage_options(s3: Any, tmp_path: Path) -> None:
    from tfrecord_lite.hf import to_hf_dataset

    records = write_files(tmp_path, [30, 20])
    s3.fs.put(str(tmp_path / "part-00000-of-00002.tfrecord"), f"{s3.bucket}/in/part-00000-of-00002.tfrecord")
    s3.fs.put(str(tmp_path / "part-00001-of-00002.tfrecord"), f"{s3.bucket}/in/part-00001-of-00002.tfrecord")
    ds = to_hf_dataset(f"{s3.bucket}/in/", cache_dir=tmp_path / "cache", storage_options=s3.storage_options)
    want = tfr.infer_features(records[:30])  # the spec comes from the first object, as from a local file
    assert ds.num_rows == 50
    for record, row in zip(records, ds.with_format("numpy"), strict=True):
        for key, value in tfr.decode_example(record, want).items():
            np.testing.assert_array_equal(row[key], value)
    s3.fs.put(str(tmp_path / "part-00000-of-00002.tfrecord"), f"{s3.bucket}/in/part-00001-of-00002.tfrecord")
    again = to_hf_dataset(f"{s3.bucket}/in/", cache_dir=tmp_path / "cache", storage_options=s3.storage_options)
    assert again.num_rows == 60  # the object changed (its ETag): the cache is built anew
    streamed = to_hf_dataset(f"{s3.bucket}/in/", features=SPEC, streaming=True, storage_options=s3.filesystem())
    assert streamed.num_shards == 2 and [row["id"] for row in streamed] == [*range(30), *range(30)]


def test_data_loader_workers_divide_the_streaming_shards(tmp_path: Path) -> None:
    import torch.utils.data

    from tfrecord_lite.hf import to_hf_dataset

    write_files(tmp_path, [10, 20, 30, 40])
    ds = to_hf_dataset(str(tmp_path / "part-*"), features=SPEC, streaming=True).with_format("torch")
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    ids = [int(row["id"]) for row in loader]
    assert sorted(ids) == list(range(100))  # each record once, over 2 worker processes
