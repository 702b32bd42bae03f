# Hostile dataset folders: a planted publish journal (shipped in a tarball, or left in a shared
# folder) and a planted lock file. Every victim is a file under tmp_path.
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tfrecord_lite._storage.journal import JournalError


def dataset(folder: Path, shards: int = 4, per_shard: int = 100) -> list[bytes]:
    records = [f"record {i}".encode() for i in range(shards * per_shard)]
    with tfr.ShardedWriter(str(folder / "train"), num_shards=shards) as w:
        for r in records:
            w.write(r)
    read = list(tfr.iter_records(str(folder / "train-*")))  # what readers see before anything is planted
    assert sorted(read) == sorted(records)
    return read


def plant(folder: Path, journal: Any, staged: dict[str, bytes] | None = None, raw: bytes | None = None) -> Path:
    staging = folder / ".train.publish-X"
    staging.mkdir()
    for name, data in (staged or {}).items():
        (staging / name).write_bytes(data)
    text = raw if raw is not None else json.dumps(journal).encode()
    (staging / "journal.json").write_bytes(text)
    return staging / "journal.json"


def shards(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith("train-") and n.endswith(".tfrecord"))


def victims(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "important.txt").write_text("keep me")
    (victim / "secret_key").write_text("secret")
    return victim


def escaping_journals(tmp_path: Path) -> list[dict[str, Any]]:
    victim = tmp_path / "victim"
    return [
        {"moves": [["k", str(victim / "authorized_keys"), 4]], "deletes": []},
        {"moves": [["k", "../victim/authorized_keys", 4]], "deletes": []},
        {"moves": [], "deletes": [str(victim / "important.txt")]},
        {"moves": [], "deletes": ["../victim/important.txt"]},
        {"moves": [["../../victim/secret_key", "train-00000-of-00004.tfrecord", 6]], "deletes": []},
        {"moves": [["k", "sub/x", 4]], "deletes": []},
        {"moves": [["k", "..", 4]], "deletes": []},
    ]


