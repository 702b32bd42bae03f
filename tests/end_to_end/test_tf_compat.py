"""TensorFlow as the oracle: files, protos and spec decoding must match what TF writes, reads and parses.

Skipped as a whole when TensorFlow is not installed (CI runs it in an environment with
tensorflow-cpu). TF runs eagerly; an example of the hypothesis tests takes a few milliseconds,
so they run with the suite's profile (tests/conftest.py).
"""

from __future__ import annotations

import math
import os
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

tf = pytest.importorskip("tensorflow")

import tfrecord_lite as tfr
from tests import reference
from tests._reading import read_until_error, tf_read, tf_read_until_error
from tests._records import record_starts, write_records

pytestmark = pytest.mark.tf

T = tf.train
COMPRESSIONS = ["", "GZIP", "ZLIB"]
# TensorFlow's errors for bad data (parse ops) and bad specs (Python-side checks).
TF_ERRORS = (tf.errors.InvalidArgumentError, ValueError, TypeError)

RNG = np.random.default_rng(2)
PAYLOADS = [
    b"hello",
    b"",
    b"x" * 1000,
    bytes(range(256)),
    RNG.integers(0, 256, 1_500_000, dtype=np.uint8).tobytes(),  # longer than the writer buffer / reader chunk
    b"\x00" * 12,
]


# --------------------------------------------------------------------------- helpers: TF file I/O


def tf_write(path: Path, records: list[bytes], compression: str = "") -> None:
    with tf.io.TFRecordWriter(str(path), tf.io.TFRecordOptions(compression_type=compression)) as writer:
        for record in records:
            writer.write(record)


# --------------------------------------------------------------------------- files: our writer -> TF


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_tf_reads_what_we_write(tmp_path: Path, compression: str) -> None:
    path = tmp_path / "ours.tfrecord"
    write_records(path, PAYLOADS, compression)
    assert tf_read(path, compression) == PAYLOADS


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_tf_reads_our_compressed_file_flushed_between_records(tmp_path: Path, compression: str) -> None:
    path = tmp_path / "flushed.tfrecord"
    with tfr.TFRecordWriter(path, compression=compression.lower()) as writer:
        for record in PAYLOADS[:4]:
            writer.write(record)
            writer.flush()
    assert tf_read(path, compression) == PAYLOADS[:4]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_files_are_byte_identical_to_tf_writer_output(tmp_path: Path, compression: str) -> None:
    # Plain files must match; compressed ones match too because the writer uses TF's
    # deflate settings (level 6, memLevel 9, gzip header without name and mtime 0).
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_records(ours, PAYLOADS, compression)
    tf_write(theirs, PAYLOADS, compression)
    assert ours.read_bytes() == theirs.read_bytes()


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
@pytest.mark.parametrize("options", [{"level": 1}, {"fast": True}, {"fast": True, "level": 3}])
def test_tf_reads_files_deflated_at_other_levels_or_by_the_fast_library(
    tmp_path: Path, compression: str, options: dict[str, Any]
) -> None:
    path = tmp_path / "fast.tfrecord"
    with tfr.TFRecordWriter(path, compression=compression.lower(), **options) as writer:
        for record in PAYLOADS:
            writer.write(record)
    assert tf_read(path, compression) == PAYLOADS


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_empty_file_is_byte_identical_and_read_by_both(tmp_path: Path, compression: str) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_records(ours, [], compression)
    tf_write(theirs, [], compression)
    assert ours.read_bytes() == theirs.read_bytes()
    assert tf_read(ours, compression) == []
    assert list(tfr.iter_records(theirs)) == []


@given(st.lists(st.binary(max_size=300), max_size=12))
def test_plain_files_byte_identical_for_random_payloads(tmp_path_factory: Any, records: list[bytes]) -> None:
    directory = tmp_path_factory.mktemp("rand")
    write_records(directory / "ours", records)
    tf_write(directory / "theirs", records)
    assert (directory / "ours").read_bytes() == (directory / "theirs").read_bytes()


# --------------------------------------------------------------------------- files: TF writer -> us


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_we_read_what_tf_writes(tmp_path: Path, compression: str) -> None:
    path = tmp_path / "theirs.tfrecord"
    tf_write(path, PAYLOADS, compression)
    assert list(tfr.iter_records(path)) == PAYLOADS  # recognised from the content
    assert list(tfr.iter_records(path, compression=compression)) == PAYLOADS
    with open(path, "rb") as f:
        assert list(tfr.iter_records(f, compression=compression.lower() or None)) == PAYLOADS


