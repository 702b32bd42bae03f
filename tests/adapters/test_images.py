# tfrecord_lite.images on real image files written with Pillow: packing keeps the
# original bytes and labels exactly, shuffling is seeded, appending keeps label
# ids, broken images are reported with their path, removal and unpacking work,
# and the decode helpers give the pixels Pillow gives.
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PIL = pytest.importorskip("PIL")
from PIL import Image

import tfrecord_lite as tfr
from tfrecord_lite import images
from tfrecord_lite._datasets.sharded import ShardedRecords
from tfrecord_lite._images.records import image_example


def make_image(path: Path, seed: int, size=(7, 5), mode: str = "RGB", fmt: str = "PNG") -> None:
    rng = np.random.default_rng(seed)
    channels = {"RGB": 3, "RGBA": 4, "L": 1}[mode]
    pixels = rng.integers(0, 256, size=(size[1], size[0], channels), dtype=np.uint8)
    im = Image.fromarray(pixels[:, :, 0] if channels == 1 else pixels, mode=mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, format=fmt)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An ImageFolder tree: cat (PNG RGB + JPEG), dog (PNG L + PNG RGBA in a sub-folder), plus a non-image."""
    root = tmp_path / "photos"
    make_image(root / "cat" / "a.png", 1)
    make_image(root / "cat" / "b.jpg", 2, size=(9, 6), fmt="JPEG")
    make_image(root / "dog" / "c.png", 3, mode="L")
    make_image(root / "dog" / "deep" / "d.png", 4, size=(3, 8), mode="RGBA")
    (root / "dog" / "notes.txt").write_text("not an image")
    return root


def records_by_name(paths) -> dict:
    return {rec.filename: rec for rec in images.iter_image_records(paths)}


def test_pack_keeps_original_bytes_labels_and_sizes(folder: Path, tmp_path: Path) -> None:
    result = images.pack_images(folder, prefix=tmp_path / "out" / "pets", num_shards=2, seed=3)
    assert result.written == 4 and not result.skipped
    assert [os.path.basename(p) for p in result.paths] == [
        "pets-00000-of-00002.tfrecord",
        "pets-00001-of-00002.tfrecord",
    ]
    assert result.label_map == {"cat": 0, "dog": 1}
    assert json.loads(Path(result.label_map_path).read_text()) == {"cat": 0, "dog": 1}
    assert result.label_map_path == str(tmp_path / "out" / "pets.labels.json")

    got = records_by_name(result.paths)
    assert sorted(got) == ["cat/a.png", "cat/b.jpg", "dog/c.png", "dog/deep/d.png"]
    for name, rec in got.items():
        original = (folder / name).read_bytes()
        assert rec.encoded == original  # byte for byte, no re-encoding
        with Image.open(folder / name) as im:
            assert (rec.width, rec.height) == im.size
            assert rec.format == {"PNG": "png", "JPEG": "jpeg"}[im.format]
        cls = name.split("/")[0]
        assert rec.text == cls and rec.label == result.label_map[cls]
    # the raw Example carries TensorFlow's keys and kinds
    raw = tfr.decode_example(next(iter(tfr.iter_records(result.paths[0]))))
    assert set(raw) == {"image/encoded", "image/format", "image/height", "image/width",
                        "image/class/label", "image/class/text", "image/filename"}  # fmt: skip
    assert raw["image/height"].dtype == np.int64 and isinstance(raw["image/encoded"][0], bytes)


def test_shuffle_is_seeded(folder: Path, tmp_path: Path) -> None:
    def order(name: str, **kw) -> list:
        res = images.pack_images(folder, prefix=tmp_path / name / "x", **kw)
        return [r.filename for r in images.iter_image_records(res.paths)]

    assert order("a", seed=7) == order("b", seed=7)
    seeds = {tuple(order(f"s{s}", seed=s)) for s in range(6)}
    assert len(seeds) > 1  # 24 possible orders: six seeds do not all agree
    assert order("plain", shuffle=False) == ["cat/a.png", "cat/b.jpg", "dog/c.png", "dog/deep/d.png"]


def test_csv_source_with_numeric_labels(tmp_path: Path) -> None:
    make_image(tmp_path / "img" / "x.png", 5)
    make_image(tmp_path / "img" / "y.png", 6)
    make_image(tmp_path / "img" / "z.png", 7)
    (tmp_path / "list.csv").write_text("path,label\nimg/x.png,5\nimg/y.png,2\n\nimg/z.png,5\n")
    result = images.pack_images(tmp_path / "list.csv", prefix=tmp_path / "out" / "nums", shuffle=False)
    assert result.label_map == {"2": 2, "5": 5}  # decimal class names keep their number as id
    got = records_by_name(result.paths)
    assert {k: v.label for k, v in got.items()} == {"img/x.png": 5, "img/y.png": 2, "img/z.png": 5}
    assert got["img/y.png"].encoded == (tmp_path / "img" / "y.png").read_bytes()


def test_append_keeps_label_ids_and_old_shards(folder: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "out" / "pets"
    first = images.pack_images(folder, prefix=prefix, num_shards=2)
    before = {p: Path(p).read_bytes() for p in first.paths}

    more = tmp_path / "more"
    make_image(more / "ant" / "e.png", 8)  # a new class that sorts before the old ones
    make_image(more / "dog" / "f.png", 9)
    second = images.pack_images(more, prefix=prefix, append=True, num_shards=1)
    assert second.new_classes == ["ant"]
    assert second.label_map == {"cat": 0, "dog": 1, "ant": 2}
    assert images.load_label_map(images.label_map_path(prefix)) == {"cat": 0, "dog": 1, "ant": 2}
    renamed = [p.replace("-of-00002", "-of-00003") for p in first.paths]
    assert [Path(p).read_bytes() for p in renamed] == list(before.values())  # old shards: same bytes, new total
    assert os.path.basename(second.paths[0]) == "pets-00002-of-00003.tfrecord"

    everything = ShardedRecords(str(prefix) + "-*.tfrecord")
    assert len(everything) == 6
    got = {r.filename: r.label for r in map(images.parse_image_record, everything)}
    assert got["ant/e.png"] == 2 and got["dog/f.png"] == 1 and got["cat/a.png"] == 0
    everything.close()

    with pytest.raises(FileExistsError):
        images.pack_images(more, prefix=prefix)  # without append=True existing shards are not touched
    os.remove(images.label_map_path(prefix))
    with pytest.raises(FileNotFoundError, match="label map"):
        images.pack_images(more, prefix=prefix, append=True)  # ids could not stay stable without it


def test_conflicting_label_map_is_refused(folder: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "out" / "pets"
    images.pack_images(folder, prefix=prefix)
    with pytest.raises(ValueError, match="conflict"):
        images.pack_images(folder, prefix=prefix, append=True, label_map={"cat": 5})


def test_undecodable_images_are_reported_never_silent(folder: Path, tmp_path: Path) -> None:
    bad = folder / "cat" / "broken.png"
    bad.write_bytes((folder / "cat" / "a.png").read_bytes()[:40])  # a truncated PNG
    (folder / "dog" / "empty.jpg").write_bytes(b"")

    with pytest.raises(images.ImageDecodeError) as info:
        images.pack_images(folder, prefix=tmp_path / "o1" / "x")
    assert info.value.path in (str(bad), str(folder / "dog" / "empty.jpg"))
    assert info.value.path in str(info.value)
    assert not list((tmp_path / "o1").glob("*.tfrecord"))  # nothing published after a fatal error

    told = []
    result = images.pack_images(folder, prefix=tmp_path / "o2" / "x", on_bad_image=lambda path, err: told.append(path))
    assert sorted(told) == sorted([str(bad), str(folder / "dog" / "empty.jpg")])
    assert sorted(p for p, _ in result.skipped) == sorted(told)
    assert all("cannot decode image" in why for _, why in result.skipped)
    assert result.written == 4

    quiet = images.pack_images(folder, prefix=tmp_path / "o3" / "x", on_bad_image="skip")
    assert len(quiet.skipped) == 2 and quiet.written == 4  # listed in the result even without a callback


def test_decompression_bomb_guard_stays_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_image(tmp_path / "big" / "a" / "huge.png", 1, size=(60, 60))
    assert Image.MAX_IMAGE_PIXELS is not None
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # 3600 pixels > 2 x 1000: Pillow refuses
    with pytest.raises(images.ImageDecodeError, match="DecompressionBomb"):
        images.pack_images(tmp_path / "big", prefix=tmp_path / "out" / "x")
    assert Image.MAX_IMAGE_PIXELS == 1000  # the library never switched the guard off


def test_resize_and_reencode(folder: Path, tmp_path: Path) -> None:
    result = images.pack_images(folder, prefix=tmp_path / "out" / "small", resize=4, format="jpeg", quality=80)
    for rec in records_by_name(result.paths).values():
        assert rec.format == "jpeg" and rec.encoded[:3] == b"\xff\xd8\xff"
        assert max(rec.width, rec.height) == 4
        with Image.open(__import__("io").BytesIO(rec.encoded)) as im:
            assert im.size == (rec.width, rec.height)
    exact = images.pack_images(folder, prefix=tmp_path / "out" / "exact", resize=(3, 2))
    assert {(r.width, r.height) for r in records_by_name(exact.paths).values()} == {(3, 2)}
    with pytest.raises(ValueError, match="format"):
        images.pack_images(folder, prefix=tmp_path / "out" / "bad", format="xyz")


def test_decode_helpers_give_pillows_pixels(folder: Path, tmp_path: Path) -> None:
    result = images.pack_images(folder, prefix=tmp_path / "out" / "pets", shuffle=False)
    records = list(tfr.iter_records(result.paths[0]))
    for record in records:
        rec = images.parse_image_record(record)
        with Image.open(folder / rec.filename) as im:
            rgb = np.array(im.convert("RGB"))
            gray = np.array(im.convert("L"))
        hwc = images.decode_image(record)
        assert hwc.dtype == np.uint8 and hwc.shape == (rec.height, rec.width, 3)
        np.testing.assert_array_equal(hwc, rgb)
        np.testing.assert_array_equal(images.decode_image(tfr.decode_example(record), mode="L")[:, :, 0], gray)
    rgba = images.parse_image_record(records[3]).decode(mode=None)
    assert rgba.shape[2] == 4  # mode=None keeps the image's own channels
    with pytest.raises(images.ImageDecodeError):
        images.decode_image_bytes(b"garbage", name="x.png")


@pytest.mark.torch
def test_torch_transform_gives_chw_tensors_through_a_dataloader(folder: Path, tmp_path: Path) -> None:
    import torch
    from torch.utils.data import DataLoader

    from tfrecord_lite.torch import TFRecordDataset

    resized = images.pack_images(folder, prefix=tmp_path / "out" / "sq", resize=(4, 4), format="png", shuffle=False)
    ds = TFRecordDataset(resized.paths, transform=images.ImageTransform(mode="RGB"))
    image, label = ds[0]
    assert image.dtype == torch.uint8 and image.shape == (3, 4, 4)
    np.testing.assert_array_equal(image.permute(1, 2, 0).numpy(), images.decode_image(ds.raw(0)))
    assert label == images.parse_image_record(ds.raw(0)).label

    scaled = TFRecordDataset(resized.paths, transform=images.ImageTransform(mode="L", scale=True))
    batches = list(DataLoader(scaled, batch_size=3))
    xs = torch.cat([x for x, _ in batches])
    ys = torch.cat([y for _, y in batches])
    assert xs.shape == (4, 1, 4, 4) and xs.dtype == torch.float32 and 0 <= float(xs.min()) <= float(xs.max()) <= 1
    assert ys.tolist() == [0, 0, 1, 1]


def test_remove_images_filters_into_new_shards(folder: Path, tmp_path: Path) -> None:
    src = images.pack_images(folder, prefix=tmp_path / "v1" / "pets", num_shards=2)
    before = records_by_name(src.paths)
    result = images.remove_images(src.paths, prefix=tmp_path / "v2" / "pets", filenames={"cat/b.jpg"},
                                  keep=lambda rec: rec.filename != "dog/c.png")  # fmt: skip
    assert result.written == 2 and result.removed == 2
    after = records_by_name(result.paths)
    assert sorted(after) == ["cat/a.png", "dog/deep/d.png"]
    assert all(after[k] == before[k] for k in after)
    assert images.load_label_map(result.label_map_path) == src.label_map  # ids stay valid


def test_unpack_restores_the_tree_and_stays_inside(folder: Path, tmp_path: Path) -> None:
    src = images.pack_images(folder, prefix=tmp_path / "out" / "pets")
    evil = tmp_path / "evil.tfrecord"
    with tfr.TFRecordWriter(str(evil)) as w:
        w.write(image_example(b"x", "png", 1, 1, 0, "../..", "../../../escape.png"))
        w.write(image_example(b"y", "png", 1, 1, 0, "cat", "a.png"))  # clashes with cat/a.png
    n = images.unpack_images(list(src.paths) + [str(evil)], destination=tmp_path / "restored")
    assert n == 6
    restored = tmp_path / "restored"
    for name in ["cat/a.png", "cat/b.jpg", "dog/c.png"]:
        assert (restored / name).read_bytes() == (folder / name).read_bytes()
    assert (restored / "dog" / "d.png").read_bytes() == (folder / "dog" / "deep" / "d.png").read_bytes()
    assert (restored / "cat" / "a-1.png").read_bytes() == b"y"
    written = [p for p in restored.rglob("*") if p.is_file()]
    assert len(written) == 6 and [p.read_bytes() for p in written if p.name == "escape.png"] == [b"x"]
    assert not (tmp_path.parent / "escape.png").exists() and not (tmp_path / "escape.png").exists()


def test_importing_images_and_cli_stays_light() -> None:
    code = ("import sys, tfrecord_lite.images, tfrecord_lite.cli; "
            "heavy = [m for m in ('PIL', 'simplejpeg', 'torch', 'tqdm', 'tensorflow', 'sklearn') if m in sys.modules]; "
            "assert not heavy, heavy")  # fmt: skip
    subprocess.run([sys.executable, "-c", code], check=True)


def test_thread_count_does_not_change_the_shards(folder: Path, tmp_path: Path) -> None:
    one = images.pack_images(folder, prefix=tmp_path / "a" / "x", workers=1, seed=5)
    four = images.pack_images(folder, prefix=tmp_path / "b" / "x", workers=4, seed=5)
    assert [Path(p).read_bytes() for p in one.paths] == [Path(p).read_bytes() for p in four.paths]


def test_no_images_is_an_error_not_an_empty_dataset(tmp_path: Path) -> None:
    make_image(tmp_path / "flat" / "a.png", 1)  # images directly in the root: no class folders
    with pytest.raises(ValueError, match=r"no images found .*one sub-folder per class"):
        images.pack_images(tmp_path / "flat", prefix=tmp_path / "out" / "x")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
