"""Fast paths against the reference: the wire decoders (decode_example, and decode_examples'
batched lockstep parser) must give exactly what the protobuf runtime gives (tests/reference.py,
built on tfr.Example.FromString) on the same hypothesis inputs — including unpacked numeric
lists, kind-less features, repeated keys, merged messages, unknown fields and float payloads
at any alignment — and the reader must return the same records whether they fit its buffer
or are many times larger than it."""

from __future__ import annotations

import io
import itertools
import os
import struct
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests import reference
from tests.batches.test_columnar import assert_like_stacked
from tests.example.test_codec import WIRE_CASES, ld, varint
from tfrecord_lite._batches import joins as _joins
from tfrecord_lite._batches import lockstep as _lockstep
from tfrecord_lite._batches.columnar import decode_records, plan_features
from tfrecord_lite._example import wire as _wire
from tfrecord_lite._stream.scanner import CHUNK_SIZE

KIND_FIELD = {"bytes": 1, "float32": 2, "int64": 3}

# A logical feature: (kind, values) with kind None for a Feature with no kind.
logical_value = st.one_of(
    st.tuples(st.just("int64"), st.lists(st.integers(-(2**63), 2**63 - 1), max_size=12)),
    st.tuples(st.just("float32"), st.lists(st.floats(width=32), max_size=12)),
    st.tuples(st.just("bytes"), st.lists(st.binary(max_size=9), max_size=5)),
    st.tuples(st.none(), st.just([])),
)
logical_features = st.dictionaries(st.text(max_size=7), logical_value, max_size=5)


def _scalar(kind: str, v: Any) -> bytes:
    if kind == "int64":
        return varint(v)
    if kind == "float32":
        return struct.pack("<f", v)
    return ld(1, v)


@st.composite
def list_message(draw: Any, kind: str, values: list[Any]) -> bytes:
    """A BytesList / FloatList / Int64List holding `values`: packed in one or several chunks,
    unpacked, or mixed, with unknown fields sprinkled in."""
    out = []
    i = 0
    while i < len(values):
        take = draw(st.integers(1, len(values) - i))
        chunk = values[i : i + take]
        i += take
        if kind == "bytes":
            out.append(b"".join(ld(1, v) for v in chunk))
        elif draw(st.booleans()):  # packed
            out.append(ld(1, b"".join(_scalar(kind, v) for v in chunk)))
        else:  # unpacked: one tagged value each
            tag = varint(1 << 3 | (0 if kind == "int64" else 5))
            out.append(b"".join(tag + _scalar(kind, v) for v in chunk))
        if draw(st.integers(0, 7)) == 0:
            out.append(varint(9 << 3) + varint(draw(st.integers(0, 2**40))))  # an unknown varint field
    return b"".join(out)


@st.composite
def feature_message(draw: Any, kind: Any, values: list[Any]) -> bytes:
    if kind is None:
        return b""
    body = draw(list_message(kind, values))
    prefix = b""
    if draw(st.integers(0, 5)) == 0:  # an earlier list of another kind, replaced by the oneof
        other = draw(st.sampled_from([k for k in KIND_FIELD if k != kind]))
        prefix = ld(KIND_FIELD[other], draw(list_message(other, [] if other == "bytes" else [0])))
    return prefix + ld(KIND_FIELD[kind], body)


