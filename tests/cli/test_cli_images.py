# pack-images as a user runs it: label maps from text and CSV files, clear errors for bad ones
# and for classes they lack, --append that refuses a different image under a taken name (exit
# status 1) unless --on-conflict says what to do, one shard name scheme after an append, and
# nothing left behind by a failed first run.
from __future__ import annotations

import glob
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL")
from PIL import Image

from tests._cli import run_cli


def make_image(path: Path, seed: int) -> None:
    pixels = np.random.default_rng(seed).integers(0, 256, size=(4, 6, 3), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels, mode="RGB").save(path, format="PNG")


@pytest.fixture
def photos(tmp_path: Path) -> Path:
    for name, seed in (("cat/a.png", 1), ("dog/b.png", 2)):
        make_image(tmp_path / "photos" / name, seed)
    return tmp_path / "photos"


def test_label_map_files_and_their_errors(photos: Path, tmp_path: Path) -> None:
    (tmp_path / "labels.txt").write_text("dog\ncat\n")
    ok = run_cli("pack-images", str(photos), str(tmp_path / "out" / "a"), "--label-map", str(tmp_path / "labels.txt"))
    assert ok.returncode == 0 and "label map: " in ok.stderr and "(2 classes)" in ok.stderr
    assert (tmp_path / "out" / "a.labels.json").read_text().split() == ["{", '"dog":', "0,", '"cat":', "1", "}"]

    (tmp_path / "bad.json").write_text('{"cat": "0", "dog": 1}')
    bad = run_cli("pack-images", str(photos), str(tmp_path / "new" / "b"), "--label-map", str(tmp_path / "bad.json"))
    assert bad.returncode == 1 and "bad.json: class 'cat' has the id '0' (str)" in bad.stderr
    assert not (tmp_path / "new").exists()  # a failed first run leaves no output folder

    (tmp_path / "cats.csv").write_text("id,name\n0,cat\n")
    args = ("pack-images", str(photos), str(tmp_path / "new" / "c"), "--label-map", str(tmp_path / "cats.csv"))
    lacking = run_cli(*args)
    assert lacking.returncode == 1 and "not in the label map" in lacking.stderr and "'dog'" in lacking.stderr
    assert "--extend-label-map" in lacking.stderr and not (tmp_path / "new").exists()
    assert run_cli(*args, "--extend-label-map").returncode == 0


def test_append_conflicts_duplicates_and_shard_names(photos: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "out" / "pets")
    assert run_cli("pack-images", str(photos), out, "--shards", "2").returncode == 0
    make_image(photos / "cat" / "a.png", 10)  # a different image under a packed name
    listing = sorted(os.listdir(tmp_path / "out"))
    refused = run_cli("pack-images", str(photos), out, "--append")
    assert refused.returncode == 1 and "'cat/a.png'" in refused.stderr and "--on-conflict" in refused.stderr
    assert sorted(os.listdir(tmp_path / "out")) == listing

    skipped = run_cli("pack-images", str(photos), out, "--append", "--on-conflict", "skip")
    assert skipped.returncode == 0
    assert "skipped 1 image whose bytes the dataset already holds (e.g. dog/b.png)" in skipped.stderr
    assert "left out 1 image named like other packed images: cat/a.png" in skipped.stderr
    assert "packed 0 images into 0 shards" in skipped.stderr

    renamed = run_cli("pack-images", str(photos), out, "--append", "--on-conflict", "rename", "--shards", "1")
    assert renamed.returncode == 0 and "cat/a.png -> cat/a-1.png" in renamed.stderr
    shards = sorted(os.path.basename(p) for p in glob.glob(out + "-?????-of-00003.tfrecord"))
    assert shards == [f"pets-0000{k}-of-00003.tfrecord" for k in range(3)]  # one glob matches every shard
    count = run_cli("count", out)
    assert count.returncode == 0 and count.stdout.strip() == "3" and count.stderr == ""


def test_remove_images_reads_the_inputs_compression_and_can_skip_damage(photos: Path, tmp_path: Path) -> None:
    """-z is the inputs' compression, --to the new shards'; --on-error skip steps over a damaged record."""
    packed = run_cli("pack-images", str(photos), str(tmp_path / "gz" / "pets"), "--to", "gzip", "--no-shuffle")
    assert packed.returncode == 0
    (shard,) = glob.glob(str(tmp_path / "gz" / "pets-*.tfrecord.gz"))
    wrong = run_cli("remove-images", shard, "-z", "zlib", "-o", str(tmp_path / "z" / "pets"), "--class", "dog")
    assert wrong.returncode != 0 and "is GZIP-compressed, but compression='zlib' was given" in wrong.stderr
    kept = run_cli("remove-images", shard, "-z", "gzip", "-o", str(tmp_path / "v2" / "pets"), "--class", "dog")
    assert kept.returncode == 0 and "kept 1 image, removed 1" in kept.stderr
    plain = run_cli("pack-images", str(photos), str(tmp_path / "plain" / "pets"), "--no-shuffle")
    assert plain.returncode == 0
    (shard,) = glob.glob(str(tmp_path / "plain" / "pets-*.tfrecord"))
    data = bytearray(Path(shard).read_bytes())
    data[len(data) // 4] ^= 0xFF  # inside the first record's payload
    Path(shard).write_bytes(bytes(data))
    strict = run_cli("remove-images", shard, "-o", str(tmp_path / "strict" / "pets"), "--class", "cat")
    assert strict.returncode != 0 and not glob.glob(str(tmp_path / "strict" / "*"))
    lenient = run_cli(
        "remove-images", shard, "-o", str(tmp_path / "lenient" / "pets"), "--class", "cat", "--on-error", "skip"
    )
    assert lenient.returncode == 0, lenient.stderr
    assert "skipped" in lenient.stderr.lower() or "damaged" in lenient.stderr.lower()


def test_pack_images_raw_prints_the_spec_that_reads_the_pixels(photos: Path, tmp_path: Path) -> None:
    import tfrecord_lite as tfr

    out = str(tmp_path / "raw" / "pets")
    packed = run_cli("pack-images", str(photos), out, "--format", "raw", "--no-shuffle")
    assert packed.returncode == 0, packed.stderr
    assert 'tfr.RawFeature([4, 6, 3], "uint8")' in packed.stdout + packed.stderr
    spec = {"image/encoded": tfr.RawFeature([4, 6, 3], "uint8")}
    (batch,) = tfr.iter_example_batches(glob.glob(out + "-*.tfrecord"), features=spec)
    expected = [np.random.default_rng(seed).integers(0, 256, size=(4, 6, 3), dtype=np.uint8) for seed in (1, 2)]
    assert np.array_equal(batch["image/encoded"], np.stack(expected))
    make_image(photos / "dog" / "c.png", 3)
    Image.open(photos / "dog" / "c.png").resize((5, 5)).save(photos / "dog" / "c.png")
    mixed = run_cli("pack-images", str(photos), str(tmp_path / "mixed" / "pets"), "--format", "raw")
    assert mixed.returncode == 0 and "raw pixels of different sizes" in mixed.stdout + mixed.stderr
