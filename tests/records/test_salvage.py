# Reading past damage: on_error="skip" / a callable / max_skipped on every reader,
# salvage() and `tfrecord-lite salvage`, on real files damaged the ways disks and
# transfers damage them: flipped bits in headers, payloads and footers, zeroed pages,
# cut tails, garbage between records, a GZIP stream cut short. The property: every
# record whose bytes the damage did not change comes back, in order, none twice and
# none invented. Which records were touched is worked out from the intact file's own
# length fields and a byte comparison, independently of the library.
from __future__ import annotations

import errno
import gzip
import io
import logging
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests._records import record_spans
from tfrecord_lite._stream.scanner import CHUNK_SIZE
from tfrecord_lite._wire.framing import frame


def framed(records: list[bytes]) -> bytes:
    return b"".join(frame(r) for r in records)


def untouched(original: bytes, damaged: bytes, records: list[bytes], cut: int | None = None) -> list[bytes]:
    """The records whose bytes are the same in `damaged` (a same-size copy, or `original` cut at `cut`)."""
    spans = record_spans(original)
    if cut is not None:
        return [r for r, (_, end) in zip(records, spans, strict=True) if end <= cut]
    diff = np.frombuffer(original, np.uint8) != np.frombuffer(damaged, np.uint8)
    return [r for r, (s, e) in zip(records, spans, strict=True) if not diff[s:e].any()]


def skip_read(source: object, **kwargs: object) -> tuple[list[bytes], list[tfr.TFRecordError]]:
    errors: list[tfr.TFRecordError] = []
    return list(tfr.iter_records(source, on_error=errors.append, **kwargs)), errors  # type: ignore[arg-type]


def sample_records(rng: np.random.Generator, n: int, largest: int = 3000) -> list[bytes]:
    return [rng.bytes(int(k)) for k in rng.integers(0, largest, n)]


# ---------------------------------------------------------------- the property, over damage positions

damage_kinds = st.sampled_from(["flip", "zero_page", "cut", "garbage"])


@given(
    seed=st.integers(0, 2**32 - 1),
    kind=damage_kinds,
    where=st.lists(st.floats(0, 1, exclude_max=True), min_size=1, max_size=4),
    bit=st.integers(0, 7),
)
@example(seed=18873, kind="flip", where=[0.0], bit=0)  # a first header that looks like a ZLIB stream's
def test_every_untouched_record_comes_back_once(seed: int, kind: str, where: list[float], bit: int) -> None:
    rng = np.random.default_rng(seed)
    records = sample_records(rng, int(rng.integers(1, 40)), largest=int(rng.choice([20, 600, 9000])))
    data = framed(records)
    places = sorted({int(w * len(data)) for w in where})
    cut = None
    if kind == "flip":
        bad = bytearray(data)
        for p in places:
            bad[p] ^= 1 << bit
    elif kind == "zero_page":
        bad = bytearray(data)
        for p in places:
            bad[p : p + 4096] = bytes(len(bad[p : p + 4096]))
    elif kind == "cut":
        cut = places[0]
        bad = bytearray(data[:cut])
    else:  # garbage between records: the records themselves are untouched
        starts = [s for s, _ in record_spans(data)]
        bad = bytearray()
        for k, (s, e) in enumerate(record_spans(data)):
            if k and any(starts[k - 1] < p <= s for p in places):
                bad += rng.bytes(int(rng.integers(1, 5000)))
            bad += data[s:e]
    expected = untouched(data, bytes(bad), records, cut) if kind != "garbage" else records
    boundaries = {0, *(e for _, e in record_spans(data))}
    damaged = bytes(bad) != data and not (cut is not None and cut in boundaries)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp, "damaged.tfrecord"), Path(tmp, "rescued.tfrecord")
        src.write_bytes(bad)
        got, errors = skip_read(src)
        assert got == expected
        assert bool(errors) == damaged
        found: list[tfr.TFRecordError] = []
        with tfr.TFRecordFile(src, on_error=found.append) as f:  # indexed over the same good records
            assert len(f) == len(expected) and list(f) == expected and f[::-1] == expected[::-1]
            assert [str(e) for e in found] == [str(e) for e in errors]
            assert (f.index_path is None) == damaged  # no sidecar that would leave records out
        report = tfr.salvage(src, destination=dst)
        assert list(tfr.iter_records(dst)) == expected
        assert report.records == len(expected) and report.ok != damaged
        assert len(report.damage) == len(errors)
        with tfr.TFRecordFile(dst) as f:  # the sidecar written beside it is right
            assert f.index_path is not None and list(f) == expected