@st.composite
def example_bytes(draw: Any) -> tuple[bytes, dict[str, Any]]:
    """A serialized Example in a randomly chosen (valid, often non-canonical) wire layout."""
    features = draw(logical_features)
    entries = []
    for key, (kind, values) in features.items():
        k = key.encode("utf-8")
        if draw(st.integers(0, 6)) == 0:  # the same key earlier with another value: the last one wins
            entries.append(ld(1, ld(1, k) + ld(2, ld(3, ld(1, varint(12345))))))
        value = draw(feature_message(kind, values))
        if kind is None and draw(st.booleans()):
            body = ld(1, k)  # an entry with no value field at all
        elif draw(st.integers(0, 4)) == 0:
            body = ld(2, value) + ld(1, k)  # value before key
        else:
            body = ld(1, k) + ld(2, value)
        entries.append(ld(1, body))
    padding = draw(st.sampled_from([b"", b"x", b"xy", b"xyz"]))  # shifts every payload: floats at any alignment
    entries.insert(0, ld(1, ld(1, b"pad" + padding) + ld(2, ld(1, ld(1, padding)))))
    cut = draw(st.integers(0, len(entries)))
    if draw(st.booleans()):  # two `features` fields: the maps merge
        data = ld(1, b"".join(entries[:cut])) + ld(1, b"".join(entries[cut:]))
    else:
        data = ld(1, b"".join(entries))
    if draw(st.integers(0, 5)) == 0:
        data = varint(3 << 3 | 5) + b"\x00\x01\x02\x03" + data  # an unknown top-level field
    return data, features


def _spec_for(decoded: dict[str, Any]) -> dict[str, Any]:
    spec = {}
    for key, value in decoded.items():
        if isinstance(value, list):
            spec[key] = tfr.VarLenFeature("bytes")
        elif value is not None:
            spec[key] = tfr.VarLenFeature(value.dtype.name)
    return spec


@given(example_bytes())
def test_wire_decoder_equals_protobuf_on_any_layout(case):
    data, _ = case
    expected = reference.decode_example(data)
    assert reference.same_features(tfr.decode_example(data), expected)


@given(st.lists(example_bytes(), max_size=6), st.data())
def test_batched_decoder_equals_protobuf_on_any_layout(cases, data):
    records = [c[0] for c in cases]
    expected = [reference.decode_example(r) for r in records]
    keys = sorted({k for e in expected for k in e})
    # one spec per key, of the kind the first record that has it uses; records that
    # disagree raise, and must raise what decode_example raises
    spec: dict[str, Any] = {}
    for e in expected:
        for k, v in _spec_for(e).items():
            spec.setdefault(k, v)
    chosen = {k: spec[k] for k in keys if k in spec and data.draw(st.booleans())}
    error = None
    try:
        want = [tfr.decode_example(r, chosen) for r in records]
    except tfr.FeatureError as err:
        error = str(err)
    if error is not None:
        with pytest.raises(tfr.FeatureError) as info:
            tfr.decode_examples(records, chosen)
        assert str(info.value) == error
        return
    got = tfr.decode_examples(records, chosen)
    for key, s in chosen.items():
        for i, (w, e) in enumerate(zip(want, expected, strict=False)):
            value = got[key][i] if s.dtype == "bytes" else got[key].row(i)
            assert reference.same_value(value, w[key])
            reference_value = e.get(key)
            assert reference.same_value(value, reference_value if reference_value is not None else w[key])


def test_canonical_records_take_the_batched_path_and_the_rest_the_single_record_path():
    canonical = tfr.encode_example({"a": [1, 2], "b": [3], "c": [b"x"], "d": [0.5]})
    spec = {"a": tfr.VarLenFeature("int64"), "b": tfr.VarLenFeature("int64"), "c": tfr.VarLenFeature("bytes")}
    records = [canonical, WIRE_CASES["unpacked int64"], canonical, WIRE_CASES["features twice merges the maps"]]
    _, slow = decode_records(records, spec)
    assert slow == [1, 3]


@pytest.mark.parametrize("name", sorted(WIRE_CASES))
def test_every_hand_made_layout_decodes_the_same_in_a_batch(name):
    data = WIRE_CASES[name]
    expected = reference.decode_example(data)
    spec = _spec_for(expected)
    records = [tfr.encode_example({}), data, data]
    want = [tfr.decode_example(r, spec) for r in records]
    got = tfr.decode_examples(records, spec)
    for key, s in spec.items():
        for i in range(3):
            value = got[key][i] if s.dtype == "bytes" else got[key].row(i)
            assert reference.same_value(value, want[i][key])


# ----------------------------------------------------------------- records larger than any buffer


