"""`tfrecord-lite tfds info` and `tfds export` on prepared TensorFlow Datasets folders, run as a
user runs them: the description, features and splits printed; a split exported to Parquet, to
TFRecord (the records as they are, decoding to what `load` gives) and to image files in class
folders; errors as one line with their exit status."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests._tfds import image_of, png, write_tfds_folder
from tests.conftest import DATA_DIR
from tfrecord_lite import tfds

CLASSES = ("cat", "dog", "fox")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tfds")
    return write_tfds_folder(root, name="pets", version="1.2.0", shape=(12, 12, 3), classes=CLASSES,
                             splits={"train": (20, 20, 10), "test": (12,)})  # fmt: skip


def test_info_prints_the_dataset(folder: Path) -> None:
    proc = run_cli("tfds", "info", str(folder))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "pets 1.2.0"
    assert f"  folder       {folder}" in lines and "  file format  tfrecord" in lines
    assert "  description  Handwritten digits, or their look-alikes." in lines
    text = proc.stdout
    assert "Image(shape=(12, 12, 3)" in text and "ClassLabel" in text
    assert "  train          50 examples  3 shards" in lines and "  test           12 examples  1 shard" in lines
    assert "    pets-train.tfrecord-00002-of-00003  10" in lines


def test_info_as_json(folder: Path) -> None:
    proc = run_cli("tfds", "info", str(folder), "--json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert (info["name"], info["version"], info["file_format"]) == ("pets", "1.2.0", "tfrecord")
    train = info["splits"]["train"]
    assert train["num_examples"] == 50 and train["shard_lengths"] == [20, 20, 10]
    assert train["files"] == [str(folder / f"pets-train.tfrecord-0000{k}-of-00003") for k in range(3)]
    assert any("ClassLabel" in line for line in info["features"])
    assert info["class_names"] == {"label": list(CLASSES)}


def test_export_parquet(folder: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "train.parquet"
    proc = run_cli("tfds", "export", str(folder), "--split", "train[:30%]", "--to", "parquet", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"wrote 15 examples of train[:30%] to {out}" in proc.stderr
    table = pq.read_table(out)
    expected = list(tfds.load(folder, split="train[:30%]", decode=False))
    assert table.num_rows == 15
    assert table.column("label").to_pylist() == [int(e["label"]) for e in expected]
    assert table.column("image").to_pylist() == [e["image"] for e in expected]
    again = run_cli("tfds", "export", str(folder), "--split", "train", "--to", "parquet", str(out))
    assert again.returncode == 2 and "already exists (use --force" in again.stderr


def test_export_tfrecord_keeps_the_records(folder: Path, tmp_path: Path) -> None:
    pytest.importorskip("PIL")  # the images are decoded
    out = tmp_path / "some.tfrecord.gz"
    split = "train[15:45]+test[-2:]"
    proc = run_cli("tfds", "export", str(folder), "--split", split, "--to", "tfrecord", str(out), "--no-verify")
    assert proc.returncode == 0, proc.stderr
    with open(out, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"  # GZIP, from the name
    records = list(tfr.iter_records(out))
    selected = tfds.load(folder, split=split)
    assert len(records) == len(selected) == 32
    for i, record in enumerate(records):
        got, want = selected.decode(record), selected[i]
        assert int(got["label"]) == int(want["label"]) and (got["image"] == want["image"]).all()
    shards = [path for split in tfds.info(folder).splits.values() for path in split.files]
    originals = {r for path in shards for r in tfr.iter_records(path)}
    assert set(records) <= originals  # TFDS's own Example bytes, not re-encoded


def test_export_images_into_class_folders(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "images"
    proc = run_cli("tfds", "export", str(folder), "--split", "test", "--to", "images", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "wrote 12 images of test" in proc.stderr
    assert sorted(os.listdir(out)) == list(CLASSES)
    files = sorted((out / "dog").iterdir())
    assert len(files) == 4 and all(f.suffix == ".png" for f in files)
    written = {f.read_bytes() for f in files}
    assert written == {png(image_of(1, i, (12, 12, 3))) for i in (1, 4, 7, 10)}  # the stored bytes
    again = run_cli("tfds", "export", str(folder), "--split", "test", "--to", "images", str(out))
    assert again.returncode == 2 and "already holds files" in again.stderr and "--force" in again.stderr
    forced = run_cli("tfds", "export", str(folder), "--split", "test", "--to", "images", str(out), "--force")
    assert forced.returncode == 0, forced.stderr
    assert sum(len(files) for _, _, files in os.walk(out)) == 12  # replaced, not added


def test_images_need_an_image_and_a_class_label(folder: Path, tmp_path: Path) -> None:
    features = json.loads((folder / "features.json").read_text())
    del features["featuresDict"]["features"]["label"]
    bare = tmp_path / "bare"
    bare.mkdir()
    for path in folder.iterdir():
        (bare / path.name).write_bytes(path.read_bytes())
    (bare / "features.json").write_text(json.dumps(features))
    proc = run_cli("tfds", "export", str(bare), "--split", "test", "--to", "images", str(tmp_path / "out"))
    assert proc.returncode == 1 and "ClassLabel" in proc.stderr and str(bare) in proc.stderr
    assert not (tmp_path / "out").exists()


def test_errors_name_the_path(folder: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    proc = run_cli("tfds", "info", str(missing))
    assert proc.returncode == 2 and str(missing) in proc.stderr and proc.stderr.count("\n") == 1
    proc = run_cli("tfds", "info", str(tmp_path))
    assert proc.returncode == 2 and "dataset_info.json" in proc.stderr and str(tmp_path) in proc.stderr
    proc = run_cli("tfds", "export", str(folder), "--split", "validation", "--to", "parquet", str(tmp_path / "x"))
    assert proc.returncode == 2 and "validation" in proc.stderr and "train" in proc.stderr
    proc = run_cli("tfds", "export", str(folder), "--to", "csv", str(tmp_path / "x"))
    assert proc.returncode == 2 and "--to" in proc.stderr
    proc = run_cli("tfds", "export", str(folder), "--to", "tfrecord", "s3://bucket/out.tfrecord")
    assert proc.returncode == 2 and "writes a local file" in proc.stderr
    proc = run_cli("tfds")
    assert proc.returncode == 2


def test_class_names_cannot_lead_outside_the_destination(tmp_path: Path) -> None:
    folder = write_tfds_folder(tmp_path / "in", name="odd", classes=("../up", "a/b", ".."), splits={"train": (6,)})
    out = tmp_path / "deep" / "out"
    proc = run_cli("tfds", "export", str(folder), "--to", "images", str(out))
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(out)) == [".._up", "a_b", "unlabelled"]
    assert sorted(os.listdir(tmp_path / "deep")) == ["out"]


@pytest.mark.tf
def test_tensorflow_datasets_reads_these_folders_as_load_does(folder: Path) -> None:
    pytest.importorskip("PIL")  # the images are decoded
    tf_tfds = pytest.importorskip("tensorflow_datasets")
    builder = tf_tfds.builder_from_directory(str(folder))
    assert builder.info.features["label"].names == list(CLASSES)
    for split in ("train", "train[5:25]+test[-3:]"):
        theirs = list(tf_tfds.as_numpy(builder.as_dataset(split=split)))
        ours = tfds.load(folder, split=split)
        assert len(theirs) == len(ours)
        for a, b in zip(theirs, ours, strict=True):
            assert int(a["label"]) == int(b["label"]) and (a["image"] == b["image"]).all()


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of tests/data/tfds (folders TFDS made: every connector, and RLDS episodes)."""
    root = tmp_path_factory.mktemp("stored")
    for name in ("everything", "episodes"):
        shutil.copytree(DATA_DIR / "tfds" / name, root / name, ignore=shutil.ignore_patterns("*.tfrlidx"))
    return root


