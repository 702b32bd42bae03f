"""A large file's record ranges (split_pieces, Spark's partitions) decoded through the file's fresh
sidecar (piece_batches) against the same records read one by one through the piece's TFRecordFile:
the same batches, and where a record is damaged behind a fresh-looking sidecar, the same batches
before it and the same error."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")

import tfrecord_lite as tfr
from tfrecord_lite._datasets.pieces import Piece, piece_batches, piece_records, split_pieces

from .._records import record_starts, write_records

COLUMNS = ["id", "name"]
RECORDS = [tfr.encode_example({"id": [k], "name": [b"n" * (k % 5)], "other": [1.5]}) for k in range(100)]


def _run(batches: Iterator[Any]) -> tuple[list[Any], str | None]:
    out = []
    try:
        for batch in batches:
            out.append(batch.to_pydict())
    except tfr.TFRecordError as err:
        return out, f"{type(err).__name__}: {err}"
    return out, None


def _one_by_one(piece: Piece) -> Iterator[Any]:
    from tfrecord_lite._arrow.batches import decode_arrow_columns

    for records in piece_records(piece, 7):
        yield decode_arrow_columns(records, COLUMNS)


def _pieces(tmp_path: Path) -> tuple[Path, list[Piece]]:
    path = write_records(tmp_path / "big.tfrecord", RECORDS)
    size = os.path.getsize(path)
    pieces = split_pieces([(str(path), size)], size // 4, 7)  # builds the sidecar
    assert len(pieces) == 4 and all(piece.records is not None for piece in pieces)
    return path, pieces


def test_range_pieces_decode_as_their_records_one_by_one(tmp_path: Path) -> None:
    _, pieces = _pieces(tmp_path)
    for piece in pieces:
        fast = _run(piece_batches(piece, None, 7, columns=COLUMNS))
        assert fast == _run(_one_by_one(piece)) and fast[1] is None
    rows = [
        row
        for piece in pieces
        for batch in _run(piece_batches(piece, None, 7, columns=COLUMNS))[0]
        for row in batch["id"]
    ]
    assert rows == [[k] for k in range(100)]


@pytest.mark.parametrize("where", [14, 9])  # a payload byte, a length-CRC byte
def test_damage_in_a_range_fails_as_the_one_by_one_read_does(tmp_path: Path, where: int) -> None:
    path, pieces = _pieces(tmp_path)
    target = next(p for p in pieces if p.start <= 60 < (p.stop or 0))
    before = os.stat(path)
    data = bytearray(path.read_bytes())
    data[record_starts(bytes(data))[60] + where] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the sidecar still looks fresh
    fast = _run(piece_batches(target, None, 7, columns=COLUMNS))
    assert fast == _run(_one_by_one(target))
    assert fast[1] is not None and "CorruptRecordError" in fast[1]