@pytest.fixture
def big_file(tmp_path) -> tuple[str, list[bytes]]:
    """Records of every size class around the reader's chunk size, in one file."""
    chunk = CHUNK_SIZE
    rng = np.random.default_rng(7)
    sizes = [0, 1, 100, chunk - 16, chunk, chunk + 5, 3 * chunk + 1, 10, 2 * chunk, 7]
    records = [rng.bytes(n) for n in sizes]
    path = str(tmp_path / "big.tfrecord")
    with tfr.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return path, records


def test_records_larger_than_the_buffer_from_a_path_a_file_object_and_a_pipe(big_file):
    path, records = big_file
    assert list(tfr.iter_records(path)) == records
    assert list(tfr.iter_records(path, verify=False)) == records
    with open(path, "rb") as f:
        assert list(tfr.iter_records(io.BytesIO(f.read()))) == records
    proc = subprocess.Popen(
        [sys.executable, "-c", f"import shutil, sys; shutil.copyfileobj(open({path!r}, 'rb'), sys.stdout.buffer)"],
        stdout=subprocess.PIPE,
    )
    try:
        assert list(tfr.iter_records(proc.stdout)) == records
    finally:
        proc.stdout.close()
        proc.wait()


def test_large_records_compressed(big_file, tmp_path):
    _path, records = big_file
    for compression in ("gzip", "zlib"):
        target = str(tmp_path / f"big.{compression}")
        with tfr.TFRecordWriter(target, compression=compression) as w:
            for r in records:
                w.write(r)
        assert list(tfr.iter_records(target)) == records


