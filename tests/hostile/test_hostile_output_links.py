# Symbolic links to folders inside an output: unpack-images wrote through a class folder that was
# a link (outside the output), a Spark-style job wrote parts into a partition folder that was one,
# and a link planted under a staging folder's name failed recovery with a raw "Cannot call rmtree
# on a symbolic link". Folders that are links are now refused, naming the link; the staging link
# is removed, never followed.
from __future__ import annotations

import pytest

import tfrecord_lite as tfr
from tests._records import write_records
from tfrecord_lite._datasets.task_files import JobFolder
from tfrecord_lite.images import unpack_images

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b55"
    "0000000a49444154789c63600000000200015e2b7c5d0000000049454e44ae426082"
)


def test_unpack_images_refuses_a_class_folder_that_is_a_link(tmp_path):
    source = write_records(
        tmp_path / "pets.tfrecord",
        [tfr.encode_example({"image/encoded": [PNG], "image/class/label": [0], "image/class/text": [b"cat"]})],
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "cat").symlink_to(elsewhere)
    with pytest.raises(IsADirectoryError, match="symbolic link inside the output"):
        unpack_images(source, destination=out)
    assert list(elsewhere.iterdir()) == []


def test_a_job_refuses_a_partition_folder_that_is_a_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "table"
    root.mkdir()
    (root / "year=2024").symlink_to(elsewhere)
    with pytest.raises(IsADirectoryError, match="year=2024"):
        JobFolder(str(root), "job1").part("year=2024/month=1", 0, 0, 0, ".tfrecord")
    assert list(elsewhere.iterdir()) == []


def test_a_link_under_a_staging_name_is_removed_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".train.publish-0a1b2c3d").symlink_to(elsewhere)
    with tfr.ShardedWriter(str(out / "train"), num_shards=1) as w:
        w.write(b"x")
    assert (elsewhere / "keep.txt").read_text() == "mine"
    assert not (out / ".train.publish-0a1b2c3d").exists()
    assert list(tfr.iter_records(str(out / "train-*"))) == [b"x"]
