# Images beyond the TF-models layout, on real files made with Pillow: records with other keys
# (image_raw, label) as TF tutorials write them, raw pixel bytes (image.tobytes() + a shape) and
# pack_images(format="raw"), file names from the format the bytes hold, and images of mixed sizes
# through real DataLoader batches (a clear error, then resize= / pad_to=). Pillow is the oracle
# of pixels; TensorFlow's decoders are, in tests/end_to_end/test_tf_images.py.
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

PIL = pytest.importorskip("PIL")
from PIL import Image

import tfrecord_lite as tfr
from tests._cli import run_cli
from tfrecord_lite import images


def pixels(seed: int, height: int, width: int, channels: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(height, width, channels), dtype=np.uint8)


def encoded(array: np.ndarray, fmt: str = "PNG") -> bytes:
    buf = io.BytesIO()
    Image.fromarray(array[:, :, 0] if array.shape[2] == 1 else array).save(buf, format=fmt)
    return buf.getvalue()


def write_tutorial_file(path: Path, arrays: list[np.ndarray], raw: bool) -> list[dict]:
    """Records as the TF tutorials write them: image_raw (PNG bytes or tobytes()), label, height, width, depth."""
    rows = []
    with tfr.TFRecordWriter(str(path)) as writer:
        for i, array in enumerate(arrays):
            height, width, depth = array.shape
            data = array.tobytes() if raw else encoded(array)
            row = {"image_raw": [data], "label": [i % 3], "height": [height], "width": [width], "depth": [depth]}
            writer.write_example(row)
            rows.append(row)
    return rows


def test_tutorial_keys_read_through_every_reader(tmp_path: Path) -> None:
    arrays = [pixels(i, 5 + i, 4, 3) for i in range(3)]
    path = tmp_path / "tutorial.tfrecord"
    write_tutorial_file(path, arrays, raw=False)
    record = next(tfr.iter_records(str(path)))

    np.testing.assert_array_equal(images.decode_image(record, image_key="image_raw"), arrays[0])
    recs = list(images.iter_image_records(str(path), image_key="image_raw", label_key="label"))
    assert [r.label for r in recs] == [0, 1, 2] and [r.format for r in recs] == ["png"] * 3
    assert [(r.height, r.width) for r in recs] == [a.shape[:2] for a in arrays]

    with pytest.raises(tfr.FeatureError) as info:
        images.decode_image(record)  # the default key is image/encoded: the error lists what there is
    message = str(info.value)
    assert "'image/encoded'" in message and "'image_raw'" in message and "'label'" in message
    assert "image_key=" in message