def test_a_corrupt_large_record_is_caught_wherever_it_lies(big_file, tmp_path):
    path, records = big_file
    with open(path, "rb") as f:
        blob = bytearray(f.read())
    offsets = [0]
    for r in records:
        offsets.append(offsets[-1] + len(r) + 16)
    victim = 6  # 3 chunks + 1 byte
    blob[offsets[victim] + 12 + len(records[victim]) // 2] ^= 0x10
    bad = str(tmp_path / "bad.tfrecord")
    with open(bad, "wb") as f:
        f.write(blob)
    seen = []
    with pytest.raises(tfr.CorruptRecordError) as info:
        seen.extend(tfr.iter_records(bad))  # keeps the records before the error
    assert info.value.offset == offsets[victim] and info.value.path == bad
    assert seen == records[:victim]
    assert list(tfr.iter_records(bad, verify=False))[victim] != records[victim]
    assert os.path.getsize(bad) == offsets[-1]


# ----------------------------------------------------------------- batches of records sharing a layout


@st.composite
def same_layout_batches(draw: Any) -> list[bytes]:
    """Records with one skeleton and random payload bytes (numbers that are not one varint,
    packed varint runs broken at the end, overlong varints), a few with a damaged skeleton."""
    template = tfr.encode_example(
        {"i": np.array([300, 5], np.int64), "f": np.zeros(3, np.float32), "s": [b"abcd", b"xy"], "one": 7, "z": None}
    )
    layout = _wire.layout_of(template)
    assert layout is not None
    regions = [chunk for _, chunks in layout.parsed.values() for chunk in chunks]
    records = []
    for _ in range(draw(st.integers(4, 24))):
        rec = bytearray(template)
        for s, e in regions:
            if draw(st.integers(0, 2)) == 0:
                rec[s:e] = draw(st.binary(min_size=e - s, max_size=e - s))
        if draw(st.integers(0, 9)) == 0:
            i = draw(st.integers(0, len(rec) - 1))
            rec[i] = draw(st.integers(0, 255))
        records.append(bytes(rec))
    return records


@given(same_layout_batches(), st.data())
def test_records_sharing_a_layout_decode_like_single_records(records, data):
    spec_options = {
        "i": [
            tfr.VarLenFeature("int64"),
            tfr.FixedLenFeature([2], "int64"),
            tfr.FixedLenSequenceFeature([], "int64", allow_missing=True),
        ],
        "f": [tfr.FixedLenFeature([3], "float32"), tfr.VarLenFeature("float32")],
        "s": [tfr.VarLenFeature("bytes"), tfr.FixedLenFeature([2], "bytes")],
        "one": [tfr.FixedLenFeature([], "int64"), tfr.VarLenFeature("int64"), tfr.FixedLenFeature([], "float32")],
        "z": [tfr.FixedLenFeature([], "int64", default_value=-1), tfr.VarLenFeature("bytes")],
        "absent": [tfr.FixedLenFeature([], "bytes", default_value=b"-")],
    }
    spec = {k: data.draw(st.sampled_from(v)) for k, v in spec_options.items() if data.draw(st.booleans())}
    assert_like_stacked(records, spec)


def test_a_batch_of_one_layout_takes_the_layout_path():
    records = [tfr.encode_example({"a": i, "b": [float(i)] * 3, "c": b"%03d" % i}) for i in range(100)]
    spec = {
        "a": tfr.FixedLenFeature([], "int64"),
        "b": tfr.FixedLenFeature([3], "float32"),
        "c": tfr.FixedLenFeature([], "bytes"),
    }
    view = memoryview(b"".join(records) + bytes(16))
    ends = np.cumsum([len(r) for r in records])
    starts = ends - [len(r) for r in records]
    buf = np.frombuffer(view, np.uint8)
    matches = _lockstep.match_layouts(buf, view, starts, ends)
    handled, _, _ = _lockstep.by_layout(buf, view.tobytes, 100, matches, plan_features(spec), np.zeros(100, bool))
    assert handled.all()
    got = assert_like_stacked(records, spec, fast=True)
    assert got["a"].tolist() == list(range(100)) and got["c"][42] == b"042"


def test_a_malformed_first_record_of_a_length_group_is_named_by_its_index():
    """The layout path parses one record per length; a malformed one falls to the general path,
    whose error names the record (found by hypothesis: a Feature's length varint cut short)."""
    entries = tfr.encode_example({"one": [7], "s": [b"abcd", b"xy"]})[2:]  # Features' map entries
    entries += ld(1, ld(1, b"z") + b"\x12\x00")  # and "z" -> an empty Feature, last
    good_record = ld(1, entries)
    bad_record = good_record[:-1] + b"\x80"  # the same length; the empty Feature's length cut short
    records = [bad_record, *[good_record] * 4]
    with pytest.raises(tfr.DecodeError) as info:
        tfr.decode_examples(records, {})
    assert any("record 0 " in note for note in info.value.__notes__)
    assert_like_stacked(records, {"one": tfr.FixedLenFeature([], "int64")})


def test_large_records_decode_alike_and_later_batches_leave_earlier_results_alone():
    """Batches of large records are joined into a buffer each thread reuses (bytes objects
    of 32 KiB and more leave their long values out): every kind of record object decodes
    as the single-record path does, and nothing decoded refers to the buffer that the next batch
    overwrites."""
    rng = np.random.default_rng(14)

    def batch(seed: int) -> list[bytes]:
        image = [rng.bytes(int(n)) for n in rng.integers(5000, 9000, 40)]
        return [
            tfr.encode_example({"image": im, "label": seed * 100 + i, "x": [float(i)] * 3})
            for i, im in enumerate(image)
        ]

    spec = {
        "image": tfr.FixedLenFeature([], "bytes"),
        "label": tfr.FixedLenFeature([], "int64"),
        "x": tfr.VarLenFeature("float32"),
    }
    first, second = batch(1), batch(2)
    first[3] = first[3] + first[3]  # a merged message: the single-record path
    kept = tfr.decode_examples(first, spec)
    for records in (second, [memoryview(r) for r in second], [bytearray(r) for r in second]):
        assert_like_stacked(records, spec)
    want = [tfr.decode_example(r, spec) for r in first]
    assert kept["image"].tolist() == [w["image"] for w in want]
    assert kept["label"].tolist() == [w["label"] for w in want]
    assert [kept["x"].values[a:b].tolist() for a, b in itertools.pairwise(kept["x"].row_splits)] == [
        w["x"].tolist() for w in want
    ]
    assert _joins.SCRATCH.buffer  # the batches did go through the reused buffer
