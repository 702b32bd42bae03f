"""Every example in `tfrecord-lite --help` and in each command's `--help` runs, as shown, in a
folder holding the files the examples name (data/, train.tfrecord, photos/ ...). The examples
are read from the parser itself, so an example cannot be added without being run here."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests._tfds import write_tfds_folder
from tests.conftest import DATA_DIR
from tests.datasets.test_messages import descriptor_set, orders, runtime_class
from tfrecord_lite.cli import build_parser

PROG = "tfrecord-lite"
# what some examples need first, besides the shared files (their outputs of another example)
PREPARE = {
    "convert train.tfrecord.gz train.tfrecord": (
        "tfrecord-lite convert train.tfrecord train.tfrecord.gz && rm train.tfrecord"
    ),
    "pack-images new_photos/ out/photos --append": "tfrecord-lite pack-images photos/ out/photos --shards 8",
    "unpack-images out/photos-*": "tfrecord-lite pack-images photos/ out/photos --shards 2",
    "merge data/train-*.tfrecord -o all.tfrecord": "rm all.tfrecord",
    "salvage damaged.tfrecord": "head -c 100 train.tfrecord > damaged.tfrecord",
    "salvage cut.tfrecord.gz": "tfrecord-lite convert train.tfrecord t.gz && head -c 60 t.gz > cut.tfrecord.gz",
    "remove-images": "tfrecord-lite pack-images photos/ out/photos --shards 2 && rm -f out/photos*.labels.json.lock",
    "convert data/ train.parquet --features spec.json": "tfrecord-lite schema --all --spec-json data/ > spec.json",
    "convert train.parquet out/train": "tfrecord-lite convert train.tfrecord train.parquet",
}


def help_examples() -> list[str]:
    """The example command lines of the main help and of every command's help."""
    parsers, epilogs = [build_parser()], []
    while parsers:  # the main parser, its commands, and theirs (`tfds info`)
        parser = parsers.pop()
        epilogs.append(parser.epilog or "")
        if parser._subparsers is not None:
            parsers += parser._subparsers._group_actions[0].choices.values()  # type: ignore[attr-defined]
    lines = [line.strip() for epilog in epilogs for line in epilog.splitlines()]
    # an example is `tfrecord-lite ...`, then (after two spaces or more) what it does
    return sorted({re.split(r"\s{2,}", line)[0] for line in lines if line.startswith(PROG + " ")})


def make_world(root: Path) -> None:
    """The files the examples name."""
    rng_labels = ["cat", "dog"]
    (root / "data").mkdir()
    for k in range(3):
        with tfr.TFRecordWriter(root / "data" / f"train-{k:05d}-of-00003.tfrecord") as w:
            for i in range(10):
                w.write_example({"label": [i % 2], "image/class/text": rng_labels[i % 2].encode()})
    with tfr.TFRecordWriter(root / "data" / "extra.tfrecord.gz", compression="gzip") as w:
        w.write_example({"label": [1], "image/class/text": b"dog"})
    for name, n in (("train.tfrecord", 20), ("big.tfrecord", 50), ("all.tfrecord", 1300)):
        with tfr.TFRecordWriter(root / name) as w:
            for i in range(n):
                w.write_example({"label": [i % 2]})
    for name in ("a.tfrecord", "b.tfrecord"):
        shutil.copy(root / "train.tfrecord", root / name)
    image = pytest.importorskip("PIL.Image")
    for folder, classes in (("photos", ("cat", "dog", "blurry")), ("new_photos", ("bird",))):
        for cls in classes:
            (root / folder / cls).mkdir(parents=True)
            for i in range(3):
                image.new("RGB", (4 + i, 5), (i * 40, 0, 0)).save(root / folder / cls / f"00{i + 1}.jpg")
    with open(root / "list.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([("path", "label"), ("photos/cat/001.jpg", "cat"), ("photos/dog/002.jpg", "dog")])
    (root / "bad.txt").write_text("cat/003.jpg\n")
    shutil.copytree(DATA_DIR / "tensorboard" / "logdir", root / "logs")  # a TensorBoard logdir
    shutil.copytree(DATA_DIR / "tensorboard" / "logdir" / "v2", root / "logs" / "run-7")
    (root / "shop.pb").write_bytes(descriptor_set())  # records of a message of one's own
    with tfr.TFRecordWriter(root / "orders.tfrecord") as w:
        for record in orders(runtime_class(descriptor_set(), "shop.Order")):
            w.write(record)
    write_tfds_folder(root / "datasets")  # a prepared TensorFlow Datasets folder: datasets/mnist/3.0.1
    with tfr.TFRecordWriter(root / "mnist.tfrecord") as w:  # raw pixels under the TF tutorials' keys
        for i in range(3):
            w.write_example({"image_raw": [bytes(range(i, i + 16))], "label": [i], "height": [4], "width": [4]})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("world")
    make_world(root)
    return root


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a command line in bash, `tfrecord-lite` being this interpreter's package."""
    tool = f"'{sys.executable}' -m tfrecord_lite"
    script = "set -o pipefail\n" + command.replace(PROG, tool)
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, check=False)


def test_the_help_has_examples() -> None:
    examples = help_examples()
    assert len(examples) >= 20
    for command in ("convert data/*.tfrecord --to gzip -o gz/", "convert a.tfrecord b.tfrecord --to gzip gz/"):
        assert f"{PROG} {command}" in examples


@pytest.mark.parametrize("example", help_examples())
def test_help_example_runs(example: str, world: Path, tmp_path: Path) -> None:
    if "| jq" in example and shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    cwd = Path(shutil.copytree(world, tmp_path / "w"))
    for key, setup in PREPARE.items():
        if example.startswith(f"{PROG} {key}"):
            proc = shell(setup, cwd)
            assert proc.returncode == 0, proc.stderr
    proc = shell(example, cwd)
    assert proc.returncode == 0, f"{example}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr


def test_help_shows_no_doubled_percent_signs() -> None:
    parser = build_parser()
    for name, sub in parser._subparsers._group_actions[0].choices.items():  # type: ignore[union-attr]
        assert "%%" not in sub.format_help(), name
    assert "%%" not in parser.format_help()
    proc = run_cli("schema", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "%%" not in proc.stdout and "presence %" in proc.stdout
