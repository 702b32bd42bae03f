"""Streaming reader and writer on real files, file objects and pipes: compression, integrity, memory."""

from __future__ import annotations

import gzip
import io
import itertools
import os
import pathlib
import struct
import threading
import tracemalloc
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests._records import write_records
from tfrecord_lite._stream.scanner import CHUNK_SIZE
from tfrecord_lite._wire import framing
from tfrecord_lite._wire.crc import masked_crc

COMPRESSIONS = [None, "gzip", "zlib"]
RECORDS = [b"", b"a", b"hello world" * 10, bytes(range(256)) * 40, b"\x00" * 5]


def pipe_reader(blob: bytes):
    """A non-seekable binary file object fed by a thread, like `cat file |`."""
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as out:
            out.write(blob)

    threading.Thread(target=feed, daemon=True).start()
    return os.fdopen(r, "rb")


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_round_trip_through_paths_file_objects_and_pipes(tmp_path, compression):
    path = tmp_path / "data.tfrecord"
    big = np.random.default_rng(0).bytes(3 * CHUNK_SIZE + 17)  # spans several read chunks
    records = RECORDS + [big] + [str(i).encode() for i in range(2000)]
    write_records(path, records, compression)
    assert list(tfr.iter_records(path)) == records  # auto-detected
    assert list(tfr.iter_records(str(path), compression=compression)) == records
    with open(path, "rb") as f:
        assert list(tfr.iter_records(f)) == records
        assert not f.closed  # a caller's file stays open
    assert list(tfr.iter_records(io.BytesIO(path.read_bytes()))) == records
    assert list(tfr.iter_records(pipe_reader(path.read_bytes()))) == records


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_writer_into_a_file_object_leaves_it_open(compression):
    buf = io.BytesIO()
    with tfr.TFRecordWriter(buf, compression=compression) as w:
        w.write(b"x")
        w.write_example({"a": 1})
    assert not buf.closed
    records = list(tfr.iter_records(io.BytesIO(buf.getvalue())))
    assert records[0] == b"x" and tfr.decode_example(records[1])["a"].tolist() == [1]


def test_plain_output_is_exactly_the_framed_records(tmp_path):
    path = tmp_path / "p.tfrecord"
    write_records(path, RECORDS)
    assert path.read_bytes() == b"".join(framing.frame(r) for r in RECORDS)


def test_gzip_and_zlib_are_one_stream_over_the_plain_file(tmp_path):
    plain = b"".join(framing.frame(r) for r in RECORDS)
    write_records(tmp_path / "g", RECORDS, "GZIP")
    write_records(tmp_path / "z", RECORDS, "ZLIB")
    g, z = (tmp_path / "g").read_bytes(), (tmp_path / "z").read_bytes()
    assert g[:2] == b"\x1f\x8b" and gzip.decompress(g) == plain
    assert z[0] & 0x0F == 8 and zlib.decompress(z) == plain  # zlib wrapper + adler32, not raw deflate
    # the same content twice gives the same bytes (no timestamp in the gzip header)
    write_records(tmp_path / "g2", RECORDS, "gzip")
    assert (tmp_path / "g2").read_bytes() == g


def test_concatenated_gzip_members_are_read_to_the_end(tmp_path):
    write_records(tmp_path / "a", [b"one", b"two"], "gzip")
    write_records(tmp_path / "b", [b"three"], "gzip")
    joined = tmp_path / "joined.tfrecord.gz"
    joined.write_bytes((tmp_path / "a").read_bytes() + (tmp_path / "b").read_bytes())
    assert list(tfr.iter_records(joined)) == [b"one", b"two", b"three"]
    assert list(tfr.iter_records(pipe_reader(joined.read_bytes()))) == [b"one", b"two", b"three"]


def test_detection_is_by_content_not_name(tmp_path):
    write_records(tmp_path / "looks_plain.tfrecord", [b"z"], "zlib")
    write_records(tmp_path / "looks_gzip.gz", [b"p"], None)
    assert list(tfr.iter_records(tmp_path / "looks_plain.tfrecord")) == [b"z"]
    assert list(tfr.iter_records(tmp_path / "looks_gzip.gz")) == [b"p"]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_empty_files(tmp_path, compression):
    write_records(tmp_path / "e", [], compression)
    assert list(tfr.iter_records(tmp_path / "e")) == []
    assert list(tfr.iter_records(tmp_path / "e", compression=compression)) == []


