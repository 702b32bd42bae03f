# Appending images to a packed dataset never loses or mixes one: an image whose bytes are already
# packed is skipped and counted, a different image under a taken name is a conflict (refused by
# default, or skipped, renamed or replacing the old one), a given label map is complete unless
# extended, every shard name says the new total, and a failed run leaves nothing behind.
from __future__ import annotations

import glob
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL")
from PIL import Image

import tfrecord_lite as tfr
from tfrecord_lite import images


def make_image(path: Path, seed: int) -> None:
    pixels = np.random.default_rng(seed).integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels, mode="RGB").save(path, format="PNG")


def packed(prefix: Path) -> dict[str, bytes]:
    """image/filename -> stored bytes of every record under `prefix` (one per name, checked)."""
    records = [images.parse_image_record(r) for r in tfr.iter_records(str(prefix))]
    names = [r.filename for r in records]
    assert len(names) == len(set(names)), names
    return {r.filename: r.encoded for r in records}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """out/pets: cat/a.png, cat/b.png, dog/c.png in two shards."""
    for name, seed in (("cat/a.png", 1), ("cat/b.png", 2), ("dog/c.png", 3)):
        make_image(tmp_path / "photos" / name, seed)
    images.pack_images(tmp_path / "photos", prefix=tmp_path / "out" / "pets", num_shards=2)
    return tmp_path / "out" / "pets"


def test_same_bytes_are_skipped_other_bytes_under_a_taken_name_refused(dataset: Path, tmp_path: Path) -> None:
    more = tmp_path / "more"
    (more / "cat").mkdir(parents=True)
    (more / "cat" / "a.png").write_bytes((tmp_path / "photos" / "cat" / "a.png").read_bytes())  # same bytes
    (more / "cat" / "copy.png").write_bytes((tmp_path / "photos" / "dog" / "c.png").read_bytes())  # other name
    make_image(more / "cat" / "b.png", 20)  # a different image named like a packed one
    make_image(more / "cat" / "new.png", 21)
    before = sorted(os.listdir(dataset.parent))
    with pytest.raises(images.ImageConflictError, match=r"1 image to append has the name .*'cat/b.png'"):
        images.pack_images(more, prefix=dataset, append=True)
    assert sorted(os.listdir(dataset.parent)) == before  # nothing published, nothing staged left

    result = images.pack_images(more, prefix=dataset, append=True, on_conflict="skip")
    assert sorted(result.duplicates) == ["cat/a.png", "cat/copy.png"] and result.conflicts == ["cat/b.png"]
    got = packed(dataset)
    assert sorted(got) == ["cat/a.png", "cat/b.png", "cat/new.png", "dog/c.png"]
    assert got["cat/b.png"] == (tmp_path / "photos" / "cat" / "b.png").read_bytes()  # the old one stays


def test_rename_and_replace(dataset: Path, tmp_path: Path) -> None:
    more = tmp_path / "more"
    make_image(more / "cat" / "b.png", 20)
    renamed = images.pack_images(more, prefix=dataset, append=True, on_conflict="rename")
    assert renamed.renamed == [("cat/b.png", "cat/b-1.png")]
    assert packed(dataset)["cat/b-1.png"] == (more / "cat" / "b.png").read_bytes()

    make_image(more / "dog" / "c.png", 30)
    replaced = images.pack_images(more, prefix=dataset, append=True, on_conflict="replace")
    assert replaced.replaced == ["dog/c.png"] and replaced.duplicates == ["cat/b.png"]
    got = packed(dataset)
    assert got["dog/c.png"] == (more / "dog" / "c.png").read_bytes()  # the old dog/c.png left its shard
    assert sorted(got) == ["cat/a.png", "cat/b-1.png", "cat/b.png", "dog/c.png"]
    verified = [tfr.verify_file(p) for p in glob.glob(str(dataset) + "-*.tfrecord")]
    assert all(report.ok for report in verified) and sum(r.records for r in verified) == 4
    with tfr.ShardedRecords(dataset) as shards:  # the rewritten shard's sidecar is fresh
        assert all(shard.index_path for shard in shards.shards) and len(shards) == 4


def test_every_shard_name_says_the_new_total(dataset: Path, tmp_path: Path) -> None:
    make_image(tmp_path / "more" / "cat" / "z.png", 40)
    result = images.pack_images(tmp_path / "more", prefix=dataset, append=True, num_shards=2)
    names = sorted(os.path.basename(p) for p in glob.glob(str(dataset) + "-?????-of-00004.tfrecord"))
    assert names == [f"pets-0000{k}-of-00004.tfrecord" for k in range(4)]
    assert not glob.glob(str(dataset) + "-*-of-00002.tfrecord*")
    assert [os.path.basename(p) for p in result.paths] == names[2:]


def test_a_given_label_map_is_complete_unless_extended(tmp_path: Path) -> None:
    make_image(tmp_path / "photos" / "cat" / "a.png", 1)
    make_image(tmp_path / "photos" / "dog" / "b.png", 2)
    (tmp_path / "labels.txt").write_text("cat\n")
    with pytest.raises(ValueError, match=r"1 of the classes to pack is not in the label map .*labels.txt: 'dog'"):
        images.pack_images(tmp_path / "photos", prefix=tmp_path / "out" / "x", label_map=tmp_path / "labels.txt")
    assert not (tmp_path / "out").exists()  # a failed first run leaves no folder behind
    result = images.pack_images(
        tmp_path / "photos", prefix=tmp_path / "out" / "x", label_map=tmp_path / "labels.txt", extend_label_map=True
    )
    assert result.label_map == {"cat": 0, "dog": 1} and result.new_classes == ["dog"]
    with pytest.raises(ValueError, match=r"class 'cat' has the id '0' \(str\)"):
        images.pack_images(tmp_path / "photos", prefix=tmp_path / "out2" / "x", label_map={"cat": "0", "dog": 1})
    assert not (tmp_path / "out2").exists()
