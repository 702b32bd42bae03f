"""Sans-I/O framing: frame / scan on buffers, CRCs, truncation and corrupt lengths."""

from __future__ import annotations

import itertools
import struct

import pytest
from crc32c import crc32c
from hypothesis import given
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tfrecord_lite._wire import framing
from tfrecord_lite._wire.crc import masked_crc

payloads = st.lists(st.binary(max_size=300), max_size=20)


def masked_crc_by_the_spec(data: bytes) -> int:
    """TFRecord's definition (tensorflow/core/lib/hash/crc32c.h: Mask), written out longhand."""
    crc = crc32c(data)
    rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    return (rotated + 0xA282EAD8) & 0xFFFFFFFF


@given(st.binary(max_size=100))
def test_frame_layout(data):
    framed = framing.frame(data)
    assert len(framed) == len(data) + 16
    length, length_crc = struct.unpack_from("<QI", framed)
    assert length == len(data)
    assert length_crc == masked_crc_by_the_spec(framed[:8])
    assert framed[12:-4] == data
    assert struct.unpack("<I", framed[-4:])[0] == masked_crc_by_the_spec(data)


@given(st.lists(st.binary(max_size=300), max_size=40))
def test_frame_many_is_the_records_framed_one_by_one(records):
    assert framing.frame_many(records) == b"".join(map(framing.frame, records))


@given(st.lists(st.binary(max_size=300), max_size=40))
def test_frame_joined_is_the_records_framed_one_by_one(records):
    head, body, tail = framing.frame_joined(records)
    assert head + body + tail == b"".join(map(framing.frame, records))


def test_frame_joined_frames_lengths_past_two_bytes():
    records = [b"a" * 0xFFFF, b"", b"b" * 0x10000, b"c", b"d" * 70_000]
    head, body, tail = framing.frame_joined(records)
    assert head + body + tail == b"".join(map(framing.frame, records))


def test_frame_accepts_any_buffer():
    import array

    values = array.array("i", [1, 2, 3])
    assert framing.frame(values) == framing.frame(values.tobytes())
    assert framing.frame(memoryview(b"abc")) == framing.frame(b"abc")


@given(payloads, st.integers(0, 7))
def test_scan_finds_every_record(records, prefix):
    blob = b"\0" * prefix + b"".join(framing.frame(r) for r in records)
    starts, lengths, end = framing.scan(blob, prefix, final=True)
    assert [blob[s : s + n] for s, n in zip(starts, lengths, strict=False)] == records
    assert end == len(blob)


@given(payloads.filter(bool), st.data())
def test_scan_stops_before_an_incomplete_tail(records, data):
    blob = b"".join(framing.frame(r) for r in records)
    cut = data.draw(st.integers(0, len(blob)))
    starts, _lengths, end = framing.scan(blob[:cut])
    boundaries = [0]
    for r in records:
        boundaries.append(boundaries[-1] + len(r) + 16)
    complete = max(b for b in boundaries if b <= cut)
    assert end == complete
    assert len(starts) == boundaries.index(complete)
    if cut != complete:
        with pytest.raises(tfr.TruncatedRecordError) as info:
            framing.scan(blob[:cut], final=True, origin=1000, path="x.tfrecord")
        assert info.value.offset == 1000 + complete
        assert "x.tfrecord" in str(info.value) and str(1000 + complete) in str(info.value)


def test_max_records_resumes_where_it_stopped():
    blob = b"".join(framing.frame(bytes([i]) * i) for i in range(10))
    seen, pos = [], 0
    while True:
        starts, lengths, pos2 = framing.scan(blob, pos, max_records=3, final=True)
        if not starts:
            break
        seen += [blob[s : s + n] for s, n in zip(starts, lengths, strict=False)]
        pos = pos2
    assert seen == [bytes([i]) * i for i in range(10)]


def test_corrupt_crcs_name_the_record_offset():
    blob = bytearray(framing.frame(b"first") + framing.frame(b"second"))
    second = len(framing.frame(b"first"))
    blob[second + 14] ^= 0x01  # inside the second payload
    with pytest.raises(tfr.CorruptRecordError, match="data CRC") as info:
        framing.scan(blob, final=True, path="f")
    assert info.value.offset == second
    # verify=False skips the payload CRC only
    starts, _, _ = framing.scan(blob, final=True, verify=False)
    assert len(starts) == 2
    blob[second + 3] ^= 0x01  # inside the second length
    with pytest.raises(tfr.CorruptRecordError, match="length CRC") as info:
        framing.scan(blob, final=True, verify=False)
    assert info.value.offset == second


def test_a_huge_length_is_reported_without_being_allocated():
    length = struct.pack("<Q", 2**63 - 1)
    blob = length + struct.pack("<I", masked_crc(length)) + b"12345678"  # 20 bytes
    assert framing.scan(blob) == ([], [], 0)
    with pytest.raises(tfr.TruncatedRecordError, match=str(2**63 - 1)):
        framing.scan(blob, final=True)


