"""The viewer on a prepared TensorFlow Datasets folder (recognised by its dataset_info.json): the
shards in the order of the splits, each split a range of record numbers, the ClassLabel counted
and named by the folder's class names, the splits and the features on the overview, the split of a
record on its page; the static page written by the command."""

from __future__ import annotations

import shutil

import pytest

from tests._cli import run_cli
from tests._tfds import image_of, png, write_tfds_folder
from tests.conftest import DATA_DIR
from tests.viewer.test_html import Elements
from tfrecord_lite.viewer import Catalog, report_html
from tfrecord_lite.viewer.pages import PAGES

CLASSES = ("cat", "dog", "<i>fox</i>")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("tfds")
    return write_tfds_folder(root, name="pets", version="1.2.0", shape=(16, 16, 3), classes=CLASSES,
                             splits={"train": (7, 5), "test": (4,)})  # fmt: skip


def test_the_splits_run_in_their_order_over_their_shards(folder):
    catalog = Catalog(folder)
    assert catalog.tfds.name == "pets"
    assert [p.rsplit("/", 1)[1] for p in catalog.paths] == [
        "pets-train.tfrecord-00000-of-00002",
        "pets-train.tfrecord-00001-of-00002",
        "pets-test.tfrecord-00000-of-00001",
    ]
    assert [(r.name, r.start, r.count) for r in catalog.splits] == [("train", 0, 12), ("test", 12, 4)]
    assert catalog.split_of(11) == ("train", 11) and catalog.split_of(13) == ("test", 1)
    assert catalog.split_of(16) is None and len(catalog) == 16
    assert catalog.view(13).features["image"][0] == png(image_of(1, 1, (16, 16, 3)))


def test_class_labels_are_counted_and_named(folder):
    catalog = Catalog(folder)
    key, counts, scanned = catalog.labels()
    assert key == "label" and scanned == 16
    assert counts == {"0": 6, "1": 5, "2": 5}
    assert catalog.label_names == {"0": "cat", "1": "dog", "2": "<i>fox</i>"}


def test_the_overview_shows_the_splits_and_features(folder):
    catalog = Catalog(folder)
    html = PAGES["/"](catalog, {})
    page = Elements(html)
    text = " ".join(page.text)
    assert "TensorFlow Datasets: pets 1.2.0" in text
    assert "ClassLabel" in text and "Image(shape=(16, 16, 3)" in text
    assert [a["href"] for a in page.named("a") if (a["href"] or "").startswith("records?")][:2] == [
        "records?start=0",
        "records?start=12",
    ]
    assert "<i>fox</i>" not in html and "&lt;i&gt;fox&lt;/i&gt; (2)" in html  # class names stay text
    record = " ".join(Elements(PAGES["/record"](catalog, {"i": "14"})).text)
    assert "test split, record 2 in shard order" in record and "pets-test.tfrecord-00000-of-00001" in record
    assert "label: <i>fox</i> (2)" in record  # record 14 is example 2 of test: class 2, its name as text
    grid = " ".join(Elements(PAGES["/grid"](catalog, {"label": "1"})).text)
    assert "dog · 1" in grid


def test_the_command_writes_the_folder_as_one_page(folder, tmp_path):
    out = tmp_path / "report.html"
    result = run_cli("view", str(folder), "--html", str(out), "--records", "16")
    assert result.returncode == 0, result.stderr
    assert "16 records" in result.stderr
    html = out.read_text("utf-8")
    assert html == report_html(Catalog(folder), n=16)
    page = Elements(html)
    assert len([a for a in page.named("img") if (a["src"] or "").startswith("data:image/png")]) == 32
    assert all(not (a.get("href") or "").startswith(("http", "/", "record", "grid")) for a in page.named("a"))


def test_a_folder_without_dataset_info_is_read_as_files(folder, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    for path in folder.glob("pets-*"):
        (plain / path.name).write_bytes(path.read_bytes())
    catalog = Catalog(plain)
    assert catalog.tfds is None and catalog.splits == [] and len(catalog) == 16
    assert catalog.split_of(3) is None


def test_an_array_record_folder_is_refused_by_name(folder, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("features.json", "label.labels.txt"):
        (copy / name).write_bytes((folder / name).read_bytes())
    info = (folder / "dataset_info.json").read_text().replace('"tfrecord"', '"array_record"')
    (copy / "dataset_info.json").write_text(info)
    with pytest.raises(ValueError, match=f"{copy} holds array_record shards"):
        Catalog(copy)
    proc = run_cli("view", str(copy), "--html", str(tmp_path / "x.html"))
    assert proc.returncode == 1 and "array_record" in proc.stderr


def test_rlds_episodes_show_a_thumbnail_per_step(tmp_path):
    folder = shutil.copytree(
        DATA_DIR / "tfds" / "episodes", tmp_path / "episodes", ignore=shutil.ignore_patterns("*.tfrlidx")
    )
    catalog = Catalog(folder)
    assert [(r.name, r.count) for r in catalog.splits] == [("train", 24), ("test", 6)]
    assert "Dataset(FeaturesDict({" in " ".join(Elements(PAGES["/"](catalog, {})).text)
    for i in (0, 10, 29):
        steps = len(catalog.view(i).features["steps/is_first"])
        page = Elements(PAGES["/record"](catalog, {"i": str(i)}))
        thumbs = [a for a in page.named("img") if (a["src"] or "").startswith("data:image/png")]
        assert len(thumbs) == steps >= 1