def test_image_transform_names_the_label_key_it_missed(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    path = tmp_path / "tutorial.tfrecord"
    write_tutorial_file(path, [pixels(0, 5, 4, 3)], raw=False)
    record = next(tfr.iter_records(str(path)))
    transform = images.ImageTransform(image_key="image_raw")  # label still image/class/label
    with pytest.raises(tfr.FeatureError, match=r"'image/class/label'.*'label'.*label_key="):
        transform(record)


def test_missing_key_on_the_command_line_names_it(tmp_path: Path) -> None:
    write_tutorial_file(tmp_path / "t.tfrecord", [pixels(1, 3, 3)], raw=False)
    proc = run_cli("unpack-images", "t.tfrecord", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 1
    assert "'image/encoded'" in proc.stderr and "'image_raw'" in proc.stderr and "--image-key" in proc.stderr
    proc = run_cli("unpack-images", "t.tfrecord", "-o", "out", "--image-key", "image_raw", "--label-key", "label",
                   cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with Image.open(tmp_path / "out" / "0" / "00000000.png") as im:
        np.testing.assert_array_equal(np.array(im), pixels(1, 3, 3))


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_raw_pixels_decode_to_the_array_written(tmp_path: Path, channels: int) -> None:
    arrays = [pixels(10 + i, 6, 5 + i, channels) for i in range(2)]
    path = tmp_path / "raw.tfrecord"
    write_tutorial_file(path, arrays, raw=True)
    recs = list(images.iter_image_records(str(path), image_key="image_raw", label_key="label"))
    assert [r.format for r in recs] == ["raw", "raw"]
    for rec, array in zip(recs, arrays, strict=True):
        np.testing.assert_array_equal(rec.decode(mode=None), array)
        with Image.fromarray(array[:, :, 0] if channels == 1 else array) as im:  # modes converted as Pillow does
            np.testing.assert_array_equal(rec.decode("RGB"), np.array(im.convert("RGB")))
            np.testing.assert_array_equal(rec.decode("L")[:, :, 0], np.array(im.convert("L")))


def test_raw_pixels_of_other_dtypes_and_without_a_channels_key() -> None:
    floats = np.random.default_rng(3).random((4, 3, 2), dtype=np.float32)
    row = {"image_raw": [floats.tobytes()], "height": [4], "width": [3], "depth": [2], "dtype": [b"float32"]}
    got = images.decode_image(tfr.encode_example(row), mode=None, image_key="image_raw")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, floats)
    with pytest.raises(images.ImageDecodeError, match="mode=None"):
        images.decode_image(tfr.encode_example(row), mode="RGB", image_key="image_raw")

    gray = pixels(4, 7, 2, 1)  # MNIST-style: height and width only
    row = {"image_raw": [gray.tobytes()], "height": [7], "width": [2], "label": [5]}
    np.testing.assert_array_equal(images.decode_image(tfr.encode_example(row), mode=None, image_key="image_raw"), gray)


def test_raw_pixels_with_the_wrong_length_are_a_clear_error() -> None:
    data = pixels(5, 4, 4).tobytes()
    row = {"image_raw": [data[:-1]], "height": [4], "width": [4], "depth": [3], "label": [0]}
    rec = images.parse_image_record(tfr.encode_example(row), image_key="image_raw")
    with pytest.raises(images.ImageDecodeError) as info:
        rec.decode(mode=None)
    message = str(info.value)
    assert "'image_raw'" in message and "48 bytes expected, found 47" in message
    row = {"image/encoded": [data], "image/format": [b"raw"], "image/height": [2**40], "image/width": [2**40]}
    with pytest.raises(images.ImageDecodeError, match="not 1099511627776 x 1099511627776 pixels"):
        images.decode_image(tfr.encode_example(row), mode=None)  # no allocation from the huge shape
    row = {"image/encoded": [data], "image/format": [b"raw"], "image/height": [4], "image/width": [4],
           "image/dtype": [b"object"]}  # fmt: skip
    with pytest.raises(images.ImageDecodeError, match="not a number type"):
        images.decode_image(tfr.encode_example(row), mode=None)


@given(
    shape=st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 4)),
    dtype=st.sampled_from(["uint8", "uint16", "int32", "float32", "float64"]),
    cut=st.integers(-3, 3),
)
def test_raw_pixels_round_trip_or_fail_clearly(shape: tuple[int, int, int], dtype: str, cut: int) -> None:
    array = (np.arange(np.prod(shape)) % 250).astype(dtype).reshape(shape)
    data = array.tobytes() + b"\x01" * max(cut, 0)
    data = data[: len(data) + cut] if cut < 0 else data
    row = {"image/encoded": [data], "image/format": [b"raw"], "image/height": [shape[0]], "image/width": [shape[1]],
           "image/channels": [shape[2]], "image/dtype": [dtype.encode()]}  # fmt: skip
    if cut == 0:
        np.testing.assert_array_equal(images.decode_image(tfr.encode_example(row), mode=None), array)
    else:
        with pytest.raises(images.ImageDecodeError, match=f"bytes expected, found {len(data)}"):
            images.decode_image(tfr.encode_example(row), mode=None)