def test_header_is_valid():
    framed = framing.frame(b"abc")
    assert framing.header_is_valid(framed)
    assert not framing.header_is_valid(framed[:11])
    assert not framing.header_is_valid(b"\x1f\x8b" + framed[2:])


def first_damage_by_the_spec(blob: bytes) -> tuple[type[Exception], int] | None:
    """Walk the records one at a time as TensorFlow's reader does: the error and offset of the
    first bad one (a damaged length CRC, a damaged data CRC, or a truncated tail)."""
    p = 0
    while p < len(blob):
        if len(blob) - p < 12:
            return tfr.TruncatedRecordError, p
        length, length_crc = struct.unpack_from("<QI", blob, p)
        if length_crc != masked_crc_by_the_spec(blob[p : p + 8]):
            return tfr.CorruptRecordError, p
        if p + 16 + length > len(blob):
            return tfr.TruncatedRecordError, p
        data = blob[p + 12 : p + 12 + length]
        if struct.unpack_from("<I", blob, p + 12 + length)[0] != masked_crc_by_the_spec(data):
            return tfr.CorruptRecordError, p
        p += 16 + length
    return None


@given(st.lists(st.binary(max_size=40), min_size=32, max_size=100), st.data())
def test_scan_of_many_records_reports_the_first_damage(records, data):
    # From 32 records on, scan checks them together (all payload CRCs in one crc32c call, for
    # records under a KiB): damaged bytes anywhere, one or two, and a cut tail are found where
    # a record-by-record walk finds them.
    padding = bytes(data.draw(st.sampled_from([0, 1100])))
    records = [r + padding for r in records]
    blob = bytearray(b"".join(framing.frame(r) for r in records))
    for _ in range(data.draw(st.integers(0, 2))):
        blob[data.draw(st.integers(0, len(blob) - 1))] ^= data.draw(st.integers(1, 255))
    blob = blob[: data.draw(st.integers(len(blob) // 2, len(blob)))]
    expected = first_damage_by_the_spec(bytes(blob))
    if expected is None:
        starts, lengths, end = framing.scan(blob, final=True)
        assert [bytes(blob[s : s + n]) for s, n in zip(starts, lengths, strict=True)] == records[: len(starts)]
        assert end == len(blob)
        return
    kind, offset = expected
    with pytest.raises(kind) as info:
        framing.scan(blob, final=True, origin=7, path="many.tfrecord")
    assert (type(info.value), info.value.offset, info.value.path) == (kind, 7 + offset, "many.tfrecord")


@given(payloads, st.sampled_from([bytes, bytearray, memoryview]))
def test_frame_buffer_frames_each_record_of_the_buffer(records, kind):
    ends = list(itertools.accumulate(map(len, records)))
    framed = framing.frame_buffer(kind(b"".join(records)), ends)
    assert framed == b"".join(map(framing.frame, records)) == framing.frame_many(records)


@given(payloads, st.integers(0, 255))
def test_fill_frames_frames_records_in_their_slots(records, junk):
    """Slots of 12 free bytes, the record, 4 free bytes (holding junk): framed in place, the buffer
    is frame_many of the records."""
    import numpy as np

    slots = b"".join(bytes([junk]) * 12 + record + bytes([junk]) * 4 for record in records)
    buffer = np.frombuffer(bytearray(slots), dtype=np.uint8)
    ends = list(itertools.accumulate(len(record) + 16 for record in records))
    lengths = framing.fill_frames(buffer, ends)
    assert buffer.tobytes() == framing.frame_many(records) and lengths.tolist() == list(map(len, records))


@pytest.mark.parametrize("ends", [[3], [20, 19], [40]])
def test_fill_frames_refuses_slots_outside_the_buffer(ends):
    import numpy as np

    with pytest.raises(ValueError, match="do not fit"):
        framing.fill_frames(np.zeros(32, dtype=np.uint8), ends)


@pytest.mark.parametrize("ends", [[3, 2], [7], [-1]])
def test_frame_buffer_refuses_ends_outside_the_buffer(ends):
    with pytest.raises(ValueError, match="do not fit"):
        framing.frame_buffer(b"abcdef", ends)


@given(st.lists(st.binary(max_size=300), min_size=1, max_size=40), st.data(), st.booleans())
def test_run_is_intact_agrees_with_scan(records, data, verify):
    """A run checked at offsets known beforehand is intact exactly where scan reads it whole."""
    import numpy as np

    framed = bytearray(framing.frame_many(records))
    heads = np.cumsum([0] + [len(r) + 16 for r in records[:-1]], dtype=np.int64)
    if data.draw(st.booleans()):
        framed[data.draw(st.integers(0, len(framed) - 1))] ^= 1 << data.draw(st.integers(0, 7))
    try:
        starts, _, end = framing.scan(framed, verify=verify, final=True)
        whole = end == len(framed) and starts == (heads + 12).tolist()
    except tfr.TFRecordError:
        whole = False
    assert framing.run_is_intact(framed, heads, len(framed), verify) == whole
