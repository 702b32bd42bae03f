# TFRecordWriter(append=True): appends after a complete tail, refuses after a
# truncated one (or cuts it off with truncate_partial=True), and extends an index
# sidecar instead of rescanning the file.
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests._records import record_starts, write_records

SIDECAR = ".tfrlidx"


def sidecar_offsets(path: Path) -> list[int]:
    return np.frombuffer(Path(str(path) + SIDECAR).read_bytes(), "<u8", offset=64).tolist()


def test_append_after_clean_tail(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord"
    write_records(path, [b"one", b"two"])
    write_records(path, [b"three", b""], append=True)
    with tfr.TFRecordWriter(path, append=True) as w:
        w.write_example({"k": [1, 2]})
    records = list(tfr.iter_records(path))
    assert records[:4] == [b"one", b"two", b"three", b""]
    assert tfr.decode_example(records[4])["k"].tolist() == [1, 2]


def test_append_creates_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "new.tfrecord"
    write_records(path, [b"x"], append=True)
    assert list(tfr.iter_records(path)) == [b"x"]


# the examples share tmp_path: each one rewrites t.tfrecord from scratch
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 60), min_size=1, max_size=5), data=st.data())
def test_truncated_tail_refused_or_cut(tmp_path: Path, sizes: list[int], data: st.DataObject) -> None:
    path = tmp_path / "t.tfrecord"
    records = [bytes([65 + i]) * n for i, n in enumerate(sizes)]
    write_records(path, records)
    last = record_starts(path.read_bytes())[-1]
    cut = data.draw(st.integers(last + 1, path.stat().st_size - 1), label="cut")  # inside the last record
    with open(path, "r+b") as fh:
        fh.truncate(cut)
    with pytest.raises(tfr.TruncatedRecordError) as err:
        tfr.TFRecordWriter(path, append=True)
    assert err.value.offset == last and "truncate_partial=True" in str(err.value) and str(path) in str(err.value)
    assert path.stat().st_size == cut  # refused: the file is untouched
    write_records(path, [b"new"], append=True, truncate_partial=True)
    assert list(tfr.iter_records(path)) == records[:-1] + [b"new"]


def test_corrupt_tail_is_not_cut(tmp_path: Path) -> None:
    path = tmp_path / "c.tfrecord"
    write_records(path, [b"a" * 20, b"b" * 20])
    with open(path, "ab") as fh:
        fh.write(b"\xff" * 30)  # not a record header at all
    with pytest.raises(tfr.CorruptRecordError) as err:
        tfr.TFRecordWriter(path, append=True, truncate_partial=True)
    assert err.value.offset == 72
    path.write_bytes(path.read_bytes()[: 72 - 1] + b"\0")  # the last record's data CRC is wrong (torn write)
    with pytest.raises(tfr.CorruptRecordError) as err:
        tfr.TFRecordWriter(path, append=True)
    assert err.value.offset == 36


def test_append_refuses_compression_and_file_objects(tmp_path: Path) -> None:
    path = tmp_path / "g.tfrecord"
    write_records(path, [b"a"], compression="gzip")
    with pytest.raises(ValueError, match="uncompressed"):
        tfr.TFRecordWriter(path, compression="gzip", append=True)
    with pytest.raises(tfr.TFRecordError, match="GZIP"):
        tfr.TFRecordWriter(path, append=True)
    with open(tmp_path / "f.tfrecord", "ab") as fh, pytest.raises(ValueError, match="local file path"):
        tfr.TFRecordWriter(fh, append=True)
    with pytest.raises(ValueError, match="append=True"):
        tfr.TFRecordWriter(tmp_path / "h.tfrecord", truncate_partial=True)
    assert list(tfr.iter_records(path)) == [b"a"]


def _damage_header_keep_stat(path: Path, offset: int) -> None:
    """Flip a bit of a middle record's length CRC, keeping size and mtime (only a scan would notice)."""
    st_ = path.stat()
    with open(path, "r+b") as fh:
        fh.seek(offset + 9)
        b = fh.read(1)
        fh.seek(offset + 9)
        fh.write(bytes([b[0] ^ 4]))
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))


def test_sidecar_makes_tail_check_o1_and_is_extended_not_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "i.tfrecord"
    records = [bytes([i]) * (i + 1) for i in range(10)]
    write_records(path, records)
    tfr.TFRecordFile(path).close()  # builds the sidecar
    _damage_header_keep_stat(path, record_starts(path.read_bytes())[4])
    # with the fresh sidecar, neither the tail check nor the index update reads record 4:
    write_records(path, [b"more", b"and more"], append=True)
    expected_offsets = [16 * i + sum(range(1, i + 1)) for i in range(10)]
    expected_offsets += [expected_offsets[-1] + 16 + 10, expected_offsets[-1] + 16 + 10 + 16 + 4]
    assert sidecar_offsets(path) == expected_offsets + [path.stat().st_size]
    with tfr.TFRecordFile(path, on_stale="raise") as f:  # fresh: no rescan (which would fail on record 4)
        assert len(f) == 12 and f[-2:] == [b"more", b"and more"] and f[3] == records[3]
        with pytest.raises(tfr.CorruptRecordError):
            f[4]
    os.unlink(str(path) + SIDECAR)  # without a sidecar the headers are walked: the damage is found
    with pytest.raises(tfr.CorruptRecordError) as err:
        tfr.TFRecordWriter(path, append=True)
    assert err.value.offset == expected_offsets[4]


def test_stale_sidecar_left_for_readers_to_rebuild(tmp_path: Path) -> None:
    path = tmp_path / "s.tfrecord"
    write_records(path, [b"a", b"b"])
    tfr.TFRecordFile(path).close()
    with open(path, "ab") as fh, tfr.TFRecordWriter(fh) as w:  # grown behind the sidecar's back: stale now
        w.write(b"c")
    write_records(path, [b"d"], append=True)  # the tail is checked by walking from the indexed part
    with tfr.TFRecordFile(path) as f:
        assert list(f) == [b"a", b"b", b"c", b"d"]
    assert sidecar_offsets(path) == [*record_starts(path.read_bytes()), path.stat().st_size]