def test_multi_member_gzip_read_to_the_end_like_tf(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    tf_write(plain, PAYLOADS[:4])
    data = plain.read_bytes()
    cut = record_starts(data)[2] + 5  # a member boundary in the middle of a record
    members = tmp_path / "members.gz"
    members.write_bytes(zlib.compress(data[:cut], wbits=31) + zlib.compress(data[cut:], wbits=31))
    assert tf_read(members, "GZIP") == PAYLOADS[:4]
    assert list(tfr.iter_records(members)) == PAYLOADS[:4]


# --------------------------------------------------------------------------- files: damage


def test_truncated_inside_header_tf_drops_the_tail_we_raise(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    tf_write(plain, PAYLOADS[:4])
    data = plain.read_bytes()
    starts = record_starts(data)
    for cut_into_header in (1, 8, 11):
        path = tmp_path / f"cut{cut_into_header}"
        path.write_bytes(data[: starts[2] + cut_into_header])
        assert tf_read(path) == PAYLOADS[:2]  # TensorFlow: a clean end of file
        got, err = read_until_error(path)
        assert got == PAYLOADS[:2]
        assert isinstance(err, tfr.TruncatedRecordError)
        assert err.offset == starts[2] and str(starts[2]) in str(err) and str(path) in str(err)


def test_truncated_inside_payload_both_raise_at_the_record_start(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    tf_write(plain, PAYLOADS[:4])
    data = plain.read_bytes()
    start = record_starts(data)[3]
    for cut in (start + 12, start + 20, len(data) - 1):
        path = tmp_path / f"cut{cut}"
        path.write_bytes(data[:cut])
        with pytest.raises(tf.errors.DataLossError, match=f"truncated record at {start}"):
            tf_read(path)
        got, err = read_until_error(path)
        assert got == PAYLOADS[:3]
        assert isinstance(err, tfr.TruncatedRecordError) and err.offset == start


def test_every_bit_flip_raises_in_both(tmp_path: Path) -> None:
    # TF reports a bad length at the record start and a bad payload at the payload start
    # (record start + 12); we report the record start for both.
    records = [b"ab", b"", b"cdefg"]
    plain = tmp_path / "plain"
    tf_write(plain, records)
    data = plain.read_bytes()
    starts = record_starts(data)
    path = tmp_path / "flipped"
    for pos in range(len(data)):
        bit = 1 << (pos % 8)
        damaged = bytearray(data)
        damaged[pos] ^= bit
        path.write_bytes(bytes(damaged))
        start = max(s for s in starts if s <= pos)
        tf_offset = start if pos - start < 12 else start + 12
        with pytest.raises(tf.errors.DataLossError, match=f"corrupted record at {tf_offset}"):
            tf_read(path)
        _, err = read_until_error(path)
        assert isinstance(err, (tfr.CorruptRecordError, tfr.TruncatedRecordError)), pos
        assert err.offset == start, pos


def test_records_before_the_damage_are_yielded_like_tf(tmp_path: Path) -> None:
    records = [b"ab", b"", b"cdefg"]
    plain = tmp_path / "plain"
    tf_write(plain, records)
    data = plain.read_bytes()
    for k, start in enumerate(record_starts(data)):
        for pos in (start + 1, start + 13):  # in the length, in the payload / its CRC
            damaged = bytearray(data)
            damaged[pos] ^= 0x10
            path = tmp_path / f"flip{pos}"
            path.write_bytes(bytes(damaged))
            assert tf_read_until_error(path, limit=k)[0] == records[:k]
            got, err = read_until_error(path)
            assert err is not None and got == records[:k], pos


@pytest.mark.parametrize("damage", ["trailing zeros", "cut short"])
def test_records_before_compressed_damage_are_yielded_like_tf(tmp_path: Path, damage: str) -> None:
    good = tmp_path / "good.gz"
    tf_write(good, PAYLOADS[:4], "GZIP")
    data = good.read_bytes()
    path = tmp_path / "damaged.gz"
    path.write_bytes(data + bytes(16) if damage == "trailing zeros" else data[:200])
    expected = PAYLOADS[:4] if damage == "trailing zeros" else PAYLOADS[:3]
    theirs, tf_err = tf_read_until_error(path, "GZIP")
    assert isinstance(tf_err, tf.errors.DataLossError) and theirs == expected
    got, err = read_until_error(path)
    assert err is not None and got == expected
    if damage == "cut short":  # the offset (in the uncompressed stream) of the incomplete record
        assert isinstance(err, tfr.TruncatedRecordError)
        assert err.offset == record_starts(zlib.decompress(data, wbits=31))[3]


def test_a_replaced_value_is_left_unread_with_a_spec_as_tf_leaves_it() -> None:
    from tests.example.test_codec import REPLACED_KEY

    with pytest.raises(Exception, match=r"(?i)pars|decod"):
        T.Example.FromString(REPLACED_KEY)  # protobuf parses every field: so does decode_example without a spec
    with pytest.raises(tfr.DecodeError):
        tfr.decode_example(REPLACED_KEY)
    theirs = tf.io.parse_single_example(REPLACED_KEY, {"c": tf.io.VarLenFeature(tf.string)})["c"].values.numpy()
    assert list(theirs) == tfr.decode_example(REPLACED_KEY, {"c": tfr.VarLenFeature("bytes")})["c"] == [b"x"]


def test_a_gzip_header_with_reserved_flags_is_refused_by_both(tmp_path: Path) -> None:
    good = tmp_path / "good.gz"
    tf_write(good, PAYLOADS[:4], "GZIP")
    data = bytearray(good.read_bytes())
    data[3] |= 0x20  # a reserved FLG bit (RFC 1952)
    path = tmp_path / "flags.gz"
    path.write_bytes(bytes(data))
    theirs, tf_err = tf_read_until_error(path, "GZIP")
    assert isinstance(tf_err, tf.errors.DataLossError) and theirs == []
    got, err = read_until_error(path)
    assert isinstance(err, tfr.CorruptRecordError) and "unknown header flags set" in str(err) and got == []


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_corrupt_compressed_data_raises_in_both(tmp_path: Path, compression: str) -> None:
    good = tmp_path / "good"
    tf_write(good, PAYLOADS[:4], compression)
    data = good.read_bytes()
    bad = tmp_path / "bad"
    bad.write_bytes(data[:-4] + bytes(b ^ 0xFF for b in data[-4:]))  # the CRC32 / adler32 trailer
    with pytest.raises(tf.errors.DataLossError, match="incorrect"):
        tf_read(bad, compression)
    with pytest.raises(tfr.TFRecordError, match=re.escape(str(bad))):
        list(tfr.iter_records(bad))


STRICTER = {
    "gzip without its trailer": ("GZIP", lambda z: z[:-8]),
    "gzip plus a stray byte": ("GZIP", lambda z: z + b"\x1f"),
    "zlib without its adler32": ("ZLIB", lambda z: z[:-4]),
    "zlib plus trailing bytes": ("ZLIB", lambda z: z + b"junk"),
}


@pytest.mark.parametrize("name", list(STRICTER))
def test_compressed_streams_tf_accepts_but_we_reject(tmp_path: Path, name: str) -> None:
    compression, damage = STRICTER[name]
    good = tmp_path / "good"
    tf_write(good, PAYLOADS[:4], compression)
    path = tmp_path / "damaged"
    path.write_bytes(damage(good.read_bytes()))
    assert tf_read(path, compression) == PAYLOADS[:4]  # TensorFlow: silently fine
    got, err = read_until_error(path)
    assert got == PAYLOADS[:4] and isinstance(err, tfr.TFRecordError) and str(path) in str(err)


def test_concatenated_zlib_streams_tf_reads_only_the_first(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    tf_write(plain, PAYLOADS[:4])
    data = plain.read_bytes()
    cut = record_starts(data)[2]
    path = tmp_path / "two.zlib"
    path.write_bytes(zlib.compress(data[:cut]) + zlib.compress(data[cut:]))
    assert tf_read(path, "ZLIB") == PAYLOADS[:2]
    assert list(tfr.iter_records(path)) == PAYLOADS[:4]


# --------------------------------------------------------------------------- values: TF messages from plain values


def tf_feature(value: Any) -> Any:
    """The tf.train.Feature that TensorFlow users build for `value` (the encoding oracle)."""
    if value is None:
        return T.Feature()
    if hasattr(value, "SerializeToString"):
        return T.Feature.FromString(value.SerializeToString())
    if isinstance(value, np.ndarray):
        flat = value.ravel()
        if flat.dtype.kind in "iub":
            return T.Feature(int64_list=T.Int64List(value=[int(v) for v in flat.tolist()]))
        if flat.dtype.kind == "f":
            return T.Feature(float_list=T.FloatList(value=flat.astype(np.float32).tolist()))
        return T.Feature(bytes_list=T.BytesList(value=[bytes(v) for v in flat.tolist()]))
    values = value if isinstance(value, (list, tuple)) else [value]
    if all(isinstance(v, (bytes, str)) for v in values):
        return T.Feature(bytes_list=T.BytesList(value=[v.encode() if isinstance(v, str) else v for v in values]))
    if all(isinstance(v, (bool, int)) for v in values):
        return T.Feature(int64_list=T.Int64List(value=[int(v) for v in values]))
    return T.Feature(float_list=T.FloatList(value=[float(v) for v in values]))


def tf_example(features: dict[str, Any]) -> Any:
    return T.Example(features=T.Features(feature={k: tf_feature(v) for k, v in features.items()}))


def tf_sequence_example(context: dict[str, Any], lists: dict[str, list[Any]]) -> Any:
    return T.SequenceExample(
        context=T.Features(feature={k: tf_feature(v) for k, v in context.items()}),
        feature_lists=T.FeatureLists(
            feature_list={k: T.FeatureList(feature=[tf_feature(v) for v in steps]) for k, steps in lists.items()}
        ),
    )


def canonical(message: Any) -> bytes:
    """Deterministic serialization: map order fixed, float bits kept (NaN compares by bits)."""
    return message.SerializeToString(deterministic=True)


def tf_parse_all(data: bytes, message: Any) -> dict[str, Any]:
    """TF's parse op on every key of `message`, each as a VarLenFeature of its own kind
    (a kind-less Feature -> None, as decode_example without a spec returns)."""
    dtypes = {"int64_list": tf.int64, "float_list": tf.float32, "bytes_list": tf.string}
    kinds = {k: f.WhichOneof("kind") for k, f in message.features.feature.items()}
    spec = {k: tf.io.VarLenFeature(dtypes[kind]) for k, kind in kinds.items() if kind}
    parsed = tf.io.parse_single_example(data, spec) if spec else {}
    out: dict[str, Any] = {}
    for key, kind in kinds.items():
        if kind is None:
            out[key] = None
        else:
            values = parsed[key].values.numpy()
            out[key] = list(values) if kind == "bytes_list" else values
    return out


# hypothesis values: (value given to encode_example), covering every kind and the edges
I64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([0, -1, 2**63 - 1, -(2**63), 2**31, 127, 128]))
F32 = st.one_of(
    st.floats(width=32),
    st.sampled_from(
        [
            math.nan,
            -math.nan,
            math.inf,
            -math.inf,
            -0.0,
            0.0,
            3.4028234663852886e38,
            -3.4028234663852886e38,
            1.401298464324817e-45,
            1.1754943508222875e-38,
        ]
    ),
)
TEXT = st.text(max_size=8)
values = st.one_of(
    st.lists(I64, min_size=1, max_size=20),
    st.lists(F32, min_size=1, max_size=20),
    st.lists(st.binary(max_size=12), min_size=1, max_size=5),
    st.lists(TEXT, min_size=1, max_size=4),
    I64,
    F32,
    st.booleans(),
    st.binary(max_size=20),
    TEXT,
    st.lists(I64, max_size=20).map(lambda v: np.array(v, np.int64)),
    st.lists(F32, max_size=20).map(lambda v: np.array(v, np.float32)),
    st.lists(st.booleans(), min_size=1, max_size=6).map(lambda v: np.array(v, np.bool_).reshape(-1, 1)),
    st.lists(F32, min_size=4, max_size=4).map(lambda v: np.array(v, np.float32).reshape(2, 2)),
    st.lists(st.binary(max_size=6), min_size=1, max_size=4).map(lambda v: np.array(v, dtype=object)),
    st.sampled_from([None, tfr.Feature(bytes_list=tfr.BytesList()), T.Feature(float_list=T.FloatList())]),
)
KEYS = st.text(max_size=10)  # unicode and the empty key included
example_values = st.dictionaries(KEYS, values, max_size=6)
sequence_values = st.tuples(
    st.dictionaries(KEYS, values, max_size=3), st.dictionaries(KEYS, st.lists(values, max_size=4), max_size=3)
)


# --------------------------------------------------------------------------- values: both directions


@given(example_values)
def test_encode_example_parses_in_tf_to_the_message_tf_builds(features: dict[str, Any]) -> None:
    data = tfr.encode_example(features)
    expected = tf_example(features)
    assert canonical(T.Example.FromString(data)) == canonical(expected)
    assert reference.same_features(tf_parse_all(data, expected), tf_parse_all(expected.SerializeToString(), expected))


@given(example_values)
def test_tf_serialized_examples_decode_to_tf_values(features: dict[str, Any]) -> None:
    message = tf_example(features)
    data = message.SerializeToString()
    assert reference.same_features(tfr.decode_example(data), tf_parse_all(data, message))


@given(sequence_values)
def test_sequence_examples_round_trip_both_ways(value: tuple) -> None:
    context, lists = value
    expected = tf_sequence_example(context, lists)
    ours = tfr.encode_sequence_example(context, lists)
    assert canonical(T.SequenceExample.FromString(ours)) == canonical(expected)
    ctx, seq = tfr.decode_sequence_example(expected.SerializeToString())
    assert reference.same_features(ctx, {k: reference.feature_values(f) for k, f in expected.context.feature.items()})
    assert seq.keys() == set(expected.feature_lists.feature_list)
    for key, feature_list in expected.feature_lists.feature_list.items():
        want = [reference.feature_values(f) for f in feature_list.feature]
        assert len(seq[key]) == len(want) and all(map(reference.same_value, seq[key], want))


def test_tf_feature_messages_are_accepted_as_values() -> None:
    feature = T.Feature(int64_list=T.Int64List(value=[3, -4]))
    data = tfr.encode_example({"tf": feature, "empty": T.Feature(bytes_list=T.BytesList())})
    assert reference.same_features(tfr.decode_example(data), {"tf": np.array([3, -4], np.int64), "empty": []})


FLOAT_BITS = [0x7FC00001, 0x7F800001, 0xFFC12345, 0x80000000, 0x7F7FFFFF, 0x00000001, 0xFF800000, 0x7F800000]


def test_float_bits_survive_both_ways_including_signalling_nan() -> None:
    floats = np.array(FLOAT_BITS, np.uint32).view(np.float32)
    ours = tfr.encode_example({"f": floats})
    parsed = tf.io.parse_single_example(ours, {"f": tf.io.FixedLenFeature([len(FLOAT_BITS)], tf.float32)})["f"]
    assert parsed.numpy().view(np.uint32).tolist() == FLOAT_BITS
    assert T.Example.FromString(ours).SerializeToString() == ours  # TF's runtime keeps the bits too
    decoded = tfr.decode_example(ours)["f"]
    assert decoded.dtype == np.float32 and decoded.view(np.uint32).tolist() == FLOAT_BITS


# --------------------------------------------------------------------------- crafted wire bytes


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _ld(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _entry(key: str, feature: bytes, value_first: bool = False) -> bytes:
    k, v = _ld(1, key.encode()), _ld(2, feature)
    return _ld(1, v + k if value_first else k + v)


# Features spelled out as bytes: packed and unpacked int64 / float lists, bytes lists.
def INT(*v: int) -> bytes:
    return _ld(3, _ld(1, b"".join(_varint(x) for x in v)))


def INT_UNPACKED(*v: int) -> bytes:
    return _ld(3, b"".join(_varint(8) + _varint(x) for x in v))


def FLOAT(*v: float) -> bytes:
    return _ld(2, _ld(1, struct.pack(f"<{len(v)}f", *v)))


def FLOAT_UNPACKED(*v: float) -> bytes:
    return _ld(2, b"".join(b"\x0d" + struct.pack("<f", x) for x in v))


def BYTES(*v: bytes) -> bytes:
    return _ld(1, b"".join(_ld(1, x) for x in v))


CRAFTED = {
    "repeated key, same kind": _ld(1, _entry("a", INT(1)) + _entry("a", INT(2))),
    "repeated key, other kind": _ld(1, _entry("a", INT(1)) + _entry("a", FLOAT(2.5))),
    "repeated key, last kind-less": _ld(1, _entry("a", INT(1, 2)) + _entry("a", b"")),
    "value before key": _ld(1, _entry("a", INT(5), value_first=True)),
    "unpacked int64": _ld(1, _entry("a", INT_UNPACKED(3, -4, 2**63 - 1))),
    "unpacked float": _ld(1, _entry("a", FLOAT_UNPACKED(1.5, -0.0))),
    "two kinds in one Feature": _ld(1, _entry("a", FLOAT(1.5) + INT(3))),
    "same list twice in one Feature": _ld(1, _entry("a", FLOAT(1.5) + FLOAT(2.5))),
    "bytes list twice": _ld(1, _entry("a", BYTES(b"x") + BYTES(b"y", b""))),
    "Features field twice": _ld(1, _entry("a", INT(1))) + _ld(1, _entry("b", INT(2))),
    "unknown field in Feature": _ld(1, _entry("a", INT(7) + _ld(9, b"zz"))),
}


@pytest.mark.parametrize("name", list(CRAFTED))
def test_crafted_wire_bytes_decode_as_tf_protobuf_runtime_reads_them(name: str) -> None:
    data = CRAFTED[name]
    message = T.Example.FromString(data)
    expected = {k: reference.feature_values(f) for k, f in message.features.feature.items()}
    assert reference.same_features(tfr.decode_example(data), expected)


@pytest.mark.parametrize(
    "name",
    [
        "repeated key, same kind",
        "repeated key, other kind",
        "value before key",
        "unpacked int64",
        "unpacked float",
        "Features field twice",
        "unknown field in Feature",
    ],
)
def test_crafted_wire_bytes_decode_as_tf_parse_op_reads_them(name: str) -> None:
    # Only where TF's parse op and TF's protobuf runtime agree: for a kind-less later
    # duplicate, a second kind or a repeated list field in one Feature they differ
    # (the op keeps the first); we follow the protobuf runtime there.
    data = CRAFTED[name]
    assert reference.same_features(tfr.decode_example(data), tf_parse_all(data, T.Example.FromString(data)))


# --------------------------------------------------------------------------- decoding with a spec


class TFSpec:
    """Spec constructors of one library, so a case can build the same spec for TF and for us."""

    def __init__(self, module: Any, int64: Any, float32: Any, string: Any) -> None:
        self.FixedLen, self.VarLen, self.FixedLenSequence = (
            module.FixedLenFeature,
            module.VarLenFeature,
            module.FixedLenSequenceFeature,
        )
        self.int64, self.float32, self.string = int64, float32, string


TF = TFSpec(tf.io, tf.int64, tf.float32, tf.string)
OURS = TFSpec(tfr, "int64", np.float32, bytes)


def tf_output(value: Any) -> Any:
    """A parse op result in decode_example's form (VarLen -> 1-D values, bytes -> list)."""
    if isinstance(value, tf.SparseTensor):
        values = value.values.numpy()
        return list(values) if value.dtype == tf.string else values
    return value.numpy()


def tf_sequence_output(value: Any) -> Any:
    """Sequence VarLen: a [steps, max_len] SparseTensor -> one 1-D value per step."""
    if not isinstance(value, tf.SparseTensor):
        return value.numpy()
    rows = value.indices.numpy()[:, 0]
    values = value.values.numpy()
    steps = [values[rows == i] for i in range(int(value.dense_shape.numpy()[0]))]
    return [list(s) for s in steps] if value.dtype == tf.string else steps


def same_output(ours: Any, theirs: Any) -> bool:
    if isinstance(theirs, np.ndarray) and theirs.dtype == object:
        return (
            isinstance(ours, np.ndarray)
            and ours.dtype == object
            and ours.shape == theirs.shape
            and (ours.ravel().tolist() == theirs.ravel().tolist())
        )
    if isinstance(theirs, bytes):
        return isinstance(ours, bytes) and ours == theirs
    if isinstance(theirs, np.generic):  # shape [] -> numpy scalar
        return isinstance(ours, np.generic) and reference.same_value(ours, theirs)
    return reference.same_value(ours, theirs)


def outcome(call: Callable[[], Any], errors: tuple) -> Any:
    try:
        return call()
    except errors as err:
        return err


def check_spec_case(parse_tf: Callable[[TFSpec], Any], parse_ours: Callable[[TFSpec], Any], convert: Callable) -> None:
    theirs = outcome(lambda: parse_tf(TF), TF_ERRORS)
    ours = outcome(lambda: parse_ours(OURS), (ValueError, TypeError))
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"TF raised {type(theirs).__name__}: {theirs}; we returned {ours!r}"
        return
    assert not isinstance(ours, Exception), f"we raised {ours!r}; TF returned {theirs!r}"
    assert ours.keys() == theirs.keys()
    for key in theirs:
        want = convert(theirs[key])
        got = ours[key]
        if isinstance(want, list) and want and isinstance(want[0], (np.ndarray, list)):
            assert len(got) == len(want) and all(map(same_output, got, want)), key
        else:
            assert same_output(got, want), f"{key}: ours {got!r}, TF {want!r}"


def E(**f: Any) -> bytes:
    """A serialized Example built by TensorFlow from feature values."""
    return tf_example(f).SerializeToString()  # type: ignore[no-any-return]


KINDLESS = tfr.Feature()
SIX = np.arange(1, 7, dtype=np.int64)

EXAMPLE_CASES: dict[str, tuple] = {
    "fixed scalar": (E(a=5), lambda m: {"a": m.FixedLen([], m.int64)}),
    "fixed 2x3 int": (E(a=SIX), lambda m: {"a": m.FixedLen([2, 3], m.int64)}),
    "fixed 3x2 float": (E(a=SIX.astype(np.float32)), lambda m: {"a": m.FixedLen([3, 2], m.float32)}),
    "fixed bytes scalar": (E(a=b"xy"), lambda m: {"a": m.FixedLen([], m.string)}),
    "fixed bytes [2]": (E(a=[b"a", b""]), lambda m: {"a": m.FixedLen([2], m.string)}),
    "fixed [0] empty list": (E(a=np.array([], np.int64)), lambda m: {"a": m.FixedLen([0], m.int64)}),
    "missing, default": (E(), lambda m: {"a": m.FixedLen([], m.int64, default_value=7)}),
    "missing, no default": (E(), lambda m: {"a": m.FixedLen([], m.int64)}),
    "missing, nested default": (E(), lambda m: {"a": m.FixedLen([2, 2], m.int64, default_value=[[1, 2], [3, 4]])}),
    "missing, flat default for [2,2]": (
        E(),
        lambda m: {"a": m.FixedLen([2, 2], m.float32, default_value=[1, 2, 3, 4])},
    ),
    "missing, [5] default for []": (E(), lambda m: {"a": m.FixedLen([], m.int64, default_value=[5])}),
    "missing, bytes default": (E(), lambda m: {"a": m.FixedLen([], m.string, default_value=b"dflt")}),
    "missing, str default": (E(), lambda m: {"a": m.FixedLen([], m.string, default_value="dé")}),
    "missing, bytes [2] default": (E(), lambda m: {"a": m.FixedLen([2], m.string, default_value=[b"p", b"q"])}),
    "missing, int default for float": (E(), lambda m: {"a": m.FixedLen([], m.float32, default_value=1)}),
    "scalar default for [3] (no broadcast)": (E(), lambda m: {"a": m.FixedLen([3], m.int64, default_value=0)}),
    "default of 3 values for [2,2]": (E(), lambda m: {"a": m.FixedLen([2, 2], m.int64, default_value=[1, 2, 3])}),
    "float default for int64": (E(), lambda m: {"a": m.FixedLen([], m.int64, default_value=1.5)}),
    "default outside int64": (E(), lambda m: {"a": m.FixedLen([], m.int64, default_value=2**63)}),
    "kind-less, default": (E(a=KINDLESS), lambda m: {"a": m.FixedLen([2], m.float32, default_value=[1.0, 2.0])}),
    "kind-less, no default": (E(a=KINDLESS), lambda m: {"a": m.FixedLen([], m.int64)}),
    "kind-less, [0] no default": (E(a=KINDLESS), lambda m: {"a": m.FixedLen([0], m.int64)}),
    # TF encodes "no default" as an empty default tensor, so an empty default for shape [0] is no default
    "missing, [0] with empty default": (E(), lambda m: {"a": m.FixedLen([0], m.float32, default_value=[])}),
    "empty list, [0] with empty int default": (
        E(a=np.array([], np.int64)),
        lambda m: {"a": m.FixedLen([0], m.int64, default_value=[])},
    ),
    "empty list, [] with default": (
        E(a=np.array([], np.int64)),
        lambda m: {"a": m.FixedLen([], m.int64, default_value=5)},
    ),
    "present, default ignored": (E(a=[4, 5]), lambda m: {"a": m.FixedLen([2], m.int64, default_value=[0, 0])}),
    "count too small": (E(a=SIX), lambda m: {"a": m.FixedLen([4], m.int64)}),
    "count too large": (E(a=[1.0]), lambda m: {"a": m.FixedLen([2], m.float32)}),
    "count mismatch with default": (E(a=SIX), lambda m: {"a": m.FixedLen([], m.int64, default_value=0)}),
    "kind int found float wanted": (E(a=SIX), lambda m: {"a": m.FixedLen([6], m.float32)}),
    "kind bytes found int wanted": (E(a=b"x"), lambda m: {"a": m.FixedLen([], m.int64)}),
    "kind mismatch with default": (E(a=[1, 2]), lambda m: {"a": m.FixedLen([2], m.float32, default_value=[0, 0])}),
    "kind mismatch, empty list": (E(a=np.array([], np.int64)), lambda m: {"a": m.FixedLen([0], m.float32)}),
    "varlen int": (E(a=SIX), lambda m: {"a": m.VarLen(m.int64)}),
    "varlen bytes": (E(a=[b"a", b""]), lambda m: {"a": m.VarLen(m.string)}),
    "varlen missing": (E(), lambda m: {"a": m.VarLen(m.float32)}),
    "varlen kind-less": (E(a=KINDLESS), lambda m: {"a": m.VarLen(m.string)}),
    "varlen empty list": (E(a=np.array([], np.float32)), lambda m: {"a": m.VarLen(m.float32)}),
    "varlen kind mismatch": (E(a=SIX), lambda m: {"a": m.VarLen(m.float32)}),
    "varlen kind mismatch, empty": (E(a=np.array([], np.int64)), lambda m: {"a": m.VarLen(m.float32)}),
    "seq feature without allow_missing": (E(a=SIX), lambda m: {"a": m.FixedLenSequence([2], m.int64)}),
    "seq feature missing": (E(), lambda m: {"a": m.FixedLenSequence([2], m.int64, allow_missing=True)}),
    "seq feature missing, scalar steps": (E(), lambda m: {"a": m.FixedLenSequence([], m.float32, allow_missing=True)}),
    "seq feature missing, default ignored": (
        E(),
        lambda m: {"a": m.FixedLenSequence([2], m.int64, allow_missing=True, default_value=9)},
    ),
    "seq feature, default of step size (TF rejects)": (
        E(a=SIX),
        lambda m: {"a": m.FixedLenSequence([2], m.int64, allow_missing=True, default_value=[9, 9])},
    ),
    "seq feature kind-less": (E(a=KINDLESS), lambda m: {"a": m.FixedLenSequence([2], m.int64, allow_missing=True)}),
    "seq feature [2]": (E(a=SIX), lambda m: {"a": m.FixedLenSequence([2], m.int64, allow_missing=True)}),
    "seq feature [2,3]": (E(a=SIX), lambda m: {"a": m.FixedLenSequence([2, 3], m.int64, allow_missing=True)}),
    "seq feature []": (E(a=SIX), lambda m: {"a": m.FixedLenSequence([], m.int64, allow_missing=True)}),
    "seq feature bytes": (E(a=[b"a", b"b"]), lambda m: {"a": m.FixedLenSequence([], m.string, allow_missing=True)}),
    "seq feature not a multiple": (E(a=SIX), lambda m: {"a": m.FixedLenSequence([4], m.int64, allow_missing=True)}),
    "seq feature kind mismatch": (E(a=SIX), lambda m: {"a": m.FixedLenSequence([2], m.float32, allow_missing=True)}),
    "empty key, other keys ignored": (E(**{"": 1, "é": [2.0]}), lambda m: {"": m.FixedLen([], m.int64)}),
    "several keys": (
        E(i=SIX, f=[0.5, -0.0], b=[b"z"]),
        lambda m: {"i": m.FixedLen([6], m.int64), "f": m.VarLen(m.float32), "b": m.FixedLen([1], m.string)},
    ),
}


@pytest.mark.parametrize("name", list(EXAMPLE_CASES))
def test_decode_example_with_spec_matches_parse_single_example(name: str) -> None:
    data, spec = EXAMPLE_CASES[name]
    check_spec_case(
        lambda m: tf.io.parse_single_example(data, spec(m)), lambda m: tfr.decode_example(data, spec(m)), tf_output
    )


def test_spec_errors_name_the_feature_and_what_was_expected() -> None:
    data = E(count=SIX, kind=SIX)
    with pytest.raises(tfr.FeatureError, match=r"count") as err:
        tfr.decode_example(data, {"count": tfr.FixedLenFeature([4], "int64")})
    assert err.value.key == "count" and "4" in str(err.value) and "6" in str(err.value)
    with pytest.raises(tfr.FeatureError, match=r"int64") as err:
        tfr.decode_example(data, {"kind": tfr.FixedLenFeature([6], "float32")})
    assert err.value.key == "kind" and "float" in str(err.value)


def S(ctx: dict[str, Any] | None = None, lists: dict[str, Any] | None = None) -> bytes:
    """A serialized SequenceExample built by TensorFlow from context and feature-list values."""
    return tf_sequence_example(ctx or {}, lists or {}).SerializeToString()  # type: ignore[no-any-return]


SEQ = S(
    {"c": [1, 2]},
    {"s": [[1, 2], [3, 4], [5, 6]], "v": [[1], np.array([], np.int64), [2, 3, 4]], "b": [[b"x"], [b"y", b"z"]]},
)
SEQ_KINDLESS_STEP = S({}, {"s": [[1], None, [3]]})

SEQUENCE_CASES: dict[str, tuple] = {
    "fixed [2]": (SEQ, None, lambda m: {"s": m.FixedLenSequence([2], m.int64)}),
    "fixed [1,2]": (SEQ, None, lambda m: {"s": m.FixedLenSequence([1, 2], m.int64)}),
    "fixed bytes []": (S({}, {"b": [b"p", b""]}), None, lambda m: {"b": m.FixedLenSequence([], m.string)}),
    "fixed wrong count per step": (SEQ, None, lambda m: {"s": m.FixedLenSequence([], m.int64)}),
    "fixed empty step": (SEQ, None, lambda m: {"v": m.FixedLenSequence([1], m.int64)}),
    "fixed kind-less step": (SEQ_KINDLESS_STEP, None, lambda m: {"s": m.FixedLenSequence([1], m.int64)}),
    "fixed kind-less step, allow_missing": (
        SEQ_KINDLESS_STEP,
        None,
        lambda m: {"s": m.FixedLenSequence([1], m.int64, allow_missing=True)},
    ),
    "fixed kind mismatch": (SEQ, None, lambda m: {"s": m.FixedLenSequence([2], m.float32)}),
    "fixed missing": (SEQ, None, lambda m: {"zz": m.FixedLenSequence([2], m.int64)}),
    "fixed missing, allow_missing": (SEQ, None, lambda m: {"zz": m.FixedLenSequence([2], m.int64, allow_missing=True)}),
    "fixed no steps": (S({}, {"s": []}), None, lambda m: {"s": m.FixedLenSequence([2], m.int64)}),
    "fixed with a default (TF rejects)": (
        SEQ,
        None,
        lambda m: {"zz": m.FixedLenSequence([2], m.int64, allow_missing=True, default_value=[7, 7])},
    ),
    "varlen per step": (SEQ, None, lambda m: {"v": m.VarLen(m.int64)}),
    "varlen bytes": (SEQ, None, lambda m: {"b": m.VarLen(m.string)}),
    "varlen kind-less step": (SEQ_KINDLESS_STEP, None, lambda m: {"s": m.VarLen(m.int64)}),
    "varlen missing": (SEQ, None, lambda m: {"zz": m.VarLen(m.int64)}),
    "varlen kind mismatch": (SEQ, None, lambda m: {"s": m.VarLen(m.float32)}),
    "fixed-len feature in sequence_features": (SEQ, None, lambda m: {"s": m.FixedLen([2], m.int64)}),
    "context fixed": (SEQ, lambda m: {"c": m.FixedLen([2], m.int64)}, None),
    "context missing, default": (SEQ, lambda m: {"zz": m.FixedLen([2], m.int64, default_value=[1, 2])}, None),
    "context missing, no default": (SEQ, lambda m: {"zz": m.FixedLen([2], m.int64)}, None),
    "context count mismatch": (SEQ, lambda m: {"c": m.FixedLen([3], m.int64)}, None),
    "context kind mismatch": (SEQ, lambda m: {"c": m.FixedLen([2], m.float32)}, None),
    "context varlen": (SEQ, lambda m: {"c": m.VarLen(m.int64), "zz": m.VarLen(m.string)}, None),
    "context kind-less, default (TF: present, 0 values)": (
        S({"c": KINDLESS}),
        lambda m: {"c": m.FixedLen([], m.int64, default_value=3)},
        None,
    ),
    "context kind-less, [0]": (S({"c": KINDLESS}), lambda m: {"c": m.FixedLen([0], m.int64)}, None),
    "context kind-less, varlen": (S({"c": KINDLESS}), lambda m: {"c": m.VarLen(m.float32)}, None),
    "context sequence feature": (SEQ, lambda m: {"c": m.FixedLenSequence([], m.int64, allow_missing=True)}, None),
    "same key in context and lists": (
        S({"s": 5}, {"s": [[1, 2]]}),
        lambda m: {"s": m.FixedLen([], m.int64)},
        lambda m: {"s": m.FixedLenSequence([2], m.int64)},
    ),
}


@pytest.mark.parametrize("name", list(SEQUENCE_CASES))
def test_decode_sequence_example_with_spec_matches_tf(name: str) -> None:
    data, context, sequence = SEQUENCE_CASES[name]

    def specs(m: TFSpec) -> tuple:
        return (context(m) if context else None), (sequence(m) if sequence else None)

    def parse_tf(m: TFSpec) -> dict[str, Any]:
        ctx, seq = tf.io.parse_single_sequence_example(data, *specs(m))
        return {
            **{("ctx", k): tf_output(v) for k, v in ctx.items()},
            **{("seq", k): tf_sequence_output(v) for k, v in seq.items()},
        }

    def parse_ours(m: TFSpec) -> dict[str, Any]:
        ctx_spec, seq_spec = specs(m)
        ctx, seq = tfr.decode_sequence_example(data, ctx_spec or {}, seq_spec or {})
        return {**{("ctx", k): v for k, v in ctx.items()}, **{("seq", k): v for k, v in seq.items()}}

    check_spec_case(parse_tf, parse_ours, lambda converted: converted)


# random specs against random Examples: same values or both raise
SPEC_DTYPES = {"int": "int64", "float": "float32", "bytes": "string"}


@st.composite
def example_and_spec(draw: Any) -> tuple:
    kind = draw(st.sampled_from(list(SPEC_DTYPES)))
    n = draw(st.integers(0, 6))
    element = {"int": I64, "float": F32, "bytes": st.binary(max_size=5)}[kind]
    items = draw(st.lists(element, min_size=n, max_size=n))
    dtype = {"int": np.int64, "float": np.float32, "bytes": object}[kind]
    present = draw(st.sampled_from(["values", "kind-less", "missing"]))
    features = (
        {"k": np.array(items, dtype=dtype)} if present == "values" else {"k": None} if present == "kind-less" else {}
    )
    spec_kind = draw(st.sampled_from(["fixed", "varlen", "sequence"]))
    spec_dtype = draw(st.sampled_from([SPEC_DTYPES[kind]] * 3 + list(SPEC_DTYPES.values())))
    if spec_kind == "varlen":
        return features, lambda m: {"k": m.VarLen(getattr(m, spec_dtype))}
    if spec_kind == "sequence":  # inner size >= 1 (TF crashes on a zero-size step with data)
        inner = draw(st.sampled_from([[], [1], [2], [3], [2, 1]]))
        return features, lambda m: {"k": m.FixedLenSequence(inner, getattr(m, spec_dtype), allow_missing=True)}
    shape = draw(st.sampled_from([[], [n], [n, 1], [1, n], [max(n - 1, 0)], [n + 1], [2, 3]]))
    size = math.prod(shape)
    default: Any = None
    if size and draw(st.booleans()):  # (empty defaults: see the "[0] with empty default" cases)
        pool = {"int64": I64, "float32": F32, "string": st.binary(max_size=4)}[spec_dtype]
        default = draw(st.lists(pool, min_size=size, max_size=size))
        if shape == [] and default:
            default = default[0]
    return features, lambda m: {"k": m.FixedLen(shape, getattr(m, spec_dtype), default_value=default)}


@given(example_and_spec())
def test_random_specs_decode_like_parse_single_example(case: tuple) -> None:
    features, spec = case
    data = tfr.encode_example(features)
    check_spec_case(
        lambda m: tf.io.parse_single_example(data, spec(m)), lambda m: tfr.decode_example(data, spec(m)), tf_output
    )


@st.composite
def sequence_and_spec(draw: Any) -> tuple:
    kind = draw(st.sampled_from(list(SPEC_DTYPES)))
    element = {"int": I64, "float": F32, "bytes": st.binary(max_size=5)}[kind]
    dtype = {"int": np.int64, "float": np.float32, "bytes": object}[kind]
    per_step = draw(st.integers(0, 3))
    exact = st.lists(element, min_size=per_step, max_size=per_step).map(lambda v: np.array(v, dtype=dtype))
    other = st.lists(element, max_size=4).map(lambda v: np.array(v, dtype=dtype))  # a step of another length
    well_formed = draw(st.sampled_from([True, True, False]))
    steps = draw(st.lists(exact if well_formed else st.one_of(exact, other, st.just(None)), max_size=4))
    lists = {"s": steps} if draw(st.booleans()) or steps else {}
    spec_dtype = draw(st.sampled_from([SPEC_DTYPES[kind]] * 3 + list(SPEC_DTYPES.values())))
    if draw(st.booleans()):
        return lists, lambda m: {"s": m.VarLen(getattr(m, spec_dtype))}
    # a step shape of size 0 crashes TensorFlow's sequence parser (SIGFPE), whatever the data
    shape = draw(st.sampled_from([sh for sh in ([], [per_step], [1, per_step], [per_step + 1]) if math.prod(sh)]))
    allow_missing = draw(st.booleans())
    return lists, lambda m: {"s": m.FixedLenSequence(shape, getattr(m, spec_dtype), allow_missing=allow_missing)}


@given(sequence_and_spec())
def test_random_sequence_specs_decode_like_parse_single_sequence_example(case: tuple) -> None:
    lists, spec = case
    data = tfr.encode_sequence_example({}, lists)

    def parse_tf(m: TFSpec) -> dict[str, Any]:
        return {
            k: tf_sequence_output(v) for k, v in tf.io.parse_single_sequence_example(data, None, spec(m))[1].items()
        }

    check_spec_case(parse_tf, lambda m: tfr.decode_sequence_example(data, {}, spec(m))[1], lambda converted: converted)


# --------------------------------------------------------------------------- the message definitions


def descriptor_signature(descriptor: Any) -> Any:
    """Field names, numbers, types, repetition, packing and oneofs, recursively (package-independent)."""
    fields = []
    for f in descriptor.fields:
        repeated = f.is_repeated if hasattr(f, "is_repeated") else f.label == f.LABEL_REPEATED
        nested = descriptor_signature(f.message_type) if f.message_type is not None else None
        fields.append(
            (
                f.name,
                f.number,
                f.type,
                repeated,
                getattr(f, "is_packed", None),
                nested,
                f.containing_oneof.name if f.containing_oneof else None,
            )
        )
    return descriptor.name, descriptor.GetOptions().map_entry, sorted(fields, key=lambda t: t[1])


@pytest.mark.parametrize(
    "name",
    [
        "Example",
        "SequenceExample",
        "Features",
        "Feature",
        "FeatureList",
        "FeatureLists",
        "BytesList",
        "FloatList",
        "Int64List",
    ],
)
def test_our_messages_have_tensorflows_fields_under_our_own_package(name: str) -> None:
    ours, theirs = getattr(tfr, name).DESCRIPTOR, getattr(T, name).DESCRIPTOR
    assert ours.full_name == f"tfrecord_lite.{name}" and theirs.full_name == f"tensorflow.{name}"
    assert descriptor_signature(ours) == descriptor_signature(theirs)


def test_write_example_file_parses_in_a_tf_pipeline(tmp_path: Path) -> None:
    path = tmp_path / "examples.tfrecord.gz"
    rows = [{"id": i, "x": np.full(3, i / 2, np.float32), "name": f"row{i}"} for i in range(5)]
    with tfr.TFRecordWriter(path, compression="gzip") as writer:
        for row in rows:
            writer.write_example(row)
    spec = {
        "id": tf.io.FixedLenFeature([], tf.int64),
        "x": tf.io.FixedLenFeature([3], tf.float32),
        "name": tf.io.FixedLenFeature([], tf.string),
    }
    dataset = tf.data.TFRecordDataset(str(path), "GZIP").map(lambda r: tf.io.parse_single_example(r, spec)).batch(5)
    batch = next(iter(dataset))
    assert batch["id"].numpy().tolist() == list(range(5))
    assert np.array_equal(batch["x"].numpy(), np.stack([row["x"] for row in rows]))
    assert batch["name"].numpy().tolist() == [f"row{i}".encode() for i in range(5)]


# --------------------------------------------------------------------------- random access into compressed files


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_random_access_into_files_tf_compressed(tmp_path: Path, compression: str) -> None:
    path = tmp_path / "theirs.tfrecord.z"
    records = [RNG.integers(0, 9, int(n), dtype=np.uint8).tobytes() for n in RNG.integers(0, 40_000, 120)]
    tf_write(path, records, compression)
    with tfr.TFRecordFile(path) as f:
        assert len(f) == len(records)
        assert f[::-1] == records[::-1]
        assert f[[7, 3, 7]] == [records[7], records[3], records[7]]


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_tf_reads_files_written_with_seek_points(tmp_path: Path, compression: str) -> None:
    path = tmp_path / "seekable.tfrecord.z"
    records = [RNG.integers(0, 9, int(n), dtype=np.uint8).tobytes() for n in RNG.integers(0, 40_000, 120)]
    with tfr.TFRecordWriter(path, compression=compression.lower(), seek_every="64k") as writer:
        for record in records:
            writer.write(record)
    assert tf_read(path, compression) == records
    with tfr.TFRecordFile(path) as f:
        assert f[::-1] == records[::-1]


def test_indexed_tf_gzip_files_read_in_threads_as_tf_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # TensorFlow writes one GZIP stream; with a sidecar of seek points beside it, iter_records
    # inflates it in threads (_index/parallel_inflate.py), from points 64 KiB apart here
    pytest.importorskip("indexed_gzip")
    from tfrecord_lite._index import gzip_index as _gzip_index
    from tfrecord_lite._index import parallel_inflate as _parallel_inflate

    monkeypatch.setattr(_parallel_inflate, "SEGMENT", 128 << 10)
    monkeypatch.setenv(_parallel_inflate.ENV_VAR, "2")
    path = tmp_path / "tf.tfrecord.gz"
    records = [RNG.integers(0, 9, int(n), dtype=np.uint8).tobytes() for n in RNG.integers(0, 40_000, 150)]
    tf_write(path, records, "GZIP")
    _gzip_index.write_gzip_index(str(path), f"{path}.tfrlidx", spacing=64 << 10)
    with tfr.iter_records(path) as read:
        assert isinstance(read._stream.inflater, _parallel_inflate.ParallelInflater)
        assert list(read) == tf_read(path, "GZIP") == records
