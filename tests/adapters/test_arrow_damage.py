# on_error / max_skipped on the Arrow readers: damage skipped exactly as iter_records skips
# it (the oracle: iter_records(on_error="skip") decoded by decode_arrow), raised with the
# file and offset by default, counted over one call.
from __future__ import annotations

from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tfrecord_lite._wire.framing import frame

pa = pytest.importorskip("pyarrow")
arrow = pytest.importorskip("tfrecord_lite.arrow")

SPEC = {"i": tfr.FixedLenFeature([], "int64"), "name": tfr.FixedLenFeature([], "bytes")}


@pytest.fixture
def damaged(tmp_path: Path) -> tuple[Path, list[int]]:
    """A file of 30 Examples with a bad payload CRC in record 4 and a damaged header in record 17;
    returns it and the start offsets of the two."""
    records = [tfr.encode_example({"i": i, "name": b"n%d" % i}) for i in range(30)]
    framed = [frame(r) for r in records]
    starts = [sum(len(f) for f in framed[:k]) for k in range(len(framed))]
    data = bytearray(b"".join(framed))
    data[starts[4] + 14] ^= 0x01  # payload of record 4
    data[starts[17] + 2] ^= 0x10  # length of record 17
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(data)
    return path, [starts[4], starts[17]]


def _oracle(path: Path) -> list[dict[str, object]]:
    return arrow.decode_arrow(list(tfr.iter_records(path, on_error="skip")), SPEC).to_pylist()


def test_skip_yields_every_undamaged_row(damaged: tuple[Path, list[int]]) -> None:
    path, _ = damaged
    expected = _oracle(path)
    assert [row["i"] for row in expected] == [i for i in range(30) if i not in (4, 17)]
    batches = list(arrow.iter_arrow_batches(path, features=SPEC, batch_size=8, on_error="skip"))
    assert [row for b in batches for row in b.to_pylist()] == expected
    assert arrow.read_arrow(path, features=SPEC, on_error="skip").to_pylist() == expected
    assert arrow.read_arrow(path, on_error="skip").num_rows == 28  # schema-less too


def test_raise_names_the_file_and_offset(damaged: tuple[Path, list[int]]) -> None:
    path, starts = damaged
    with pytest.raises(tfr.CorruptRecordError) as info:
        list(arrow.iter_arrow_batches(path, features=SPEC))
    assert info.value.path == str(path) and info.value.offset == starts[0]
    with pytest.raises(tfr.CorruptRecordError, match=f"at byte offset {starts[0]}"):
        arrow.read_arrow(path, features=SPEC)


def test_max_skipped_counts_over_the_call(damaged: tuple[Path, list[int]]) -> None:
    path, starts = damaged
    assert arrow.read_arrow(path, features=SPEC, on_error="skip", max_skipped=2).num_rows == 28
    with pytest.raises(tfr.CorruptRecordError, match="more than max_skipped=1") as info:
        arrow.read_arrow(path, features=SPEC, on_error="skip", max_skipped=1)
    assert info.value.offset == starts[1]
    with pytest.raises(ValueError, match="max_skipped applies only"):
        arrow.iter_arrow_batches(path, features=SPEC, max_skipped=1)  # checked before the first batch


def test_a_callable_receives_each_error(damaged: tuple[Path, list[int]]) -> None:
    path, starts = damaged
    errors: list[tfr.TFRecordError] = []
    table = arrow.read_arrow(path, features=SPEC, on_error=errors.append)
    assert table.num_rows == 28
    assert [(type(e), e.path, e.offset) for e in errors] == [
        (tfr.CorruptRecordError, str(path), starts[0]),
        (tfr.CorruptRecordError, str(path), starts[1]),
    ]


def test_max_record_bytes_refuses_a_longer_record_on_every_path(tmp_path: Path) -> None:
    """iter_arrow_batches, read_arrow and an engine's whole-file read (framed by a fresh sidecar) and
    its plan of record ranges all refuse a record longer than max_record_bytes, naming the file."""
    from tfrecord_lite._datasets.pieces import Piece, PieceOptions, piece_batches, split_pieces

    path = tmp_path / "long.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        for i in range(40):
            writer.write_example({"i": i, "name": b"x" * (5000 if i == 30 else 10)})
    with tfr.TFRecordFile(path):  # the sidecar is built: the indexed fast path is taken where allowed
        pass
    with pytest.raises(tfr.RecordTooLargeError, match=r"long\.tfrecord"):
        arrow.read_arrow(path, features=SPEC, max_record_bytes=1000)
    with pytest.raises(tfr.RecordTooLargeError):
        list(arrow.iter_arrow_batches(path, columns=["i"], max_record_bytes=1000))
    assert arrow.read_arrow(path, features=SPEC, max_record_bytes=6000).num_rows == 40
    strict = PieceOptions(max_record_bytes=1000)
    with pytest.raises(tfr.RecordTooLargeError):
        list(piece_batches(Piece(str(path), 0), SPEC, 8, strict))
    with pytest.raises(tfr.RecordTooLargeError, match=r"long\.tfrecord"):  # planning opens the file's index
        split_pieces([(str(path), path.stat().st_size)], 1000, 8, strict)
    cut = split_pieces([(str(path), path.stat().st_size)], 1000, 8)
    assert len(cut) > 1 and sum(len(list(piece_batches(p, SPEC, 8))) for p in cut) >= len(cut)


def test_the_options_are_keywords_with_the_reader_defaults(damaged: tuple[Path, list[int]]) -> None:
    path, _ = damaged
    with pytest.raises(TypeError):
        arrow.read_arrow(path, SPEC)  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown compression"):
        arrow.iter_arrow_batches(path, compression="lz4")
    with pytest.raises(ValueError, match="is uncompressed, but compression='gzip' was given"):
        arrow.read_arrow(path, compression="gzip")
    assert arrow.read_arrow(path, features=SPEC, compression=None, on_error="skip").num_rows == 28