# ---------------------------------------------------------------- each kind of damage, by hand


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, list[bytes]]:
    """Records large enough that damage and the search after it cross the reader's buffer."""
    rng = np.random.default_rng(12)
    records = [rng.bytes(n) for n in (10, 300_000, 5, 700_000, 0, 64, 900_000, 450_000, 33, 1_200_000, 7, 20)]
    data = framed(records)
    assert len(data) > 3 * CHUNK_SIZE
    return data, records


def test_a_bad_payload_is_skipped_by_its_length(intact, tmp_path: Path) -> None:
    data, records = intact
    spans = record_spans(data)
    bad = bytearray(data)
    bad[spans[3][0] + 12 + 1000] ^= 0x10  # payload of record 3
    bad[spans[5][1] - 2] ^= 0x01  # footer of record 5
    path = tmp_path / "payload.tfrecord"
    path.write_bytes(bad)
    got, errors = skip_read(path)
    assert got == [r for i, r in enumerate(records) if i not in (3, 5)]
    assert [(type(e), e.offset, e.path) for e in errors] == [
        (tfr.CorruptRecordError, spans[3][0], str(path)),
        (tfr.CorruptRecordError, spans[5][0], str(path)),
    ]
    assert f"skipped {spans[3][1] - spans[3][0]} bytes, to offset {spans[3][1]}" in str(errors[0])


def test_after_a_damaged_header_the_next_valid_record_is_found(intact, tmp_path: Path) -> None:
    data, records = intact
    spans = record_spans(data)
    bad = bytearray(data)
    bad[spans[6][0] + 3] ^= 0x40  # length of record 6 (900 kB: the next header is a buffer away)
    bad[spans[9][0] + 9] ^= 0x01  # length CRC of record 9
    path = tmp_path / "header.tfrecord"
    path.write_bytes(bad)
    got, errors = skip_read(path)
    assert got == [r for i, r in enumerate(records) if i not in (6, 9)]
    assert [(e.offset, e.reason.split(";")[0]) for e in errors] == [
        (spans[6][0], "length CRC mismatch (damaged record header)"),
        (spans[9][0], "length CRC mismatch (damaged record header)"),
    ]


def test_a_valid_header_with_a_bad_payload_is_no_place_to_resume(tmp_path: Path) -> None:
    """A resync point needs both CRCs good: a record whose header survived but whose payload
    did not is passed over too, and the search goes on to the next intact record."""
    records = [b"a" * 100, b"b" * 200, b"c" * 300, b"d" * 50]
    data = framed(records)
    spans = record_spans(data)
    bad = bytearray(data)
    bad[spans[0][0] + 1] ^= 0x01  # header of record 0: resync needed
    bad[spans[1][0] + 20] ^= 0x01  # payload of record 1: its header is valid, its payload not
    path = tmp_path / "two.tfrecord"
    path.write_bytes(bad)
    got, errors = skip_read(path)
    assert got == records[2:]
    assert len(errors) == 1 and errors[0].offset == 0 and f"to offset {spans[2][0]}" in str(errors[0])


def test_a_zeroed_page_and_garbage_between_records(intact, tmp_path: Path) -> None:
    data, records = intact
    spans = record_spans(data)
    bad = bytearray(data[: spans[8][0]]) + os.urandom(70_000) + bytearray(data[spans[8][0] :])
    start = spans[2][0] - 100  # a page over the end of record 1, record 2 and into record 3
    bad[start : start + 4096] = bytes(4096)
    path = tmp_path / "zeroed.tfrecord"
    path.write_bytes(bad)
    got, errors = skip_read(path)
    assert got == [r for i, r in enumerate(records) if i not in (1, 2, 3)]
    # record 1 by its length, records 2-3 (headers zeroed) by the search, the garbage by the search
    assert [e.offset for e in errors] == [spans[1][0], spans[2][0], spans[8][0]]
    assert [e.reason.split(";")[0] for e in errors][::2] == ["payload CRC mismatch"] + [
        "length CRC mismatch (damaged record header)"
    ]