def test_pack_raw_and_unpack_as_png(tmp_path: Path) -> None:
    source = tmp_path / "photos"
    originals = {"cat/a.png": pixels(1, 5, 4, 3), "cat/b.png": pixels(2, 3, 6, 4), "dog/c.png": pixels(3, 2, 2, 1)}
    for name, array in originals.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_bytes(encoded(array))
    result = images.pack_images(source, prefix=tmp_path / "out" / "pets", format="raw")
    fields = tfr.decode_example(next(tfr.iter_records(result.paths[0])))
    assert fields["image/format"] == [b"raw"] and fields["image/dtype"] == [b"uint8"]
    for rec in images.iter_image_records(result.paths):
        array = originals[rec.filename]
        assert rec.format == "raw" and rec.channels == array.shape[2] and rec.encoded == array.tobytes()
        np.testing.assert_array_equal(rec.decode(mode=None), array)

    assert images.unpack_images(result.paths, destination=tmp_path / "restored") == 3
    for name, array in originals.items():
        with Image.open(tmp_path / "restored" / name) as im:
            assert im.format == "PNG"
            np.testing.assert_array_equal(np.array(im).reshape(array.shape), array)

    proc = run_cli("pack-images", "photos", "cli/pets", "--format", "raw", "--resize", "2x3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    recs = list(images.iter_image_records(sorted(str(p) for p in (tmp_path / "cli").glob("*.tfrecord"))))
    assert {(r.format, r.height, r.width) for r in recs} == {("raw", 3, 2)}
    assert all(r.decode(mode=None).shape[:2] == (3, 2) for r in recs)


def test_unpack_names_files_for_the_format_their_bytes_hold(tmp_path: Path) -> None:
    source = tmp_path / "photos" / "cls"
    source.mkdir(parents=True)
    (source / "png_named.jpg").write_bytes(encoded(pixels(1, 4, 4)))
    (source / "jpeg_named.png").write_bytes(encoded(pixels(2, 4, 4), "JPEG"))
    (source / "gif_named.bmp").write_bytes(encoded(pixels(3, 4, 4), "GIF"))
    (source / "right.webp").write_bytes(encoded(pixels(4, 4, 4), "WEBP"))
    result = images.pack_images(tmp_path / "photos", prefix=tmp_path / "out" / "x")
    images.unpack_images(result.paths, destination=tmp_path / "restored")
    got = sorted(p.name for p in (tmp_path / "restored" / "cls").iterdir())
    assert got == ["gif_named.gif", "jpeg_named.jpg", "png_named.png", "right.webp"]
    for path in (tmp_path / "restored" / "cls").iterdir():
        with Image.open(path) as im:
            assert images.sniff_image_format(path.read_bytes()) == {"MPO": "jpeg"}.get(im.format, im.format.lower())


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "BMP", "WEBP", "TIFF", "PPM"])
def test_sniffing_knows_what_pillow_writes(fmt: str) -> None:
    data = encoded(pixels(7, 3, 5), fmt)
    assert images.sniff_image_format(data) == fmt.lower()
    assert images.sniff_image_format(pixels(7, 3, 5).tobytes()) is None


def mixed_size_dataset(tmp_path: Path) -> tuple[list, dict[str, np.ndarray]]:
    source = tmp_path / "mixed"
    arrays = {f"c{i % 2}/{i}.png": pixels(i, 4 + i % 2, 5 + i % 2) for i in range(6)}
    for name, array in arrays.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_bytes(encoded(array))
    return images.pack_images(source, prefix=tmp_path / "out" / "mixed", shuffle=False).paths, arrays