def test_every_connector_exports(stored: Path, tmp_path: Path) -> None:
    pytest.importorskip("PIL")  # the images are decoded
    folder = stored / "everything"
    proc = run_cli("tfds", "info", str(folder))
    assert proc.returncode == 0, proc.stderr
    assert "'video': Video(Image(shape=(4, 4, 3), dtype=uint8))" in proc.stdout
    out = tmp_path / "everything.tfrecord"
    proc = run_cli("tfds", "export", str(folder), "--split", "train[25%:]+test", "--to", "tfrecord", str(out))
    assert proc.returncode == 0, proc.stderr
    selected = tfds.load(folder, split="train[25%:]+test")
    records = list(tfr.iter_records(out))
    assert len(records) == len(selected) == 23
    assert [selected.decode(r)["name"] for r in records] == [e["name"] for e in selected]
    images = tmp_path / "images"
    proc = run_cli("tfds", "export", str(folder), "--split", "test", "--to", "images", str(images))
    assert proc.returncode == 0, proc.stderr  # `image`, not `deep` (uint16) or `gray_jpeg` listed before it
    names = tfds.info(folder).class_names("label")
    written = sorted((p.parent.name, p.read_bytes()) for p in images.rglob("*.png"))
    raw = tfds.load(folder, split="test", decode=False)
    assert written == sorted((names[int(e["label"])], e["image"]) for e in raw)
    proc = run_cli("tfds", "export", str(folder), "--to", "images", "--image-key", "name", str(tmp_path / "x"))
    assert proc.returncode == 1 and "'name' is a Tensor, not an Image" in proc.stderr and "'image'" in proc.stderr