def test_a_cut_tail_ends_the_file_with_a_truncated_record_error(intact, tmp_path: Path) -> None:
    data, records = intact
    spans = record_spans(data)
    path = tmp_path / "cut.tfrecord"
    path.write_bytes(data[: spans[9][0] + 5000])
    got, errors = skip_read(path)
    assert got == records[:9]
    assert len(errors) == 1 and isinstance(errors[0], tfr.TruncatedRecordError)
    assert errors[0].offset == spans[9][0] and "skipped the rest of the stream" in str(errors[0])


def test_a_gzip_stream_cut_short_yields_what_it_held(intact, tmp_path: Path) -> None:
    data, records = intact
    packed = gzip.compress(data, compresslevel=1)
    path = tmp_path / "cut.tfrecord.gz"
    path.write_bytes(packed[: len(packed) // 2])
    got, errors = skip_read(path)
    assert got == records[: len(got)] and 0 < len(got) < len(records)
    assert len(errors) == 1 and isinstance(errors[0], tfr.TruncatedRecordError)
    assert f"({len(got)} records were)" in str(errors[0])
    report = tfr.salvage(path, destination=tmp_path / "rescued.tfrecord.gz", output_compression="gzip")
    assert report.records == len(got) and report.compression == "gzip"
    assert list(tfr.iter_records(tmp_path / "rescued.tfrecord.gz")) == got


def test_a_file_that_starts_damaged_is_read_from_its_first_valid_record(tmp_path: Path) -> None:
    records = [b"x" * 40, b"y" * 30, b"z" * 20]
    data = framed(records)
    bad = bytearray(data)
    bad[2] ^= 0xFF
    path = tmp_path / "head.tfrecord"
    path.write_bytes(bad)
    with pytest.raises(tfr.CorruptRecordError, match="not a TFRecord file"):
        list(tfr.iter_records(path))
    assert skip_read(path)[0] == records[1:]


def test_a_damaged_first_header_that_looks_like_zlib_is_read_as_plain(tmp_path: Path) -> None:
    """A 376-byte record's length starts 78 01, a valid ZLIB header: once its length CRC is
    damaged, the content no longer says "plain file", and a damaged plain file it is."""
    records = [b"z" * 376, b"after"]
    bad = bytearray(framed(records))
    bad[9] ^= 0x01
    assert bytes(bad[:2]) == b"\x78\x01"
    path = tmp_path / "looks-like-zlib.tfrecord"
    path.write_bytes(bad)
    got, errors = skip_read(path)
    assert got == [b"after"] and [e.offset for e in errors] == [0]


# ---------------------------------------------------------------- the knobs


def test_skip_logs_a_warning_naming_file_offset_and_bytes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    records = [b"a" * 10, b"b" * 10, b"c" * 10]
    bad = bytearray(framed(records))
    bad[26 + 12 + 3] ^= 1  # payload of record 1 (records are 26 bytes)
    path = tmp_path / "one.tfrecord"
    path.write_bytes(bad)
    with caplog.at_level(logging.WARNING, logger="tfrecord_lite"):
        assert list(tfr.iter_records(path, on_error="skip")) == [records[0], records[2]]
    (message,) = [r.getMessage() for r in caplog.records]
    assert str(path) in message and "at byte offset 26" in message and "skipped 26 bytes" in message


def test_more_than_max_skipped_raises(tmp_path: Path) -> None:
    records = [bytes([i]) * 10 for i in range(6)]
    bad = bytearray(framed(records))
    for k in (1, 3, 5):
        bad[26 * k + 15] ^= 1
    path = tmp_path / "three.tfrecord"
    path.write_bytes(bad)
    assert len(list(tfr.iter_records(path, on_error="skip", max_skipped=3))) == 3
    got: list[bytes] = []
    with pytest.raises(tfr.CorruptRecordError, match="more than max_skipped=2") as info:
        got.extend(tfr.iter_records(path, on_error="skip", max_skipped=2))
    assert got == [records[0], records[2], records[4]] and info.value.offset == 26 * 5
    with pytest.raises(tfr.CorruptRecordError, match="max_skipped=0"):
        list(tfr.iter_records(path, on_error=lambda err: None, max_skipped=0))


def test_a_callable_may_stop_the_reading(tmp_path: Path) -> None:
    bad = bytearray(framed([b"a" * 10, b"b" * 10]))
    bad[15] ^= 1
    path = tmp_path / "stop.tfrecord"
    path.write_bytes(bad)

    def stop(err: tfr.TFRecordError) -> None:
        raise RuntimeError(f"stopped at {err.offset}")

    with pytest.raises(RuntimeError, match="stopped at 0"):
        list(tfr.iter_records(path, on_error=stop))


@pytest.mark.parametrize(
    ("on_error", "max_skipped", "message"),
    [
        ("ignore", None, "on_error must be 'raise', 'skip' or a callable"),
        ("skip", -1, "max_skipped must be None or an int >= 0"),
        ("skip", 1.5, "max_skipped must be None or an int >= 0"),
        ("raise", 3, "max_skipped applies only with on_error='skip' or a callable"),
    ],
)
def test_bad_knobs_are_refused_at_once(tmp_path: Path, on_error: str, max_skipped: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tfr.iter_records(tmp_path / "never-opened.tfrecord", on_error=on_error, max_skipped=max_skipped)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        tfr.iter_example_batches(tmp_path / "x", features={}, on_error=on_error, max_skipped=max_skipped)  # type: ignore[arg-type]


def test_example_batches_skip_damaged_records(tmp_path: Path) -> None:
    examples = [{"id": i, "v": np.full(i % 4, i, np.float32)} for i in range(100)]
    data = framed([tfr.encode_example(e) for e in examples])
    spans = record_spans(data)
    bad = bytearray(data)
    for k in (10, 55):
        bad[spans[k][0] + 14] ^= 0x01
    path = tmp_path / "ex.tfrecord"
    path.write_bytes(bad)
    spec = {"id": tfr.FixedLenFeature([], "int64"), "v": tfr.VarLenFeature("float32")}
    errors: list[tfr.TFRecordError] = []
    batches = list(tfr.iter_example_batches(path, features=spec, batch_size=16, on_error=errors.append))
    ids = np.concatenate([b["id"] for b in batches]).tolist()
    assert ids == [i for i in range(100) if i not in (10, 55)]
    assert [e.offset for e in errors] == [spans[10][0], spans[55][0]]
    with pytest.raises(tfr.CorruptRecordError):
        list(tfr.iter_example_batches(path, features=spec, batch_size=16))


# ---------------------------------------------------------------- salvage


def test_salvage_writes_atomically_and_refuses_its_source(tmp_path: Path) -> None:
    records = [b"r%d" % i for i in range(50)]
    bad = bytearray(framed(records))
    bad[-3] ^= 1  # the footer of the last record
    src, dst = tmp_path / "in.tfrecord", tmp_path / "out.tfrecord"
    src.write_bytes(bad)
    before = bytes(bad)
    with pytest.raises(ValueError, match="overwrite its source"):
        tfr.salvage(src, destination=src)
    report = tfr.salvage(src, destination=dst)
    assert src.read_bytes() == before  # the source is only read
    assert sorted(os.listdir(tmp_path)) == ["in.tfrecord", "out.tfrecord", "out.tfrecord.tfrlidx"]
    assert report.records == 49 and report.records_skipped == 1
    last = record_spans(before)[-1]
    assert report.lost == [last] and report.bytes_lost == last[1] - last[0] == 19
    assert "1 damaged span lost (19 bytes)" in str(report) and "payload CRC mismatch" in str(report)


class FailingDisk(io.BytesIO):
    """A source whose second read fails, as a failing disk's would."""

    reads = 0

    def readinto(self, buffer: Any) -> int:
        self.reads += 1
        if self.reads > 1:
            raise OSError(errno.EIO, "Input/output error")
        return super().readinto(buffer)


def test_salvage_leaves_the_old_state_when_it_fails(tmp_path: Path) -> None:
    dst = tmp_path / "out.tfrecord"
    tfr.salvage(io.BytesIO(framed([b"old"])), destination=dst)
    before = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    with pytest.raises(OSError, match="Input/output error"):
        tfr.salvage(FailingDisk(framed([b"x" * 1000] * 3000)), destination=dst)
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == before


def test_cli_salvage_prints_the_loss_and_exits_1(intact, tmp_path: Path) -> None:
    data, records = intact
    spans = record_spans(data)
    bad = bytearray(data)
    bad[spans[4][0] + 2] ^= 0x08
    src, dst = tmp_path / "in.tfrecord", tmp_path / "out.tfrecord"
    src.write_bytes(bad)
    proc = run_cli("salvage", str(src), str(dst))
    assert proc.returncode == 1, proc.stderr
    assert f"{len(records) - 1} records copied to {dst}" in proc.stdout
    assert f"bytes {spans[4][0]}..{spans[5][0]}: length CRC mismatch" in proc.stdout
    assert list(tfr.iter_records(dst)) == records[:4] + records[5:]
    again = run_cli("salvage", str(dst), str(tmp_path / "again.tfrecord.gz"))
    assert again.returncode == 0 and "nothing lost" in again.stdout
    assert (tmp_path / "again.tfrecord.gz").read_bytes()[:2] == b"\x1f\x8b"
    refused = run_cli("salvage", str(src), str(dst))
    assert refused.returncode == 2 and "already exists" in refused.stderr


# ---------------------------------------------------------------- index-based readers


def damaged_shards(tmp_path: Path, gzip_middle: bool = False) -> list[str]:
    """Three shards of 20 Examples (id 0..59): id 5's footer and id 40's header damaged; with
    `gzip_middle`, the intact middle shard is GZIP-compressed."""
    paths = []
    for shard in range(3):
        data = framed([tfr.encode_example({"id": i}) for i in range(shard * 20, shard * 20 + 20)])
        spans = record_spans(data)
        bad = bytearray(data)
        if shard == 0:
            bad[spans[5][1] - 1] ^= 0x01  # footer of id 5
        if shard == 2:
            bad[spans[0][0] + 4] ^= 0x01  # header of id 40
        if shard == 1 and gzip_middle:
            bad = bytearray(gzip.compress(bad))
        path = tmp_path / f"part-{shard}.tfrecord"
        path.write_bytes(bad)
        paths.append(str(path))
    return paths


def ids(records: list[bytes]) -> list[int]:
    return [int(tfr.decode_example(r)["id"][0]) for r in records]


def test_sharded_records_index_the_good_records_as_iter_records_reads_them(tmp_path: Path) -> None:
    paths = damaged_shards(tmp_path)
    with pytest.raises(tfr.CorruptRecordError) as err:
        tfr.ShardedRecords(paths)
    assert err.value.path == paths[0] and err.value.offset is not None
    streamed, errors = skip_read(paths)
    found: list[tfr.TFRecordError] = []
    with tfr.ShardedRecords(paths, on_error=found.append) as shards:
        assert (
            len(shards) == 58
            and list(shards) == streamed
            and ids(list(shards)) == [i for i in range(60) if i not in (5, 40)]
        )
        assert ids([shards[5], shards[-19], shards[38]]) == [6, 41, 39]
        assert [str(e) for e in found] == [str(e) for e in errors] and len(found) == 2
        assert [s.index_path is None for s in shards.shards] == [True, False, True]  # the clean one is saved
        again = pickle.loads(pickle.dumps(shards))  # a worker: the in-memory indexes travel, no second scan
        assert list(again) == streamed and len(found) == 2
    assert not Path(paths[0] + ".tfrlidx").exists() and not Path(paths[2] + ".tfrlidx").exists()
    with pytest.raises(tfr.CorruptRecordError, match="max_skipped=1") as err:
        tfr.ShardedRecords(paths, on_error="skip", max_skipped=1)  # counted over all the shards
    assert err.value.path == paths[2]
    gz = tmp_path / "part.tfrecord.gz"
    gz.write_bytes(gzip.compress(framed([b"a"])))
    with pytest.raises(ValueError, match="compressed"):
        tfr.TFRecordFile(gz, on_error="skip")


def test_damage_after_indexing_is_raised_by_the_read(tmp_path: Path) -> None:
    """A fresh sidecar counted the record: [i] cannot leave it out, and raises, naming it, in every mode."""
    path = tmp_path / "rotted.tfrecord"
    data = framed([tfr.encode_example({"id": i}) for i in range(10)])
    path.write_bytes(data)
    tfr.write_index(path)
    before = path.stat()
    start, end = record_spans(data)[4]
    with open(path, "r+b") as fh:  # bit rot: same size, same mtime
        fh.seek(end - 6)
        fh.write(bytes([data[end - 6] ^ 0x10]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    for on_error in ("raise", "skip"):
        with tfr.TFRecordFile(path, on_error=on_error) as f:
            assert len(f) == 10 and f.index_path is not None
            with pytest.raises(tfr.CorruptRecordError, match="data CRC") as err:
                f[4]
            assert (err.value.path, err.value.offset) == (str(path), start)
            assert ids([f[3], f[5]]) == [3, 5]


# ---------------------------------------------------------------- the PyTorch streaming dataset


@pytest.mark.torch
@pytest.mark.parametrize("workers", [0, 2])
def test_iterable_dataset_skips_damage_in_every_worker(tmp_path: Path, workers: int) -> None:
    pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    from tfrecord_lite.torch import IterableTFRecordDataset

    paths = damaged_shards(tmp_path, gzip_middle=True)
    spec = {"id": tfr.FixedLenFeature([], "int64")}
    ds = IterableTFRecordDataset(paths, features=spec, on_error="skip")
    got = sorted(int(item["id"]) for item in DataLoader(ds, batch_size=None, num_workers=workers))
    assert got == [i for i in range(60) if i not in (5, 40)]
    with pytest.raises(tfr.CorruptRecordError):
        list(IterableTFRecordDataset(paths, features=spec))
    with pytest.raises(tfr.CorruptRecordError, match="max_skipped=1"):
        list(IterableTFRecordDataset(paths, features=spec, on_error="skip", max_skipped=1))


@pytest.mark.torch
@pytest.mark.parametrize("workers", [0, 2])
def test_map_style_dataset_indexes_the_good_records(tmp_path: Path, workers: int) -> None:
    pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    from tfrecord_lite.torch import TFRecordDataset

    paths = damaged_shards(tmp_path)
    spec = {"id": tfr.FixedLenFeature([], "int64")}
    with pytest.raises(tfr.CorruptRecordError):
        TFRecordDataset(paths, features=spec)
    ds = TFRecordDataset(paths, features=spec, on_error="skip")
    assert len(ds) == 58 and int(ds[5]["id"]) == 6 and int(ds[39]["id"]) == 41
    loader = DataLoader(ds, batch_size=None, shuffle=True, num_workers=workers)
    assert sorted(int(item["id"]) for item in loader) == [i for i in range(60) if i not in (5, 40)]


# ---------------------------------------------------------------- TensorFlow as the oracle


@pytest.mark.tf
@pytest.mark.parametrize("compression", [None, "gzip"])
def test_tensorflow_reads_the_salvaged_file_as_the_records_skipping_found(
    tmp_path: Path, compression: str | None
) -> None:
    """TF's ignore_errors() drops the rest of a file at its first damage: up to there it agrees
    with skipping; and the salvaged file is, to TF, exactly the records skipping found."""
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(3)
    records = sample_records(rng, 30, largest=5000)
    data = framed(records)
    spans = record_spans(data)
    bad = bytearray(data)
    bad[spans[3][0] + 20] ^= 0x04  # payload of record 3
    bad[spans[7][0] + 1] ^= 0x04  # header of record 7
    src, dst = tmp_path / "damaged.tfrecord", tmp_path / ("rescued.tfrecord" + (".gz" if compression else ""))
    src.write_bytes(bad)
    theirs = [r.numpy() for r in tf.data.TFRecordDataset(str(src)).ignore_errors()]
    ours, _ = skip_read(src)
    assert theirs == records[:3] == ours[:3]
    assert ours == [r for i, r in enumerate(records) if i not in (3, 7)]
    tfr.salvage(src, destination=dst, output_compression=compression)
    tf_compression = "GZIP" if compression else ""
    assert [r.numpy() for r in tf.data.TFRecordDataset(str(dst), tf_compression)] == ours