@pytest.mark.torch
def test_mixed_sizes_get_a_clear_error_then_resize_and_pad(tmp_path: Path) -> None:
    import torch
    from torch.utils.data import DataLoader

    from tfrecord_lite.torch import TFRecordDataset

    paths, arrays = mixed_size_dataset(tmp_path)
    plain = TFRecordDataset(paths, transform=images.ImageTransform())
    for workers in (0, 1):
        loader = DataLoader(plain, batch_size=6, collate_fn=plain.collate_fn, num_workers=workers)
        with pytest.raises(ValueError, match=r"element 0 .*\(3x4x5, 3x5x6\).*resize=\(h, w\).*pad_to=\(h, w\)"):
            next(iter(loader))

    names = [images.parse_image_record(plain.raw(i)).filename for i in range(len(plain))]
    resized = TFRecordDataset(paths, transform=images.ImageTransform(resize=(3, 7)))
    x, y = next(iter(DataLoader(resized, batch_size=6, collate_fn=resized.collate_fn)))
    assert x.shape == (6, 3, 3, 7) and x.dtype == torch.uint8 and y.tolist() == [0, 0, 0, 1, 1, 1]
    for image, name in zip(x, names, strict=True):
        with Image.fromarray(arrays[name]) as im:
            expected = np.array(im.resize((7, 3), Image.Resampling.BILINEAR))
        np.testing.assert_array_equal(image.permute(1, 2, 0).numpy(), expected)

    padded = TFRecordDataset(paths, transform=images.ImageTransform(pad_to=(6, 6), fill=9, scale=True))
    x, _ = next(iter(DataLoader(padded, batch_size=6, num_workers=1)))
    assert x.shape == (6, 3, 6, 6) and x.dtype == torch.float32
    for image, name in zip(x, names, strict=True):
        height, width = arrays[name].shape[:2]
        hwc = (image.permute(1, 2, 0).numpy() * 255).round().astype(np.uint8)
        np.testing.assert_array_equal(hwc[:height, :width], arrays[name])  # top left, unscaled
        assert (hwc[height:] == 9).all() and (hwc[:, width:] == 9).all()
    with pytest.raises(images.ImageDecodeError, match=r"does not fit pad_to=\(5, 5\)"):
        images.ImageTransform(pad_to=(5, 5))(plain.raw(names.index("c1/1.png")))
    with pytest.raises(ValueError, match="not both"):
        images.ImageTransform(resize=(2, 2), pad_to=(2, 2))


@pytest.mark.torch
def test_raw_images_with_other_keys_through_a_dataloader(tmp_path: Path) -> None:
    from torch.utils.data import DataLoader

    from tfrecord_lite.torch import IterableTFRecordDataset

    arrays = [pixels(i, 4, 4, 3) for i in range(5)]
    write_tutorial_file(tmp_path / "raw.tfrecord", arrays, raw=True)
    transform = images.ImageTransform(image_key="image_raw", label_key="label", mode="L")
    ds = IterableTFRecordDataset(str(tmp_path / "raw.tfrecord"), transform=transform)
    batches = list(DataLoader(ds, batch_size=5))
    x, y = batches[0]
    assert x.shape == (5, 1, 4, 4) and y.tolist() == [0, 1, 2, 0, 1]
    for image, array in zip(x, arrays, strict=True):
        np.testing.assert_array_equal(image[0].numpy(), np.array(Image.fromarray(array).convert("L")))


@given(
    data=st.binary(max_size=64),
    height=st.integers(-2, 9),
    width=st.integers(-2, 9),
    channels=st.one_of(st.none(), st.integers(-1, 5)),
    dtype=st.sampled_from([None, b"uint8", b"float32", b"int16", b"object", b"V0", b"nonsense", b"S3"]),
    mode=st.sampled_from([None, "RGB", "L"]),
)
def test_any_bytes_and_shape_decode_or_raise_a_clear_error(
    data: bytes, height: int, width: int, channels: int | None, dtype: bytes | None, mode: str | None
) -> None:
    row: dict = {"image_raw": [data], "height": [height], "width": [width]}
    if channels is not None:
        row["depth"] = [channels]
    if dtype is not None:
        row["dtype"] = [dtype]
    try:
        got, message = images.decode_image(tfr.encode_example(row), mode=mode, image_key="image_raw"), ""
    except images.ImageDecodeError as error:  # the only error: nothing else escapes
        got, message = None, str(error)
    if got is None:
        assert "image_raw" in message or "cannot decode image" in message or "channels" in message
    else:
        assert got.ndim == 3 and got.shape[:2] == (height, width)
