# Prepared TensorFlow Datasets folders written without TensorFlow, for the tests of the commands,
# the viewer and the docs that need one of a chosen size: an `image` (TFDS's Image feature: the PNG
# bytes in a bytes feature) and a `label` (ClassLabel: an int64 feature, its names in
# `label.labels.txt`), in the layout tensorflow-datasets 4.9.10 writes for a GeneratorBasedBuilder
# (dataset_info.json and features.json as it writes them, shards NAME-SPLIT.tfrecord-0000k-of-0000n).
# The oracle-made folders of tests/data/tfds/ are what proves the reading right; these only give
# the surfaces a dataset to show.
from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

import tfrecord_lite as tfr

IMAGE_CLASS = "tensorflow_datasets.core.features.image_feature.Image"
LABEL_CLASS = "tensorflow_datasets.core.features.class_label_feature.ClassLabel"
DICT_CLASS = "tensorflow_datasets.core.features.features_dict.FeaturesDict"
TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"


def png(pixels: np.ndarray) -> bytes:
    """A PNG file of uint8 pixels (H, W, 1) or (H, W, 3), made with the standard library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    height, width, channels = pixels.shape
    rows = b"".join(b"\0" + pixels[y].tobytes() for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0 if channels == 1 else 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def image_of(label: int, i: int, shape: Sequence[int]) -> np.ndarray:
    """The pixels of example `i` (of class `label`): a grey level per class, a bright square where i says."""
    pixels = np.full(shape, 20 + 23 * label, np.uint8)
    size = max(1, shape[0] // 4)
    y, x = (i * 3) % (shape[0] - size + 1), (i * 5) % (shape[1] - size + 1)
    pixels[y : y + size, x : x + size] = 255
    return pixels


def write_tfds_folder(
    root: Path,
    *,
    name: str = "mnist",
    version: str = "3.0.1",
    shape: Sequence[int] = (28, 28, 1),
    classes: Sequence[str] = tuple(str(i) for i in range(10)),
    splits: Mapping[str, Sequence[int]] = {"train": (40, 40), "test": (20,)},
    description: str = "Handwritten digits, or their look-alikes.",
) -> Path:
    """`root/name/version/`: every split's shards (their lengths as given), example i of a split of
    class i % len(classes); the folder."""
    folder = root / name / version
    folder.mkdir(parents=True)
    infos = []
    for split, lengths in splits.items():
        i = 0
        for k, length in enumerate(lengths):
            path = folder / f"{name}-{split}.tfrecord-{k:05d}-of-{len(lengths):05d}"
            with tfr.TFRecordWriter(path) as writer:
                for _ in range(length):
                    label = i % len(classes)
                    writer.write_example({"image": [png(image_of(label, i, shape))], "label": [label]})
                    i += 1
        size = sum(f.stat().st_size for f in folder.glob(f"{name}-{split}.*"))
        lengths_text = [str(n) for n in lengths]
        infos.append({"filepathTemplate": TEMPLATE, "name": split, "numBytes": str(size), "shardLengths": lengths_text})
    info = {
        "description": description,
        "fileFormat": "tfrecord",
        "moduleName": "__main__",
        "name": name,
        "splits": infos,
        "supervisedKeys": {"tuple": {"items": [{"featureKey": "image"}, {"featureKey": "label"}]}},
        "version": version,
    }
    (folder / "dataset_info.json").write_text(json.dumps(info, indent=2))
    image = {
        "image": {"dtype": "uint8", "shape": {"dimensions": [str(d) for d in shape]}},
        "pythonClassName": IMAGE_CLASS,
    }
    label = {"classLabel": {"numClasses": str(len(classes))}, "pythonClassName": LABEL_CLASS}
    features = {"featuresDict": {"features": {"image": image, "label": label}}, "pythonClassName": DICT_CLASS}
    (folder / "features.json").write_text(json.dumps(features, indent=4))
    (folder / "label.labels.txt").write_text("".join(f"{c}\n" for c in classes))
    return folder
