# Index sidecars never widen their data file's permissions: a GZIP sidecar holds 32 KiB windows of
# the uncompressed data, so a 0600 file beside a 0644 sidecar leaked it. Every sidecar (binary,
# GZIP, text) is created with no permission its data file lacks, whatever the umask, and atomically.
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tests._records import write_records

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0o022)  # the common default, which gives new files 0644
    try:
        yield
    finally:
        os.umask(old)


def mode(path: str | Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def records() -> list[bytes]:
    return [bytes([k % 251]) * (3000 + k) for k in range(300)]


@pytest.mark.parametrize("data_mode", [0o600, 0o640])
@pytest.mark.parametrize("compression", [None, "gzip", "zlib"])
def test_sidecars_built_by_readers_and_index_writers_keep_the_data_files_mode(
    tmp_path: Path, open_umask: None, compression: str | None, data_mode: int
) -> None:
    path = write_records(tmp_path / "data.tfrecord", records(), compression)
    os.chmod(path, data_mode)
    with tfr.TFRecordFile(path) as f:  # builds and saves the sidecar
        assert len(f) == 300
        assert f.index_path is not None and mode(f.index_path) == data_mode
    named = tfr.write_index(path, destination=tmp_path / "named.idx")
    assert mode(named) == data_mode
    if compression is None:
        text = tmp_path / "data.txt"
        tfr.write_text_index(path, destination=text)
        assert mode(text) == data_mode
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_sidecars_written_with_the_data_keep_its_mode(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "data.tfrecord.gz"
    path.touch(mode=0o600)
    with tfr.TFRecordWriter(path, compression="gzip", seek_every="64k") as writer:  # a writer that saves a sidecar
        for r in records():
            writer.write(r)
    assert mode(path) == 0o600 and mode(f"{path}.tfrlidx") == 0o600
    write_records(tmp_path / "plain.tfrecord", [b"x"])
    os.chmod(tmp_path / "plain.tfrecord", 0o600)
    with tfr.TFRecordFile(tmp_path / "plain.tfrecord") as f:
        assert len(f) == 1
    os.chmod(f"{tmp_path / 'plain.tfrecord'}.tfrlidx", 0o644)  # as an older version made it
    with tfr.TFRecordWriter(tmp_path / "plain.tfrecord", append=True) as writer:  # the sidecar is extended
        writer.write(b"y")
    assert mode(tmp_path / "plain.tfrecord.tfrlidx") == 0o600


def test_a_sidecar_never_gets_more_than_the_umask_allows(tmp_path: Path) -> None:
    path = write_records(tmp_path / "data.tfrecord", records())
    os.chmod(path, 0o666)
    old = os.umask(0o077)
    try:
        with tfr.TFRecordFile(path) as f:
            assert f.index_path is not None and mode(f.index_path) == 0o600
    finally:
        os.umask(old)
