"""Batches of spans framed by a file's index sidecar (file_spans) against the stream's
(record_spans): the same batches of the same records, and where the file is damaged or changed
after indexing, the same batches before the damage and the same error (message, file, offset)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tfrecord_lite._batches.columnar import Spans
from tfrecord_lite._records.example_batches import record_spans
from tfrecord_lite._records.indexed_spans import file_spans, fresh_offsets

from .._records import record_starts, write_records


def _batches(spans: Iterator[Spans]) -> tuple[list[list[bytes]], str | None]:
    """Each batch's records (taken before the next batch is asked for), and the error that ended them."""
    out: list[list[bytes]] = []
    try:
        for batch in spans:
            out.append([batch.record(k) for k in range(len(batch.starts))])
    except tfr.TFRecordError as err:
        return out, f"{type(err).__name__}: {err}"
    return out, None


def _both(path: Path, batch_size: int, verify: bool = True) -> tuple[Any, Any]:
    return (
        _batches(file_spans(str(path), batch_size, "auto", verify)),
        _batches(record_spans(str(path), batch_size, "auto", verify)),
    )


def _indexed(tmp_path: Path, records: list[bytes]) -> Path:
    path = write_records(tmp_path / "data.tfrecord", records)
    tfr.TFRecordFile(path).close()  # builds and saves the sidecar
    return path


@settings(max_examples=25, deadline=None)
@given(
    records=st.lists(st.binary(max_size=300), max_size=60),
    batch_size=st.integers(1, 25),
)
def test_the_stream_batches_of_an_indexed_file(
    tmp_path_factory: pytest.TempPathFactory, records: list[bytes], batch_size: int
) -> None:
    path = _indexed(tmp_path_factory.mktemp("spans"), records)
    assert fresh_offsets(str(path)) is not None
    indexed, streamed = _both(path, batch_size)
    assert indexed == streamed
    assert [r for batch in indexed[0] for r in batch] == records


def _damage(path: Path, offset: int, keep_time: bool = True) -> None:
    """Flip the byte at `offset`, keeping the file's time (the sidecar still looks fresh) when asked."""
    st_before = os.stat(path)
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    if keep_time:
        os.utime(path, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))


RECORDS = [bytes([k]) * (20 + k % 7) for k in range(40)]


@pytest.mark.parametrize("where", ["payload", "length crc", "length"])
def test_damage_behind_a_fresh_sidecar_fails_as_the_stream_does(tmp_path: Path, where: str) -> None:
    path = _indexed(tmp_path, RECORDS)
    head = record_starts(path.read_bytes())[23]
    _damage(path, head + {"payload": 14, "length crc": 9, "length": 0}[where])
    assert fresh_offsets(str(path)) is not None  # the damage is found reading, not by the sidecar
    (indexed, error), streamed = _both(path, 5)
    assert (indexed, error) == streamed
    assert error is not None and str(head) in error and indexed[:4] == [RECORDS[i : i + 5] for i in range(0, 20, 5)]


def test_payload_damage_passes_without_verify_as_in_the_stream(tmp_path: Path) -> None:
    path = _indexed(tmp_path, RECORDS)
    _damage(path, record_starts(path.read_bytes())[23] + 14)
    assert fresh_offsets(str(path)) is not None
    indexed, streamed = _both(path, 5, verify=False)
    assert indexed == streamed and indexed[1] is None and len(indexed[0]) == 8


def test_files_without_a_fresh_sidecar_are_streamed(tmp_path: Path) -> None:
    plain = write_records(tmp_path / "plain.tfrecord", RECORDS)
    assert fresh_offsets(str(plain)) is None and not Path(str(plain) + ".tfrlidx").exists()
    assert _both(plain, 7)[0] == _both(plain, 7)[1]
    assert not Path(str(plain) + ".tfrlidx").exists()  # nothing is built or saved
    changed = _indexed(tmp_path, RECORDS)
    _damage(changed, 30, keep_time=False)
    assert fresh_offsets(str(changed)) is None
    assert _both(changed, 7)[0] == _both(changed, 7)[1]
    gzip = write_records(tmp_path / "data.tfrecord.gz", RECORDS, "gzip")
    assert fresh_offsets(str(gzip)) is None
    assert _both(gzip, 7)[0][0] == [RECORDS[i : i + 7] for i in range(0, 40, 7)]


def test_a_file_grown_after_indexing_is_streamed_whole(tmp_path: Path) -> None:
    path = _indexed(tmp_path, RECORDS)
    with open(path, "ab") as f:
        f.write(b"\0" * 5)  # a truncated record after the indexed ones
    indexed, streamed = _both(path, 7)
    assert indexed == streamed and indexed[1] is not None


def test_record_offsets_are_where_the_records_lie(tmp_path: Path) -> None:
    path = write_records(tmp_path / "data.tfrecord", RECORDS)
    starts = record_starts(path.read_bytes())
    with tfr.TFRecordFile(path) as f:
        assert f.record_offsets().tolist() == [*starts, path.stat().st_size]
        assert f.record_offsets(5, 9).tolist() == starts[5:10]
        assert f.record_offsets(38).tolist() == [*starts[38:], path.stat().st_size]
        assert f.record_offsets(7, 7).tolist() == [starts[7]]
    with tfr.TFRecordFile(write_records(tmp_path / "data.tfrecord.gz", RECORDS, "gzip")) as f:
        assert f.record_offsets() is None


def test_a_sidecar_whose_middle_offsets_no_longer_follow_the_records(tmp_path: Path) -> None:
    """The same size, time, first and last records, but two records between of other lengths: the
    batches before them come from the sidecar, the rest from the stream, all as the stream's."""
    path = _indexed(tmp_path, RECORDS)
    st_before = os.stat(path)
    swapped = [*RECORDS]
    swapped[16], swapped[17] = b"\x10" * len(RECORDS[17]), b"\x11" * len(RECORDS[16])
    assert len(RECORDS[16]) != len(RECORDS[17])
    write_records(path, swapped)
    os.utime(path, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))
    assert fresh_offsets(str(path)) is None and fresh_offsets(str(path), every_header=False) is not None
    for batch_size in (1, 5, 7, 40):
        indexed, streamed = _both(path, batch_size)
        assert indexed == streamed and indexed[1] is None
        assert [r for batch in indexed[0] for r in batch] == swapped
