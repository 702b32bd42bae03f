"""TensorFlow as the oracle of images under other keys: files TensorFlow writes the way its tutorials
do (image_raw + label, with encoded images or raw pixel bytes) decode through tfrecord_lite.images
to the pixels tf.io.decode_image / tf.io.decode_raw give; what pack_images(format="raw") writes,
TensorFlow parses and decode_raw()s to the same pixels.

Skipped as a whole when TensorFlow is not installed; the encoded-image tests need Pillow too.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfrecord_lite import images

pytestmark = pytest.mark.tf

T = tf.train


def _bytes(value: bytes) -> tf.train.Feature:
    return T.Feature(bytes_list=T.BytesList(value=[value]))


def _int(value: int) -> tf.train.Feature:
    return T.Feature(int64_list=T.Int64List(value=[value]))


def tf_write(path: Path, images_: list[tf.Tensor], encode: str) -> None:
    """The TF tutorial layout, written by TensorFlow: image_raw (encoded, or raw bytes), label, height, width, depth."""
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i, image in enumerate(images_):
            height, width, depth = image.shape
            if encode == "png":
                data = tf.io.encode_png(image).numpy()
            elif encode == "jpeg":
                data = tf.io.encode_jpeg(image, quality=90, chroma_downsampling=False).numpy()
            else:
                data = image.numpy().tobytes()
            feature = {"image_raw": _bytes(data), "label": _int(i), "height": _int(height), "width": _int(width),
                       "depth": _int(depth)}  # fmt: skip
            writer.write(T.Example(features=T.Features(feature=feature)).SerializeToString())


def tf_parse(path: Path) -> list[dict[str, tf.Tensor]]:
    spec = {"image_raw": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
    spec |= {key: tf.io.FixedLenFeature([], tf.int64) for key in ("height", "width", "depth")}
    return [tf.io.parse_single_example(r, spec) for r in tf.data.TFRecordDataset(str(path))]


def random_images(dtype: tf.DType = tf.uint8, channels: int = 3) -> list[tf.Tensor]:
    rng = np.random.default_rng(11)
    shapes = [(5, 7, channels), (3, 2, channels), (8, 8, channels)]
    if dtype == tf.uint8:
        return [tf.constant(rng.integers(0, 256, shape, dtype=np.uint8)) for shape in shapes]
    return [tf.constant(rng.random(shape).astype(dtype.as_numpy_dtype)) for shape in shapes]


@pytest.mark.parametrize(("dtype", "channels"), [(tf.uint8, 3), (tf.uint8, 1), (tf.float32, 3), (tf.uint16, 4)])
def test_raw_pixels_tensorflow_writes_decode_as_decode_raw(tmp_path: Path, dtype: tf.DType, channels: int) -> None:
    path = tmp_path / "raw.tfrecord"
    tf_write(path, random_images(dtype, channels), "raw")
    ours = list(images.iter_image_records(str(path), image_key="image_raw", label_key="label"))
    for rec, parsed in zip(ours, tf_parse(path), strict=True):
        shape = (int(parsed["height"]), int(parsed["width"]), int(parsed["depth"]))
        expected = tf.reshape(tf.io.decode_raw(parsed["image_raw"], dtype), shape).numpy()
        # the dtype is not in the file (TF's tutorials pass it to decode_raw): our reader needs it said
        got = rec.decode(mode=None) if dtype == tf.uint8 else _with_dtype(rec, dtype.name).decode(mode=None)
        assert rec.format == "raw" and rec.label == int(parsed["label"])
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def _with_dtype(rec: images.ImageRecord, dtype: str) -> images.ImageRecord:
    import dataclasses

    return dataclasses.replace(rec, dtype=dtype)


@pytest.mark.parametrize("encode", ["png", "jpeg"])
def test_encoded_images_tensorflow_writes_decode_as_decode_image(tmp_path: Path, encode: str) -> None:
    pytest.importorskip("PIL")
    path = tmp_path / f"{encode}.tfrecord"
    tf_write(path, random_images(), encode)
    records = [r.numpy() for r in tf.data.TFRecordDataset(str(path))]
    for record, parsed in zip(records, tf_parse(path), strict=True):
        if encode == "png":
            expected = tf.io.decode_image(parsed["image_raw"], channels=3).numpy()
        else:  # libjpeg's accurate integer IDCT, as Pillow decodes
            expected = tf.io.decode_jpeg(parsed["image_raw"], channels=3, dct_method="INTEGER_ACCURATE").numpy()
        got = images.decode_image(record, image_key="image_raw")
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def test_pack_raw_reads_in_tensorflow(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    from PIL import Image

    rng = np.random.default_rng(5)
    originals = {"a/x.png": rng.integers(0, 256, (4, 6, 3), dtype=np.uint8),
                 "b/y.png": rng.integers(0, 256, (2, 3, 4), dtype=np.uint8)}  # fmt: skip
    for name, array in originals.items():
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(array).save(tmp_path / "src" / name)
    result = images.pack_images(tmp_path / "src", prefix=tmp_path / "out" / "raw", format="raw", num_shards=1)
    spec = {
        "image/encoded": tf.io.FixedLenFeature([], tf.string),
        "image/filename": tf.io.FixedLenFeature([], tf.string),
    }
    spec |= {f"image/{k}": tf.io.FixedLenFeature([], tf.int64) for k in ("height", "width", "channels")}
    spec["image/dtype"] = tf.io.FixedLenFeature([], tf.string)
    seen = set()
    for record in tf.data.TFRecordDataset(result.paths[0]):
        ex = tf.io.parse_single_example(record, spec)
        dtype = tf.as_dtype(ex["image/dtype"].numpy().decode())
        shape = [ex["image/height"], ex["image/width"], ex["image/channels"]]
        pixels = tf.reshape(tf.io.decode_raw(ex["image/encoded"], dtype), shape).numpy()
        name = ex["image/filename"].numpy().decode()
        np.testing.assert_array_equal(pixels, originals[name])
        seen.add(name)
    assert seen == set(originals)
