"""Messages name files, never object reprs, and every command refuses what is not a TFRecord file
alike: `salvage` of a JPEG says so and writes nothing (it reported a CRC mismatch and left an
empty file), a corrupt image is named by its file (Pillow's message named an in-memory file),
and an un-suffixed GZIP file read with compression=None is said to be GZIP."""

from __future__ import annotations

import subprocess
import sys
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


def test_an_unknown_url_scheme_is_a_usage_error_naming_the_url(tmp_path: Path) -> None:
    pytest.importorskip("fsspec")
    done = run_cli("count", "s4://bucket/x.tfrecord")
    assert done.returncode == 2
    assert "s4://bucket/x.tfrecord" in done.stderr and "did you mean 's3://'" in done.stderr


def test_a_missing_http_package_is_named_as_fsspec_names_it(tmp_path: Path) -> None:
    pytest.importorskip("fsspec")
    # aiohttp made unimportable in a fresh interpreter, as on a machine with fsspec alone
    code = (
        "import sys; sys.modules['aiohttp'] = None\n"
        "import tfrecord_lite as tfr\n"
        "try:\n    tfr.count_records('https://127.0.0.1:9/x.tfrecord')\n"
        "except ImportError as err:\n    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "aiohttp" in out and "pip install 'tfrlite[remote]'" in out


def test_the_remote_extra_installs_what_https_needs() -> None:
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    remote = " ".join(extras["optional-dependencies"]["remote"])
    assert "fsspec" in remote and "aiohttp" in remote and "requests" in remote
