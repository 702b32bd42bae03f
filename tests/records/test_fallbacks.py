"""Fallbacks, not failures: a readable file whose index sidecar exists but cannot be read is
opened with an in-memory index and one warning (TFRecordFile, ShardedRecords); a ShardedWriter
creates a missing folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tests._records import write_records
from tfrecord_lite._index.sidecar_file import sidecar_path

RECORDS = [b"r%d" % k * (k + 1) for k in range(20)]


def opened_with_fallback(path: Path) -> list[str]:
    """Open `path` by TFRecordFile and its folder by ShardedRecords; the warnings they gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tfr.TFRecordFile(path) as f:
            assert list(f) == RECORDS and f[7] == RECORDS[7] and f.index_path is None
        with tfr.ShardedRecords(path.parent) as ds:
            assert list(ds) == RECORDS and ds[-1] == RECORDS[-1]
    return [str(w.message) for w in caught if issubclass(w.category, tfr.IndexFallbackWarning)]


def test_a_sidecar_that_is_a_folder(tmp_path: Path) -> None:
    path = write_records(tmp_path / "a.tfrecord", RECORDS)
    os.mkdir(sidecar_path(path))
    messages = opened_with_fallback(path)
    assert len(messages) == 2 and all(sidecar_path(path) in m and "in-memory index" in m for m in messages)
    assert os.path.isdir(sidecar_path(path))  # left as it was


def test_a_sidecar_that_is_a_fifo_does_not_block(tmp_path: Path) -> None:
    path = write_records(tmp_path / "a.tfrecord", RECORDS)
    os.mkfifo(sidecar_path(path))
    done: list[list[str]] = []
    worker = threading.Thread(target=lambda: done.append(opened_with_fallback(path)), daemon=True)
    worker.start()
    worker.join(60)
    if not done:  # unblock the reader so the test process can end, then fail
        with open(sidecar_path(path), "wb"):
            pass
        pytest.fail("opening a file whose sidecar is a FIFO blocked")
    assert len(done[0]) == 2 and "not a regular file" in done[0][0]


def test_a_corrupt_sidecar_is_rebuilt(tmp_path: Path) -> None:
    path = write_records(tmp_path / "a.tfrecord", RECORDS)
    Path(sidecar_path(path)).write_bytes(b"TFRLIDX\0" + b"\xff" * 100)
    with tfr.TFRecordFile(path) as f:  # a damaged sidecar of ours is rebuilt, as when stale
        assert list(f) == RECORDS and f.index_path == sidecar_path(path)


@pytest.mark.skipif(not hasattr(os, "setuid") or os.geteuid() != 0, reason="needs root to become another user")
def test_another_users_0600_sidecar(tmp_path: Path) -> None:
    """Root writes the file (0644) and its sidecar (0600); `nobody` reads the file in a subprocess."""
    folder = Path(tempfile.mkdtemp(prefix="tfrl-fallback-", dir="/tmp"))
    try:
        os.chmod(folder, 0o755)  # nobody can list and read it, not write it
        path = write_records(folder / "a.tfrecord", RECORDS)
        tfr.write_index(path)
        os.chmod(path, 0o644)
        os.chmod(sidecar_path(path), 0o600)
        script = (
            "import os, warnings, sys\n"
            "import tfrecord_lite as tfr\n"
            "tfr.TFRecordFile, tfr.ShardedRecords  # imported while root: nobody cannot read root's Python\n"
            "os.setgid(65534); os.setuid(65534)\n"
            "warnings.simplefilter('always')\n"
            f"with tfr.TFRecordFile({str(path)!r}) as f: n = len(f)\n"
            f"with tfr.ShardedRecords({str(folder)!r}) as ds: m = len(ds)\n"
            "print(n, m)\n"
        )
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == [str(len(RECORDS))] * 2
        assert proc.stderr.count("IndexFallbackWarning") == 2 and "Permission" in proc.stderr
    finally:
        shutil.rmtree(folder)


def test_sharded_writer_creates_a_missing_folder(tmp_path: Path) -> None:
    prefix = tmp_path / "new" / "deeper" / "train"
    with tfr.ShardedWriter(prefix, num_shards=2) as w:
        for r in RECORDS:
            w.write(r)
    assert sorted(tfr.iter_records(prefix)) == sorted(RECORDS)
    assert all(Path(p).parent == prefix.parent for p in w.paths)
