# RawFeature through the torch datasets and the image tools, on real files and real DataLoaders:
# items and batches are the arrays written (HWC, or (B, H, W, C) batches), ImageTransform makes
# them CHW / (B, C, H, W) tensors (cropped, flipped, scaled as for encoded images), with DataLoader
# workers too; pack_images(format="raw") gives the RawFeature that reads its pixels back.
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
from torch.utils.data import DataLoader

import tfrecord_lite as tfr
from tfrecord_lite.images import ImageTransform
from tfrecord_lite.torch import IterableTFRecordDataset, TFRecordDataset

PIXELS = tfr.RawFeature([6, 5, 3], "uint8")
SPEC = {"image": PIXELS, "label": tfr.FixedLenFeature([], "int64")}
N = 20


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, np.ndarray]:
    images = np.random.default_rng(0).integers(0, 256, (N, 6, 5, 3), dtype=np.uint8)
    path = tmp_path_factory.mktemp("raw") / "raw.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        for i, image in enumerate(images):
            writer.write_example({"image": PIXELS.encode(image), "label": 100 + i})
    return str(path), images


def chw(images: np.ndarray) -> np.ndarray:
    return images.transpose(0, 3, 1, 2) if images.ndim == 4 else images.transpose(2, 0, 1)


def test_items_and_batches_are_the_arrays_written(data: tuple[str, np.ndarray]) -> None:
    path, images = data
    item = TFRecordDataset(path, features=SPEC, output="torch")[3]
    assert torch.equal(item["image"], torch.from_numpy(images[3])) and int(item["label"]) == 103
    batch = next(iter(DataLoader(TFRecordDataset(path, features=SPEC), batch_size=8)))
    assert batch["image"].shape == (8, 6, 5, 3) and torch.equal(batch["image"], torch.from_numpy(images[:8]))
    batches = list(IterableTFRecordDataset(path, features=SPEC, batch_size=8, output="torch"))
    assert [len(b["label"]) for b in batches] == [8, 8, 4]
    assert torch.equal(torch.cat([b["image"] for b in batches]), torch.from_numpy(images))


def test_image_transform_makes_channels_first_tensors(data: tuple[str, np.ndarray]) -> None:
    path, images = data
    keys = {"image_key": "image", "label_key": "label"}
    image, label = TFRecordDataset(path, features=SPEC, transform=ImageTransform(scale=True, **keys))[2]
    assert label == 102 and image.dtype == torch.float32
    assert torch.allclose(image, torch.from_numpy(chw(images[2])).float() / 255)
    dataset = IterableTFRecordDataset(path, features=SPEC, batch_size=8, transform=ImageTransform(**keys))
    x, y = next(iter(DataLoader(dataset, batch_size=None, num_workers=2)))
    assert x.shape == (8, 3, 6, 5) and x.dtype == torch.uint8 and y.dtype == torch.int64
    assert torch.equal(x, torch.from_numpy(chw(images[:8]))) and y.tolist() == list(range(100, 108))
    cropped = IterableTFRecordDataset(
        path, features=SPEC, batch_size=8, transform=ImageTransform(random_crop=(4, 4), random_flip=True, **keys)
    )
    x, _ = next(iter(cropped))
    assert x.shape == (8, 3, 4, 4)
    for got, image in zip(x.numpy(), chw(images[:8]), strict=True):  # each a window of its image
        windows = [image[:, t : t + 4, s : s + 4] for t in range(3) for s in range(2)]
        assert any(np.array_equal(got, w) or np.array_equal(got, w[:, :, ::-1]) for w in windows)


def test_image_transform_names_a_batch_without_labels(data: tuple[str, np.ndarray]) -> None:
    path, _ = data
    dataset = IterableTFRecordDataset(
        path, features={"image": PIXELS}, batch_size=4, transform=ImageTransform(image_key="image", label_key="label")
    )
    with pytest.raises(tfr.FeatureError, match="integer label per image"):
        next(iter(dataset))


def test_pack_images_raw_gives_the_spec_of_its_pixels(tmp_path: Path) -> None:
    pil = pytest.importorskip("PIL.Image")
    from tfrecord_lite import images as tfr_images

    rng = np.random.default_rng(1)
    for i, size in enumerate([(7, 5), (4, 9), (7, 5)]):
        (tmp_path / "photos" / f"c{i % 2}").mkdir(parents=True, exist_ok=True)
        pixels = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
        pil.fromarray(pixels).save(tmp_path / "photos" / f"c{i % 2}" / f"{i}.png")
    mixed = tfr_images.pack_images(tmp_path / "photos", prefix=tmp_path / "mixed" / "p", format="raw")
    assert mixed.raw_feature is None  # two sizes: each record says its own
    packed = tfr_images.pack_images(
        tmp_path / "photos", prefix=tmp_path / "one" / "p", format="raw", resize=(8, 6), shuffle=False
    )
    assert packed.raw_feature == tfr.RawFeature([6, 8, 3], "uint8")
    spec = {"image/encoded": packed.raw_feature, "image/class/label": tfr.FixedLenFeature([], "int64")}
    (batch,) = tfr.iter_example_batches(packed.paths, features=spec, batch_size=8)
    records = list(tfr_images.iter_image_records(packed.paths))
    assert np.array_equal(batch["image/encoded"], np.stack([rec.decode("RGB") for rec in records]))
    assert batch["image/class/label"].tolist() == [rec.label for rec in records] == [0, 0, 1]