@pytest.mark.parametrize("name", [None, "", "gzip", "GZIP", "Zlib", "ZLIB"])
def test_compression_names(tmp_path, name):
    write_records(tmp_path / "c", [b"r"], name)
    assert list(tfr.iter_records(tmp_path / "c", compression=name)) == [b"r"]


@pytest.mark.parametrize("bad", ["bz2", "none", "deflate", 1])
def test_unknown_compression_lists_the_choices(tmp_path, bad):
    with pytest.raises(ValueError, match="'gzip', 'zlib'"):
        tfr.TFRecordWriter(tmp_path / "x", compression=bad)
    (tmp_path / "y").write_bytes(b"")
    with pytest.raises(ValueError, match="'auto'"):
        tfr.iter_records(tmp_path / "y", compression=bad)


def test_every_single_bit_flip_raises(tmp_path):
    blob = b"".join(framing.frame(r) for r in [b"ab", b"", b"xyz" * 5])
    for bit in range(len(blob) * 8):
        damaged = bytearray(blob)
        damaged[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises((tfr.CorruptRecordError, tfr.TruncatedRecordError)):
            list(tfr.iter_records(io.BytesIO(bytes(damaged)), compression=None))


def test_bit_flips_in_gzip_files_raise_or_change_nothing(tmp_path):
    records = [b"ab", b"", b"xyz" * 5]
    write_records(tmp_path / "g", records, "gzip")
    blob = (tmp_path / "g").read_bytes()
    for bit in range(len(blob) * 8):
        damaged = bytearray(blob)
        damaged[bit // 8] ^= 1 << (bit % 8)
        try:
            got = list(tfr.iter_records(io.BytesIO(bytes(damaged)), compression="gzip"))
        except tfr.TFRecordError:
            continue
        assert got == records  # e.g. a flip in the gzip header's OS byte


def test_truncation_anywhere_raises_with_the_record_offset(tmp_path):
    records = [b"ab", b"", b"xyz" * 5]
    blob = b"".join(framing.frame(r) for r in records)
    starts = [0, 18, 34]
    for cut in range(len(blob) + 1):
        path = tmp_path / "t.tfrecord"
        path.write_bytes(blob[:cut])
        if cut in starts + [len(blob)]:
            assert list(tfr.iter_records(path, compression=None)) == records[: (starts + [len(blob)]).index(cut)]
            continue
        with pytest.raises(tfr.TruncatedRecordError) as info:
            list(tfr.iter_records(path, compression=None))
        assert info.value.offset == max(s for s in starts if s <= cut)
        assert info.value.path == str(path) and str(path) in str(info.value)


def test_truncated_gzip_raises_a_tfrecord_error(tmp_path):
    write_records(tmp_path / "g", [b"x" * 1000, b"y" * 1000], "gzip")
    blob = (tmp_path / "g").read_bytes()
    for cut in range(1, len(blob)):
        path = tmp_path / "cut.gz"
        path.write_bytes(blob[:cut])
        with pytest.raises(tfr.TFRecordError) as info:
            list(tfr.iter_records(path))
        assert str(path) in str(info.value)


def test_a_length_of_2_63_in_a_20_byte_file_raises_at_once(tmp_path):
    length = struct.pack("<Q", 2**63 - 1)
    blob = length + struct.pack("<I", masked_crc(length)) + b"12345678"
    assert len(blob) == 20
    path = tmp_path / "huge.tfrecord"
    path.write_bytes(blob)
    tracemalloc.start()
    try:
        for source in (path, pipe_reader(blob)):
            with pytest.raises(tfr.TruncatedRecordError) as info:
                list(tfr.iter_records(source))
            assert info.value.offset == 0
        assert tracemalloc.get_traced_memory()[1] < 16 * CHUNK_SIZE
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("blob", [b"not a tfrecord file at all", b"\x1f\x8bgarbage-after-magic", b"x\x9cgarbage"])
def test_garbage_raises_tfrecord_errors_never_zlib_errors(tmp_path, blob):
    path = tmp_path / "bad"
    path.write_bytes(blob)
    with pytest.raises(tfr.TFRecordError) as info:
        list(tfr.iter_records(path))
    assert str(path) in str(info.value)


def test_trailing_garbage_after_a_gzip_stream_raises(tmp_path):
    write_records(tmp_path / "g", [b"x"], "gzip")
    (tmp_path / "g").write_bytes((tmp_path / "g").read_bytes() + b"trailing junk")
    with pytest.raises(tfr.CorruptRecordError):
        list(tfr.iter_records(tmp_path / "g"))


def test_verify_false_skips_only_the_payload_crc(tmp_path):
    blob = bytearray(framing.frame(b"payload"))
    blob[13] ^= 0xFF
    assert list(tfr.iter_records(io.BytesIO(bytes(blob)), verify=False)) == [bytes(blob[12:-4])]
    with pytest.raises(tfr.CorruptRecordError):
        list(tfr.iter_records(io.BytesIO(bytes(blob))))


def test_text_mode_files_are_refused(tmp_path):
    (tmp_path / "t").write_text("abc")
    with open(tmp_path / "t") as f, pytest.raises(TypeError, match="binary"):
        list(tfr.iter_records(f))


def test_missing_file_raises_at_the_call(tmp_path):
    with pytest.raises(FileNotFoundError):
        tfr.iter_records(tmp_path / "nope.tfrecord")


def test_iterator_closes_its_file(tmp_path):
    write_records(tmp_path / "f", [b"1", b"2"])
    with tfr.iter_records(tmp_path / "f") as it:
        assert next(it) == b"1"
        f = it._stream._file
    assert f.closed


def test_writer_flush_and_close(tmp_path):
    path = tmp_path / "w.tfrecord.gz"
    w = tfr.TFRecordWriter(path, compression="gzip")
    w.write(b"one")
    w.write(bytearray(b"two"))
    w.write(np.arange(3, dtype=np.int32))
    w.flush()
    got = []
    with pytest.raises(tfr.TruncatedRecordError, match="end marker"):
        got.extend(tfr.iter_records(path))  # sync-flushed: complete records are readable now
    assert got == [b"one", b"two", np.arange(3, dtype=np.int32).tobytes()]
    w.close()
    w.close()
    assert w.closed
    with pytest.raises(ValueError, match="closed"):
        w.write(b"more")
    assert len(list(tfr.iter_records(path))) == 3


def test_the_writer_buffers_by_default_and_buffered_false_writes_through(tmp_path):
    records = [b"r%d" % i for i in range(50)]
    framed = len(framing.frame_many(records))
    buffered, through = tmp_path / "buffered.tfrecord", tmp_path / "through.tfrecord"
    with tfr.TFRecordWriter(buffered) as a, tfr.TFRecordWriter(through, buffered=False) as b:
        for r in records:
            a.write(r)
            b.write(r)
        assert buffered.stat().st_size == 0  # the default keeps the tail in memory until flush()
        data = through.read_bytes()  # every returned write() reached the OS; a map's zero bytes follow
        assert data[framed:] == bytes(len(data) - framed)
        assert data[:framed] == bytes(framing.frame_many(records))
        with pytest.raises(tfr.TruncatedRecordError, match="write-through writer"):
            list(tfr.iter_records(through))
        assert list(tfr.iter_records(through, on_error="skip")) == records
        a.flush()
        b.flush()  # cuts the file to its records
        assert buffered.read_bytes() == through.read_bytes()
    sink = io.BytesIO()
    with tfr.TFRecordWriter(sink, buffered=False) as w:  # a file object: written and flushed per record
        w.write(b"x")
        assert sink.getvalue() == framing.frame(b"x")


def test_buffered_false_is_refused_where_records_cannot_reach_the_os_one_by_one(tmp_path):
    with pytest.raises(ValueError, match=r"buffered=False .* uncompressed"):
        tfr.TFRecordWriter(tmp_path / "a.tfrecord.gz", compression="gzip", buffered=False)
    with pytest.raises(ValueError, match=r"buffered=False .* upload"):
        tfr.TFRecordWriter("memory://bucket/a.tfrecord", buffered=False)
    assert not (tmp_path / "a.tfrecord.gz").exists()


def test_pathlike_and_records_written(tmp_path):
    with tfr.TFRecordWriter(pathlib.PurePath(tmp_path / "p")) as w:
        for i in range(5):
            w.write_example({"i": i})
    assert w.records_written == 5
    assert w.bytes_written == (tmp_path / "p").stat().st_size
    assert [tfr.decode_example(r)["i"][0] for r in tfr.iter_records(tmp_path / "p")] == list(range(5))


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_streaming_memory_is_flat(tmp_path, compression):
    path = tmp_path / "big.tfrecord"
    record = bytes(range(256)) * 8  # 2 KiB
    with tfr.TFRecordWriter(path, compression=compression) as w:
        for _ in range(12_000):  # ~24 MiB of records
            w.write(record)
    tracemalloc.start()
    try:
        count = sum(1 for _ in tfr.iter_records(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 12_000
    assert peak < 4 * CHUNK_SIZE + 1_000_000  # a couple of chunks, not the file


@given(st.lists(st.binary(max_size=2000), max_size=30), st.sampled_from(COMPRESSIONS), st.integers(1, 64))
def test_any_records_through_a_trickling_pipe(records, compression, piece):
    """Reads that return a few bytes at a time (slow pipes, sockets) give the same records."""
    buf = io.BytesIO()
    with tfr.TFRecordWriter(buf, compression=compression) as w:
        for r in records:
            w.write(r)

    class Trickle(io.RawIOBase):
        def __init__(self, data):
            self.data = memoryview(data)

        def readable(self):
            return True

        def read(self, n=-1):
            out, self.data = bytes(self.data[:piece]), self.data[piece:]
            return out

    assert list(tfr.iter_records(Trickle(buf.getvalue()))) == records


@pytest.mark.parametrize(
    ("compression", "options"),
    [(None, {}), (None, {"buffered": False}), ("gzip", {}), ("zlib", {}), ("gzip", {"seek_every": 1000})],
)
def test_write_buffer_and_write_framed_write_what_write_writes(tmp_path, compression, options):
    ends = list(itertools.accumulate(map(len, RECORDS)))
    one_by_one, batched = tmp_path / "one.tfrecord", tmp_path / "batch.tfrecord"
    with tfr.TFRecordWriter(str(one_by_one), compression=compression, **options) as writer:
        for record in RECORDS * 3:
            writer.write(record)
    with tfr.TFRecordWriter(str(batched), compression=compression, **options) as writer:
        writer.write(RECORDS[0])  # a record written before the buffer stays before it
        writer.write_buffer(b"".join(RECORDS[1:]), [end - ends[0] for end in ends[1:]])
        writer.write_buffer(memoryview(b"".join(RECORDS * 2)), ends + [ends[-1] + end for end in ends])
        assert writer.records_written == 3 * len(RECORDS)
        assert writer.bytes_written == sum(map(len, RECORDS * 3)) + 16 * 3 * len(RECORDS)
    assert batched.read_bytes() == one_by_one.read_bytes()
    assert list(tfr.iter_records(str(batched))) == RECORDS * 3
    framed = tmp_path / "framed.tfrecord"
    with tfr.TFRecordWriter(str(framed), compression=compression, **options) as writer:
        writer.write(RECORDS[0])
        writer.write_framed(framing.frame_many(RECORDS[1:]), [len(r) for r in RECORDS[1:]])
        writer.write_framed(framing.frame_many(RECORDS * 2), np.array([len(r) for r in RECORDS * 2]))
        assert writer.records_written == 3 * len(RECORDS)
        assert writer.bytes_written == sum(map(len, RECORDS * 3)) + 16 * 3 * len(RECORDS)
    assert framed.read_bytes() == one_by_one.read_bytes()
