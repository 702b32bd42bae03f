# ImageTransform's random crop and flip, and the simplejpeg decode: JPEGs of every kind Pillow
# writes (hypothesis: sizes, qualities, chroma subsampling, progressive, grayscale) decode to
# Pillow's pixels exactly; what simplejpeg refuses (CMYK, damaged data, images past Pillow's bomb
# limit) goes to Pillow, which decodes it or names the problem; crops and flips equal the same
# draws of Python's `random` applied the simple way to Pillow's decode; a real DataLoader with two
# workers gives every image once, as a crop of its own pixels, repeatably under torch.manual_seed.
from __future__ import annotations

import io
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tfrecord_lite import images
from tfrecord_lite._images import codec as image_codec

Image = pytest.importorskip("PIL.Image")


def jpeg(pixels: np.ndarray, **options: Any) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels[:, :, 0] if pixels.shape[2] == 1 else pixels).save(buf, "JPEG", **options)
    return buf.getvalue()


def pillow_rgb(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        return np.array(im.convert("RGB"))


def photo(rng: np.random.Generator, height: int, width: int, channels: int = 3) -> np.ndarray:
    """Smooth gradients with noise: pixels that compress like a photo."""
    y, x = np.mgrid[0:height, 0:width]
    base = (x[:, :, None] * rng.uniform(1, 9, channels) + y[:, :, None] * rng.uniform(1, 9, channels)) % 256
    return (base + rng.normal(0, 12, base.shape)).clip(0, 255).astype(np.uint8)


@settings(max_examples=40, deadline=None)
@given(
    height=st.integers(1, 40),
    width=st.integers(1, 40),
    gray=st.booleans(),
    quality=st.integers(5, 100),
    subsampling=st.sampled_from([0, 1, 2]),  # 4:4:4, 4:2:2, 4:2:0
    progressive=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_simplejpeg_decodes_pillows_pixels(
    height: int, width: int, gray: bool, quality: int, subsampling: int, progressive: bool, seed: int
) -> None:
    pytest.importorskip("simplejpeg")
    pixels = photo(np.random.default_rng(seed), height, width, 1 if gray else 3)
    data = jpeg(pixels, quality=quality, subsampling=subsampling, progressive=progressive)
    fast = image_codec.fast_jpeg(data)
    assert fast is not None and fast.dtype == np.uint8 and fast.flags.writeable
    np.testing.assert_array_equal(fast, pillow_rgb(data))
    np.testing.assert_array_equal(images.decode_image_bytes(data), pillow_rgb(data))


def test_what_simplejpeg_refuses_goes_to_pillow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("simplejpeg")
    cmyk = io.BytesIO()
    Image.fromarray(photo(np.random.default_rng(1), 9, 7, 4), mode="CMYK").save(cmyk, "JPEG")
    assert image_codec.fast_jpeg(cmyk.getvalue()) is None
    np.testing.assert_array_equal(images.decode_image_bytes(cmyk.getvalue()), pillow_rgb(cmyk.getvalue()))

    whole = jpeg(photo(np.random.default_rng(2), 64, 64), quality=90)
    for damaged in (whole[: len(whole) // 2], whole[:3] + b"\x00" * 40, b"\xff\xd8\xff"):
        assert image_codec.fast_jpeg(damaged) is None
        with pytest.raises(images.ImageDecodeError, match="cannot decode image") as info:
            images.decode_image_bytes(damaged, name="cats/1.jpg")
        assert info.value.path == "cats/1.jpg"

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # 4096 pixels > 2 x 1000: Pillow refuses
    assert image_codec.fast_jpeg(whole) is None
    with pytest.raises(images.ImageDecodeError, match="DecompressionBomb"):
        images.decode_image_bytes(whole)


def test_modes_other_than_rgb_and_no_simplejpeg_use_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    data = jpeg(photo(np.random.default_rng(3), 12, 10), quality=75)
    with Image.open(io.BytesIO(data)) as im:
        gray = np.array(im.convert("L"))
    np.testing.assert_array_equal(images.decode_image_bytes(data, mode="L")[:, :, 0], gray)
    monkeypatch.setattr(image_codec, "_simplejpeg", False)  # as when simplejpeg is not installed
    assert image_codec.fast_jpeg(data) is None
    np.testing.assert_array_equal(images.decode_image_bytes(data), pillow_rgb(data))


@pytest.mark.torch
@pytest.mark.parametrize("fast", [True, False])
def test_a_users_augment_gets_pillows_pixels_from_either_decoder(monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    pytest.importorskip("torch")
    if fast:
        pytest.importorskip("simplejpeg")
    else:
        monkeypatch.setattr(image_codec, "_simplejpeg", False)  # as when simplejpeg is not installed
    data = jpeg(photo(np.random.default_rng(4), 40, 30), quality=85)
    given: list[Any] = []

    def cropped(image: Any) -> Any:  # a user's Pillow augmentation
        given.append(image)
        return image.crop((2, 3, 22, 33)).transpose(Image.Transpose.FLIP_LEFT_RIGHT)

    tensor, label = images.ImageTransform(augment=cropped)({"image/encoded": [data], "image/class/label": [5]})
    expected = np.ascontiguousarray(pillow_rgb(data)[3:33, 2:22][:, ::-1].transpose(2, 0, 1))
    np.testing.assert_array_equal(tensor.numpy(), expected)
    assert label == 5 and given[0].mode == "RGB"
    assert (type(given[0]).__name__ == "JpegImageFile") is not fast  # simplejpeg's array, or Pillow's own image


def image_file(tmp_path: Path, sizes: list[tuple[int, int]], raw: bool = False) -> tuple[Path, list[np.ndarray]]:
    """A file of image Examples (JPEG, or raw pixels), label i for image i; and Pillow's pixels of each."""
    rng = np.random.default_rng(len(sizes))
    path, pixels = tmp_path / ("raw.tfrecord" if raw else "jpeg.tfrecord"), []
    with tfr.TFRecordWriter(path) as w:
        for i, (height, width) in enumerate(sizes):
            source = photo(rng, height, width)
            if raw:
                fields = {"image/encoded": source.tobytes(), "image/format": b"raw", "image/height": height}
                fields |= {"image/width": width, "image/channels": 3}
                pixels.append(source)
            else:
                data = jpeg(source, quality=85)
                fields = {"image/encoded": data, "image/filename": f"img{i}.jpg".encode()}
                pixels.append(pillow_rgb(data))
            w.write_example(fields | {"image/class/label": i})
    return path, pixels


def upside_down(image: Any) -> Any:
    return image.transpose(Image.Transpose.FLIP_TOP_BOTTOM)


def collate_and_tell_if_shared(records: list[bytes]) -> tuple[Any, Any, bool]:
    batch, labels = images.ImageTransform(random_crop=(8, 7)).collate(records)
    return batch, labels, batch.is_shared()


def reference(pixels: np.ndarray, crop: tuple[int, int], flip: bool) -> np.ndarray:
    """The crop and flip done the simple way with the transform's draws: top, left, then a flip."""
    top = random.randint(0, pixels.shape[0] - crop[0])
    left = random.randint(0, pixels.shape[1] - crop[1])
    out = pixels[top : top + crop[0], left : left + crop[1]]
    if flip and random.random() < 0.5:
        out = np.fliplr(out)
    return np.transpose(out, (2, 0, 1))


@pytest.mark.torch
@pytest.mark.parametrize("raw", [False, True])
def test_random_crop_and_flip_equal_the_simple_way(tmp_path: Path, raw: bool) -> None:
    torch = pytest.importorskip("torch")
    path, pixels = image_file(tmp_path, [(20, 16), (9, 9), (33, 12)] * 4, raw=raw)
    records = list(tfr.iter_records(path))
    for crop, flip in [((9, 8), True), ((9, 9), False), ((5, 3), True)]:
        transform = images.ImageTransform(random_crop=crop, random_flip=flip)
        outputs = []
        for i, record in enumerate(records):
            random.seed(i)
            outputs.append(transform(record))
        for i, (image, label) in enumerate(outputs):  # compared after all: no image shares a buffer
            random.seed(i)
            expected = reference(pixels[i], crop, flip)
            assert label == i and image.dtype == torch.uint8 and image.is_contiguous()
            np.testing.assert_array_equal(image.numpy(), expected)
    scaled, _ = images.ImageTransform(random_crop=(4, 4), scale=True)(records[0])
    assert scaled.dtype == torch.float32 and tuple(scaled.shape) == (3, 4, 4) and float(scaled.max()) <= 1.0
    gray, _ = images.ImageTransform(mode="L", random_crop=(4, 6), random_flip=True)(records[0])
    assert tuple(gray.shape) == (1, 4, 6) and gray.dtype == torch.uint8


@pytest.mark.torch
@pytest.mark.threads
def test_threads_decode_each_their_own_images(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    path, pixels = image_file(tmp_path, [(30, 20), (20, 30), (25, 25)] * 10)
    transform = images.ImageTransform(scale=True)
    with ThreadPoolExecutor(4) as pool:
        outputs = list(pool.map(transform, tfr.iter_records(path)))
    for i, ((image, label), expected) in enumerate(zip(outputs, pixels, strict=True)):
        assert label == i
        np.testing.assert_array_equal((image.numpy() * 255).round().astype(np.uint8), expected.transpose(2, 0, 1))


@pytest.mark.torch
def test_crop_errors_name_the_image_and_the_option(tmp_path: Path) -> None:
    path, _ = image_file(tmp_path, [(10, 12)])
    record = next(iter(tfr.iter_records(path)))
    with pytest.raises(images.ImageDecodeError, match=r"10x12 pixels is smaller than random_crop=\(11, 4\)") as info:
        images.ImageTransform(random_crop=(11, 4))(record)
    assert info.value.path == "img0.jpg"
    padded, _ = images.ImageTransform(pad_to=(11, 12), random_crop=(11, 4))(record)  # pad first, then crop
    assert tuple(padded.shape) == (3, 11, 4)
    for bad in [(0, 4), (4,), (4.0, 4)]:
        with pytest.raises(ValueError, match="random_crop must be"):
            images.ImageTransform(random_crop=bad)  # type: ignore[arg-type]


@pytest.mark.torch
def test_two_workers_give_every_image_once_as_a_crop_of_itself(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    from tfrecord_lite.torch import IterableTFRecordDataset

    path, pixels = image_file(tmp_path, [(14, 11), (12, 12), (16, 9)] * 7)
    crop = (8, 7)
    candidates = []  # every crop and flip of each image
    for source in pixels:
        views = [source[top : top + crop[0], left : left + crop[1]] for top in range(source.shape[0] - crop[0] + 1)
                 for left in range(source.shape[1] - crop[1] + 1)]  # fmt: skip
        candidates.append({np.transpose(v[:, ::s], (2, 0, 1)).tobytes() for v in views for s in (1, -1)})
    transform = images.ImageTransform(random_crop=crop, random_flip=True)
    ds = IterableTFRecordDataset(path, transform=transform, record_type="raw")
    loader = DataLoader(ds, batch_size=4, num_workers=2, collate_fn=ds.collate_fn)

    def epoch() -> list[Any]:
        torch.manual_seed(7)  # the new workers of each epoch seed their `random` from it
        batches = list(loader)
        labels = torch.cat([b[1] for b in batches]).tolist()
        assert sorted(labels) == list(range(len(pixels)))
        for images_, labels_ in batches:
            assert images_.dtype == torch.uint8 and tuple(images_.shape[1:]) == (3, *crop)
            assert all(img.numpy().tobytes() in candidates[i] for img, i in zip(images_, labels_.tolist(), strict=True))
        return batches

    first, second = epoch(), epoch()
    assert all(torch.equal(a[0], b[0]) for a, b in zip(first, second, strict=True))  # the same seed, the same crops


@pytest.mark.torch
@pytest.mark.parametrize("raw", [False, True])
def test_collate_writes_the_batch_the_items_stack_to(tmp_path: Path, raw: bool) -> None:
    torch = pytest.importorskip("torch")
    from tfrecord_lite.torch import collate

    path, _ = image_file(tmp_path, [(20, 16), (9, 9), (33, 12)] * 3, raw=raw)
    records = list(tfr.iter_records(path))
    crop_flip, resize = {"random_crop": (9, 8), "random_flip": True}, {"resize": (10, 7), "scale": True}
    pad_crop, augment = {"pad_to": (33, 16), "random_crop": (30, 15)}, {"random_crop": (6, 6), "augment": upside_down}
    for options in [crop_flip, resize, pad_crop, augment]:
        transform = images.ImageTransform(**options)  # type: ignore[arg-type]
        random.seed(11)
        batch, labels = transform.collate(records)
        random.seed(11)
        items_batch, items_labels = collate([transform(record) for record in records])
        assert batch.dtype == items_batch.dtype and batch.is_contiguous(), options
        assert torch.equal(batch, items_batch) and torch.equal(labels, items_labels), options
    with pytest.raises(ValueError, match=r"sizes differ \(3x20x16, 3x9x9\)"):
        images.ImageTransform().collate(records)
    with pytest.raises(ValueError, match="at least one record"):
        images.ImageTransform().collate([])


@pytest.mark.torch
def test_collate_in_two_workers_gives_every_image_once_as_a_crop_of_itself(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    from tfrecord_lite.torch import IterableTFRecordDataset

    path, pixels = image_file(tmp_path, [(14, 11), (12, 12), (16, 9)] * 7)
    crop = (8, 7)
    transform = images.ImageTransform(random_crop=crop, random_flip=True)
    ds = IterableTFRecordDataset(path, record_type="raw")  # undecoded records, batched by the transform
    loader = DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True, collate_fn=transform.collate)
    shared = DataLoader(ds, batch_size=4, num_workers=1, collate_fn=collate_and_tell_if_shared)
    assert all(in_shared_memory for _, _, in_shared_memory in shared)  # built in shared memory by the worker
    for _ in range(2):
        batches = list(loader)
        assert sorted(torch.cat([b[1] for b in batches]).tolist()) == list(range(len(pixels)))
        for batch, labels in batches:
            assert type(batch) is torch.Tensor and batch.dtype == torch.uint8 and tuple(batch.shape[1:]) == (3, *crop)
            for image, i in zip(batch, labels.tolist(), strict=True):
                chw = np.transpose(pixels[i], (2, 0, 1))
                found = [
                    (top, left, flip)
                    for top in range(chw.shape[1] - crop[0] + 1)
                    for left in range(chw.shape[2] - crop[1] + 1)
                    for flip in (False, True)
                    if np.array_equal(
                        image.numpy(), chw[:, top : top + crop[0], left : left + crop[1]][:, :, :: (-1 if flip else 1)]
                    )
                ]
                assert found, i
