# Hostile image datasets: records whose image/format, file name or class would make unpacking
# write outside its folder or abort on a name too long, and image folders holding a FIFO, a link
# to /dev/zero or a file over the size limit. Everything is built here, under tmp_path.
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

PIL = pytest.importorskip("PIL")
from PIL import Image

import tfrecord_lite as tfr
from tests._cli import run_cli
from tfrecord_lite import images
from tfrecord_lite._images.packing import MAX_IMAGE_BYTES
from tfrecord_lite._images.records import image_example


def png(seed: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (3, 2), (seed, 0, 0)).save(out, format="PNG")
    return out.getvalue()


def test_unpack_names_files_inside_the_output_whatever_the_record_says(tmp_path: Path) -> None:
    hostile = [
        image_example(b"not an image 1", "d/../../x.png", 1, 1, 0, "", ""),  # format as a path
        image_example(b"not an image 2", "f" * 300, 1, 1, 0, "", ""),  # format too long for a name
        image_example(png(1), "png", 2, 3, 0, "c" * 300, "n" * 300 + ".png"),  # class and name too long
        image_example(png(2), "png", 2, 3, 0, "ok", "\x1b[31m" + "e" * 250 + "\n.png"),
    ]
    source = tmp_path / "hostile.tfrecord"
    with tfr.TFRecordWriter(str(source)) as w:
        for record in hostile:
            w.write(record)
    out = tmp_path / "deep" / "out"
    (out / "unlabelled" / "00000000.d").mkdir(parents=True)  # the folder the first name walks through
    assert images.unpack_images(str(source), destination=out) == len(hostile)
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p != source)
    assert len(written) == len(hostile)
    assert all(p.resolve().is_relative_to(out.resolve()) for p in written), written
    assert all(len(p.name.encode()) <= 255 and len(p.parent.name.encode()) <= 255 for p in written)
    assert all(not any(c < " " for c in str(p.relative_to(out))) for p in written)
    assert {p.read_bytes() for p in written} == {b"not an image 1", b"not an image 2", png(1), png(2)}
    assert sorted(p.suffix for p in written) == [".img", ".img", ".png", ".png"]


def hostile_folder(tmp_path: Path) -> Path:
    root = tmp_path / "photos"
    (root / "cat").mkdir(parents=True)
    (root / "cat" / "fine.png").write_bytes(png(3))
    os.mkfifo(root / "cat" / "x.jpg")  # no writer: opening it for reading would wait forever
    (root / "cat" / "z.png").symlink_to("/dev/zero")  # endless
    with open(root / "cat" / "huge.png", "wb") as f:  # sparse: over the limit without using the disk
        f.truncate(MAX_IMAGE_BYTES + 1)
    return root


def test_packing_refuses_non_regular_and_oversized_files(tmp_path: Path) -> None:
    root = hostile_folder(tmp_path)
    result = images.pack_images(root, prefix=tmp_path / "out" / "pets", on_bad_image="skip", follow_symlinks=True)
    assert result.written == 1
    reasons = {Path(path).name: reason for path, reason in result.skipped}
    assert set(reasons) == {"x.jpg", "z.png", "huge.png"}
    assert "not a regular file" in reasons["x.jpg"] and "not a regular file" in reasons["z.png"]
    assert f"limit of {MAX_IMAGE_BYTES} bytes" in reasons["huge.png"]
    with pytest.raises(images.ImageDecodeError, match=r"not a regular file|limit"):
        images.pack_images(root, prefix=tmp_path / "out2" / "pets")


def test_pack_images_command_skips_them_with_one_line_each(tmp_path: Path) -> None:
    root = hostile_folder(tmp_path)
    proc = run_cli("pack-images", str(root), str(tmp_path / "out" / "pets"), "--skip-bad", "--follow-symlinks")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("not a regular file") == 2 and "huge.png" in proc.stderr
    failed = run_cli("pack-images", str(root), str(tmp_path / "out2" / "pets"), "--follow-symlinks")
    assert failed.returncode != 0 and len(failed.stderr.strip().splitlines()) == 1
