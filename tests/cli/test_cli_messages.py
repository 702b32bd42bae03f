"""Messages name files, never object reprs, and every command refuses what is not a TFRecord file
alike: `salvage` of a JPEG says so and writes nothing (it reported a CRC mismatch and left an
empty file), a corrupt image is named by its file (Pillow's message named an in-memory file),
and an un-suffixed GZIP file read with compression=None is said to be GZIP."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli

JPEG_HEAD = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01" + b"\x00" * 40


def test_salvage_refuses_a_file_that_is_no_tfrecord(tmp_path: Path) -> None:
    (tmp_path / "photo.jpg").write_bytes(JPEG_HEAD)
    done = run_cli("salvage", str(tmp_path / "photo.jpg"), str(tmp_path / "out.tfrecord"))
    assert done.returncode == 1
    assert "not a TFRecord file: it looks like a JPEG image" in done.stderr and "photo.jpg" in done.stderr
    assert not (tmp_path / "out.tfrecord").exists()


def test_a_corrupt_image_is_named_by_its_file(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    (tmp_path / "photos" / "cat").mkdir(parents=True)
    (tmp_path / "photos" / "cat" / "broken.png").write_bytes(b"not a png at all")
    done = run_cli("pack-images", str(tmp_path / "photos"), str(tmp_path / "out" / "p"))
    assert done.returncode == 1
    assert "BytesIO" not in done.stderr and "object at 0x" not in done.stderr
    assert "broken.png" in done.stderr


def test_an_unsuffixed_gzip_file_read_as_plain_is_said_to_be_gzip(tmp_path: Path) -> None:
    path = tmp_path / "records.bin"
    with tfr.TFRecordWriter(str(path), compression="gzip") as writer:
        writer.write_example({"x": 1})
    with pytest.raises(ValueError, match=r"is GZIP-compressed, but compression=None was given.*'auto' recognises"):
        list(tfr.iter_records(str(path), compression=None))
