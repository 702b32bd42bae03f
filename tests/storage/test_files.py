"""What a file holds, from its first bytes (sniff_file, read_head), for local paths and file:// URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tfrecord_lite._storage.files import read_head, sniff_file


@pytest.mark.parametrize("compression", [None, "gzip", "zlib"])
def test_sniff_file_names_the_compression_from_the_content(tmp_path: Path, compression: str | None) -> None:
    path = tmp_path / "data.bin"  # the name says nothing
    with tfr.TFRecordWriter(path, compression=compression) as w:
        w.write(b"record")
    assert sniff_file(path) == (compression or "")
    assert sniff_file(f"file://{path}") == (compression or "")


def test_sniff_file_of_something_else_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a TFRecord file at all")
    assert sniff_file(path) == "unknown"


def test_read_head_gives_what_there_is(tmp_path: Path) -> None:
    path = tmp_path / "short"
    path.write_bytes(b"abc")
    assert read_head(path, 2) == b"ab"
    assert read_head(path, 100) == b"abc"
    with pytest.raises(FileNotFoundError):
        read_head(tmp_path / "missing", 4)
