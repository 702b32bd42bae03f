# The publish mechanism on its own: locks (held, stale), roll back / forward of what a
# killed run left, permissions of what writers create, and append's duplicate check.
# The kill -9 and disk-full proofs over every writing command are in test_crash.py.
from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tfrecord_lite._storage.publish import OutputLock, Publication, recover


def records(n: int, start: int = 0) -> list[bytes]:
    return [f"record {i}".encode() * (i % 5 + 1) for i in range(start, start + n)]


def visible(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if not n.startswith("."))


def test_a_held_lock_refuses_a_second_writer(tmp_path: Path) -> None:
    prefix = str(tmp_path / "ds")
    with tfr.ShardedWriter(prefix) as w:
        w.write(b"a")
        with pytest.raises(tfr.OutputLockedError, match=rf"being written by process {os.getpid()}"):
            tfr.ShardedWriter(prefix, append=True)
        with pytest.raises(tfr.OutputLockedError, match="lock file"):
            tfr.TFRecordWriter(prefix)  # the same name as a file: the same lock
    assert not (tmp_path / ".ds.lock").exists()  # released and removed at close
    with tfr.ShardedWriter(prefix, append=True) as w:
        w.write(b"b")
    assert list(tfr.ShardedRecords(prefix)) == [b"a", b"b"]


def test_a_lock_held_by_another_process(tmp_path: Path) -> None:
    target = tmp_path / "out.tfrecord"
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sys, tfrecord_lite as t; w = t.TFRecordWriter({str(target)!r}); "
         "print('ready', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(tfr.OutputLockedError, match=rf"process {holder.pid}\b"):
            tfr.TFRecordWriter(target)
    finally:
        holder.kill()
        holder.wait()
    with tfr.TFRecordWriter(target) as w:  # the kernel dropped the dead holder's lock
        w.write(b"x")


def test_a_stale_lock_is_taken_over(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / ".out.lock").write_text(dead.stdout)
    with caplog.at_level(logging.WARNING, "tfrecord_lite"), OutputLock(tmp_path / "out") as lock:
        assert lock.stale_pid == int(dead.stdout)
    assert f"took over the lock of pid {int(dead.stdout)}" in caplog.text
    assert not (tmp_path / ".out.lock").exists()


def test_abort_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out.tfrecord"
    target.write_bytes(b"old")

    def failing_write() -> None:
        with Publication(target) as pub:
            Path(pub.file(target)).write_bytes(b"new")
            raise RuntimeError

    with pytest.raises(RuntimeError):
        failing_write()
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["out.tfrecord"]


def test_recovery_rolls_back_without_a_journal(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pub = Publication(tmp_path / "ds")
    Path(pub.file(tmp_path / "ds-00000-of-00001.tfrecord")).write_bytes(b"half")
    pub.lock.release()  # as if the process died before committing
    with caplog.at_level(logging.WARNING, "tfrecord_lite"):
        done = recover(tmp_path / "ds")
    assert done and "rolled back" in done[0] and "rolled back" in caplog.text
    assert os.listdir(tmp_path) == []


def test_recovery_rolls_forward_a_committed_journal(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("old")
    staging = tmp_path / ".ds.publish-0000"
    staging.mkdir()
    (staging / "a").write_text("A")
    (tmp_path / "b.txt").write_text("B")  # its rename was done before the kill
    journal = {"moves": [["a", "a.txt", 1], ["b", "b.txt", 1]], "deletes": ["old.txt"]}
    (staging / "journal.json").write_text(json.dumps(journal))
    done = recover(tmp_path / "ds")
    assert "completed a write" in done[0]
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]  # old.txt deleted, staging gone


def test_orphan_temporaries_of_dead_writers_are_removed(tmp_path: Path) -> None:
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True).stdout)
    orphan = tmp_path / f".ds-00000-of-00001.tfrecord.tfrlidx.{dead}-abcd0123.tmp"
    mine = tmp_path / f".ds.labels.json.{os.getpid()}-abcd0123.tmp"  # a live writer's: kept
    orphan.write_bytes(b"x")
    mine.write_bytes(b"x")
    assert recover(tmp_path / "ds") == [f"removed {orphan}, a temporary file of a killed run"]
    assert not orphan.exists() and mine.exists()


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_files_get_the_umask_permissions(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        with tfr.ShardedWriter(str(tmp_path / "ds"), num_shards=2) as w:
            w.write(b"a")
        with tfr.TFRecordWriter(tmp_path / "one.tfrecord") as w:
            w.write(b"b")
        tfr.write_index(tmp_path / "one.tfrecord")
        tfr.write_text_index(tmp_path / "one.tfrecord", destination=tmp_path / "one.idx")
    finally:
        os.umask(old)
    for name in os.listdir(tmp_path):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o666 & ~umask, name


def test_append_skips_images_already_packed(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    from PIL import Image

    from tfrecord_lite import images

    folder = tmp_path / "photos"
    for cls, n in (("cat", 3), ("dog", 2)):
        (folder / cls).mkdir(parents=True)
        for i in range(n):
            Image.new("RGB", (4, 3), (i * 40, 0, 0)).save(folder / cls / f"{i}.png")
    prefix = str(tmp_path / "out" / "photos")
    first = images.pack_images(folder, prefix=prefix)
    packed = sorted(r.filename for r in images.iter_image_records(first.paths))
    Image.new("RGB", (4, 3), (1, 2, 3)).save(folder / "dog" / "new.png")  # bytes not yet packed
    second = images.pack_images(folder, prefix=prefix, append=True)
    assert second.written == 1 and sorted(second.duplicates) == packed
    again = images.pack_images(folder, prefix=prefix, append=True, allow_duplicates=True)
    assert again.written == 6 and again.duplicates == []
    names = [r.filename for r in images.iter_image_records(tfr.ShardedRecords(prefix).paths)]
    assert len(names) == 12 and len(set(names)) == 6


def test_an_output_folder_holds_its_own_lock_and_staging(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    parent_before = sorted(os.listdir(tmp_path))
    with Publication(out) as pub:
        Path(pub.file(out / "a.tfrecord")).write_bytes(b"a")
        assert sorted(os.listdir(tmp_path)) == parent_before  # nothing beside the folder: it may be a mount
        lock, staging = sorted(os.listdir(out))
        assert lock == ".tfrecord-lite.lock" and staging.startswith(".tfrecord-lite.publish-")
    assert os.listdir(out) == ["a.tfrecord"]
