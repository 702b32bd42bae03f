"""tfr.count_records: one scan that checks every CRC, as every reader does (a damaged file raises);
verify=False counts through a fresh index sidecar without reading the file, else by a scan of the
headers. Oracles: the TFX corpus JSON and TensorFlow."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests.conftest import DATA_DIR
from tfrecord_lite._index.sidecar_file import sidecar_path

TFX = DATA_DIR / "tfx"
CORPUS = sorted(p for p in TFX.glob("*.tfrecord*") if not p.name.endswith(".json"))


def oracle(path: Path) -> int:
    return len(json.loads(Path(f"{path}.json").read_text())["records"])


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_each_corpus_file(path: Path) -> None:
    assert tfr.count_records(path) == tfr.count_records(path, verify=False) == oracle(path)


def test_a_folder_a_glob_and_a_list() -> None:
    total = sum(map(oracle, CORPUS))
    assert tfr.count_records(TFX) == total
    assert tfr.count_records(str(TFX / "*.gz")) == total - oracle(TFX / "mnist.tfrecord")
    assert tfr.count_records([CORPUS[0], CORPUS[0]]) == oracle(CORPUS[0])  # a file named twice counts once


def flip_middle_length_crc(path: Path) -> None:
    """Damage a middle record's header, keeping the file's size and mtime (only a scan notices)."""
    with tfr.TFRecordFile(path, index=False) as f:
        at = f.offset(len(f) // 2) + 8
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[at] ^= 1
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_fresh_sidecar_answers_without_reading_the_file(tmp_path: Path) -> None:
    path = Path(shutil.copy(TFX / "mnist.tfrecord", tmp_path / "m.tfrecord"))
    n = oracle(TFX / "mnist.tfrecord")
    tfr.write_index(path)
    flip_middle_length_crc(path)
    assert tfr.count_records(path, verify=False) == n  # from the sidecar: the damage is not seen
    with pytest.raises(tfr.CorruptRecordError, match="length CRC"):
        tfr.count_records(path)  # verifying (the default) scans
    os.remove(sidecar_path(path))
    with pytest.raises(tfr.CorruptRecordError, match="length CRC"):
        tfr.count_records(path, verify=False)  # no sidecar: a scan, and lengths are always checked
    assert not os.path.exists(sidecar_path(path))  # counting writes no sidecar


def test_a_stale_sidecar_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        w.write(b"one")
    tfr.write_index(path)
    with open(path, "ab") as fh, tfr.TFRecordWriter(fh) as w:  # appended behind the sidecar's back
        w.write(b"two")
    assert tfr.count_records(path, verify=False) == 2


def test_payload_crcs_unless_verify_is_false(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for k in range(5):
            w.write(b"payload %d" % k)
    data = bytearray(path.read_bytes())
    data[16 + len(b"payload 0") + 12 + 2] ^= 1  # inside the second record's payload
    path.write_bytes(bytes(data))
    assert tfr.count_records(path, verify=False) == 5
    with pytest.raises(tfr.CorruptRecordError, match="data CRC"):
        tfr.count_records(path)  # a flipped payload byte raises, as every reader


def test_cli_count_verifies_unless_no_verify(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for k in range(5):
            w.write(b"payload %d" % k)
    data = bytearray(path.read_bytes())
    data[16 + len(b"payload 0") + 12 + 2] ^= 1
    path.write_bytes(bytes(data))
    damaged = run_cli("count", str(path))
    assert damaged.returncode == 1 and "data CRC" in damaged.stderr
    assert run_cli("count", "--no-verify", str(path)).stdout.strip() == "5"


def test_the_options_reach_the_scan(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord.gz"
    with tfr.TFRecordWriter(path, compression="gzip") as w:
        for k in range(3):
            w.write(b"x" * (k << 21))  # 0, 2 and 4 MiB
    assert tfr.count_records(path, compression="gzip") == 3
    with pytest.raises(ValueError, match="is GZIP-compressed, but compression='zlib' was given"):
        tfr.count_records(path, compression="zlib")  # held to the content, as by every reader
    # counting holds no record: one longer than max_record_bytes streams through, in flat memory
    assert tfr.count_records(path, max_record_bytes=3 << 20) == 3


def test_cli_count_uses_it(tmp_path: Path) -> None:
    proc = run_cli("count", "--json", str(TFX))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["total"] == sum(map(oracle, CORPUS))
    assert {Path(p).name: n for p, n in result["files"].items()} == {p.name: oracle(p) for p in CORPUS}


@pytest.mark.tf
def test_tensorflow_counts_the_same() -> None:
    import tensorflow as tf

    for path in CORPUS:
        compression = "GZIP" if path.suffix == ".gz" else ""
        assert sum(1 for _ in tf.data.TFRecordDataset(str(path), compression_type=compression)) == tfr.count_records(
            path
        )