def test_rlds_episodes_export(stored: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    folder = stored / "episodes"
    out = tmp_path / "episodes.parquet"
    proc = run_cli("tfds", "export", str(folder), "--split", "test", "--to", "parquet", str(out))
    assert proc.returncode == 0, proc.stderr
    assert pq.read_table(out).equals(tfds.to_arrow(folder, split="test"))
    proc = run_cli("tfds", "export", str(folder), "--to", "images", str(tmp_path / "img"))
    assert proc.returncode == 1 and "has no Image or ClassLabel there" in proc.stderr


@pytest.mark.object_store
def test_a_folder_on_s3(folder: Path, s3: Any, tmp_path: Path) -> None:
    from tfrecord_lite.viewer import Catalog

    prefix = f"{s3.bucket}/data/pets/1.2.0"
    for path in folder.iterdir():
        if not path.name.endswith(".tfrlidx"):
            s3.fs.pipe(f"{prefix}/{path.name}", path.read_bytes())
    proc = run_cli("tfds", "info", prefix, env=s3.environment)
    assert proc.returncode == 0, proc.stderr
    assert (
        f"  folder       {prefix}" in proc.stdout.splitlines()
        and "  test           12 examples  1 shard" in proc.stdout
    )
    out = tmp_path / "dogs"
    proc = run_cli("tfds", "export", prefix, "--split", "test", "--to", "images", str(out), env=s3.environment)
    assert proc.returncode == 0, proc.stderr
    assert sorted(f.read_bytes() for f in (out / "dog").iterdir()) == sorted(
        png(image_of(1, i, (12, 12, 3))) for i in (1, 4, 7, 10)
    )
    catalog = Catalog(prefix, storage_options=s3.storage_options)
    try:
        assert [(r.name, r.count) for r in catalog.splits] == [("train", 50), ("test", 12)]
        assert catalog.label_names == {"0": "cat", "1": "dog", "2": "fox"}
    finally:
        catalog.close()


def test_info_text_from_the_folder_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    folder = write_tfds_folder(tmp_path, name="odd", description="a \x1b]0;title\x07 dataset", splits={"train": (2,)})
    proc = run_cli("tfds", "info", str(folder))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "  description  a \\u001b]0;title\\u0007 dataset" in proc.stdout.splitlines()