@pytest.mark.parametrize("case", range(7))
def test_a_journal_naming_paths_is_refused_and_nothing_is_touched(tmp_path: Path, case: int) -> None:
    victim = victims(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    records = dataset(data)
    journal = plant(data, escaping_journals(tmp_path)[case], {"k": b"evil"})
    with pytest.raises(JournalError, match=str(journal)):
        tfr.ShardedWriter(str(data / "train"), num_shards=2, overwrite=True)
    assert sorted(os.listdir(victim)) == ["important.txt", "secret_key"]
    assert (victim / "important.txt").read_text() == "keep me" and (victim / "secret_key").read_text() == "secret"
    assert journal.exists() and len(shards(data)) == 4
    assert list(tfr.iter_records(str(data / "train-*"))) == records


@pytest.mark.parametrize("case", [0, 3])
def test_reshard_force_refuses_a_planted_journal(tmp_path: Path, case: int) -> None:
    victim = victims(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    dataset(data)
    journal = plant(data, escaping_journals(tmp_path)[case], {"k": b"evil"})
    proc = run_cli("reshard", str(data / "train-*"), "-o", str(data / "train"), "--shards", "2", "--force")
    assert proc.returncode != 0 and str(journal) in proc.stderr
    assert sorted(os.listdir(victim)) == ["important.txt", "secret_key"] and len(shards(data)) == 4


def test_a_journal_with_wrong_sizes_is_refused(tmp_path: Path) -> None:
    records = dataset(tmp_path)
    journal = plant(tmp_path, {"moves": [["s", "train-00000-of-00004.tfrecord", 999]], "deletes": []}, {"s": b"x"})
    with pytest.raises(JournalError, match="holds 1 bytes, the journal says 999"):
        tfr.ShardedWriter(str(tmp_path / "train"), overwrite=True)
    assert journal.exists() and list(tfr.iter_records(str(tmp_path / "train-*"))) == records


@pytest.mark.parametrize(
    "raw", [b"{}", b"[1,2]", b"not json", b"\xff\xfe", b'{"moves": [[1, 2, 3]], "deletes": []}', b"null"]
)
def test_a_malformed_journal_is_reported_never_crashes_a_read(
    tmp_path: Path, raw: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    records = dataset(tmp_path)
    journal = plant(tmp_path, None, raw=raw)
    with caplog.at_level(logging.WARNING, "tfrecord_lite"):
        assert list(tfr.iter_records(str(tmp_path / "train-*"))) == records
        assert list(tfr.iter_records(str(tmp_path))) == records
    assert f"refused the publication journal {journal}" in caplog.text
    with pytest.raises(JournalError, match=str(journal)):
        tfr.ShardedWriter(str(tmp_path / "train"), overwrite=True)


def test_a_journal_deleting_shards_with_a_path_does_not_hide_them(tmp_path: Path) -> None:
    records = dataset(tmp_path)
    plant(
        tmp_path, {"moves": [], "deletes": ["./train-00000-of-00004.tfrecord", "sub/../train-00001-of-00004.tfrecord"]}
    )
    assert list(tfr.iter_records(str(tmp_path / "train-*"))) == records


def test_a_staged_link_or_a_resized_file_is_not_read_in_place_of_a_shard(tmp_path: Path) -> None:
    records = dataset(tmp_path)
    foreign = tmp_path / "foreign"
    foreign.write_bytes(b"foreign bytes")
    size = (tmp_path / "train-00000-of-00004.tfrecord").stat().st_size
    staging = plant(tmp_path, {"moves": [["s", "train-00000-of-00004.tfrecord", size]], "deletes": []}).parent
    (staging / "s").symlink_to(foreign)
    assert list(tfr.iter_records(str(tmp_path / "train-*"))) == records
    with pytest.raises(JournalError, match="not a regular file"):
        tfr.ShardedWriter(str(tmp_path / "train"), overwrite=True)
    assert foreign.read_bytes() == b"foreign bytes"


# ----------------------------------------------------------------------------- the lock


@pytest.mark.parametrize("make", ["tfrecord", "sharded"])
def test_a_lock_file_planted_as_a_symlink_is_refused_and_its_target_untouched(tmp_path: Path, make: str) -> None:
    bashrc = tmp_path / "home" / ".bashrc"
    bashrc.parent.mkdir()
    bashrc.write_text("export PATH=/usr/bin\n")
    name = "out.tfrecord" if make == "tfrecord" else "train"
    (tmp_path / f".{name}.lock").symlink_to(bashrc)
    open_writer = tfr.TFRecordWriter if make == "tfrecord" else tfr.ShardedWriter
    with pytest.raises(tfr.OutputLockedError, match="symbolic link"):
        open_writer(str(tmp_path / name))
    assert bashrc.read_text() == "export PATH=/usr/bin\n"


def test_a_lock_file_that_is_not_a_pid_file_is_never_truncated(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.link(victim, tmp_path / ".out.tfrecord.lock")  # another name of the victim
    with pytest.raises(tfr.OutputLockedError, match="hard links"):
        tfr.TFRecordWriter(tmp_path / "out.tfrecord")
    os.unlink(tmp_path / ".out.tfrecord.lock")
    (tmp_path / ".out.tfrecord.lock").write_text("not a pid\n")
    with pytest.raises(tfr.OutputLockedError, match="other than a process id"):
        tfr.TFRecordWriter(tmp_path / "out.tfrecord")
    assert victim.read_text() == "precious\n" and (tmp_path / ".out.tfrecord.lock").read_text() == "not a pid\n"


def test_a_stale_lock_of_a_dead_writer_is_still_taken_over(tmp_path: Path) -> None:
    (tmp_path / ".out.tfrecord.lock").write_text("999999999\n")
    with tfr.TFRecordWriter(tmp_path / "out.tfrecord") as w:
        w.write(b"a")
    assert list(tfr.iter_records(tmp_path / "out.tfrecord")) == [b"a"]


def test_a_symlink_alias_of_an_output_shares_its_lock(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real, target_is_directory=True)
    with tfr.TFRecordWriter(real / "out.tfrecord") as a:
        a.write(b"A")
        with pytest.raises(tfr.OutputLockedError):
            tfr.TFRecordWriter(alias / "out.tfrecord")
    (tmp_path / "link.tfrecord").symlink_to(real / "out.tfrecord")
    with tfr.ShardedWriter(str(real / "ds")) as a:
        a.write(b"A")
        with pytest.raises(tfr.OutputLockedError):
            tfr.ShardedWriter(str(alias / "ds"), append=True)
    with tfr.TFRecordWriter(real / "out.tfrecord", append=True) as a:
        with pytest.raises(tfr.OutputLockedError):
            tfr.TFRecordWriter(tmp_path / "link.tfrecord")
        a.write(b"B")
    assert list(tfr.iter_records(real / "out.tfrecord")) == [b"A", b"B"]
