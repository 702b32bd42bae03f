"""The Example / SequenceExample codec: round trips, agreement with the protobuf runtime, specs, errors."""

from __future__ import annotations

import math
import struct

import google.protobuf
import numpy as np
import pytest
from google.protobuf.message import DecodeError as ProtobufDecodeError
from hypothesis import assume, given
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests import reference
from tfrecord_lite._example.spec import normalize_dtype

# CI's TensorFlow environment runs these with the newest protobuf.
needs_sound_protobuf = pytest.mark.skipif(
    not reference.SOUND_ON_MALFORMED_INPUT,
    reason=f"protobuf {google.protobuf.__version__}'s parser is no oracle for malformed input (needs >= 4.25)",
)

I64 = st.integers(-(2**63), 2**63 - 1)
F32 = st.floats(width=32, allow_nan=True, allow_infinity=True)
EDGE_INTS = st.sampled_from([0, 1, -1, 127, 128, 2**31, -(2**31), 2**63 - 1, -(2**63)])
EDGE_FLOATS = st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 3.4028234663852886e38, 1.401298464324817e-45])

# (value given to encode_example, value decode_example must return)
feature_value = st.one_of(
    st.lists(st.one_of(I64, EDGE_INTS), min_size=1, max_size=40).map(lambda v: (v, np.array(v, np.int64))),
    st.lists(st.one_of(F32, EDGE_FLOATS), min_size=1, max_size=40).map(lambda v: (v, np.array(v, np.float32))),
    st.lists(st.binary(max_size=20), min_size=1, max_size=8).map(lambda v: (v, list(v))),
    st.lists(st.text(max_size=8), min_size=1, max_size=4).map(lambda v: (v, [s.encode() for s in v])),
    I64.map(lambda v: (v, np.array([v], np.int64))),
    st.booleans().map(lambda v: (v, np.array([int(v)], np.int64))),
    F32.map(lambda v: (v, np.array([v], np.float32))),
    st.binary(max_size=30).map(lambda v: (v, [v])),
    st.just((np.array([], np.int64), np.array([], np.int64))),
    st.just((np.array([], np.float32), np.array([], np.float32))),
    st.just((np.array([], dtype=bytes), [])),
    st.just((None, None)),
    st.integers(0, 4).flatmap(
        lambda n: st.lists(F32, min_size=n * 3, max_size=n * 3).map(
            lambda v: (np.array(v, np.float32).reshape(-1, 3), np.array(v, np.float32))
        )
    ),
)
features = st.dictionaries(st.text(max_size=12), feature_value, max_size=6)


def split(pairs):
    return {k: v[0] for k, v in pairs.items()}, {k: v[1] for k, v in pairs.items()}


@given(features)
def test_example_round_trip_and_agreement_with_protobuf(pairs):
    given_values, expected = split(pairs)
    data = tfr.encode_example(given_values)
    decoded = tfr.decode_example(data)
    assert reference.same_features(decoded, expected)
    assert reference.same_features(decoded, reference.decode_example(data))


@given(features)
def test_canonical_encodings_take_the_fast_path_and_agree_with_the_general_parser(pairs):
    from tfrecord_lite._example import wire as _wire
    from tfrecord_lite._example.decode import values_of

    for data in (
        tfr.encode_example(split(pairs)[0]),
        tfr.Example.FromString(tfr.encode_example(split(pairs)[0])).SerializeToString(),
    ):
        fast = _wire._canonical_example(data)
        assert fast is not None
        general = _wire.general_example(data)
        assert {k: values_of(data, p) for k, p in fast.items()}.keys() == general.keys()
        for key in fast:
            assert reference.same_value(values_of(data, fast[key]), values_of(data, general[key]))


@given(features)
def test_protobuf_serialized_examples_decode_to_the_same_values(pairs):
    _, expected = split(pairs)
    msg = tfr.Example()
    for key, value in expected.items():
        feature = msg.features.feature[key]
        if value is None:
            continue
        if isinstance(value, list):
            feature.bytes_list.value.extend(value)
        elif value.dtype == np.int64:
            feature.int64_list.value.extend(value.tolist())
        else:
            feature.float_list.value.extend(value.tolist())
            feature.float_list.SetInParent()
        if isinstance(value, list):
            feature.bytes_list.SetInParent()
        elif value.dtype == np.int64:
            feature.int64_list.SetInParent()
    assert reference.same_features(tfr.decode_example(msg.SerializeToString()), expected)


steps = st.lists(feature_value, max_size=5)


@given(features, st.dictionaries(st.text(max_size=8), steps, max_size=4))
def test_sequence_example_round_trip_and_agreement_with_protobuf(context_pairs, list_pairs):
    context, expected_context = split(context_pairs)
    lists = {k: [v[0] for v in s] for k, s in list_pairs.items()}
    expected_lists = {k: [v[1] for v in s] for k, s in list_pairs.items()}
    data = tfr.encode_sequence_example(context, lists)
    ctx, seq = tfr.decode_sequence_example(data)
    ref_ctx, ref_seq = reference.decode_sequence_example(data)
    assert reference.same_features(ctx, expected_context)
    assert reference.same_features(ctx, ref_ctx)
    for got in (seq, ref_seq):
        assert got.keys() == expected_lists.keys()
        for key, values in expected_lists.items():
            assert len(got[key]) == len(values)
            assert all(reference.same_value(a, b) for a, b in zip(got[key], values, strict=False))


# ----------------------------------------------------------------- hand-made wire encodings


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def ld(field: int, payload: bytes) -> bytes:
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def entry(key: bytes, feature: bytes) -> bytes:
    return ld(1, ld(1, key) + ld(2, feature))


def example(*entries: bytes) -> bytes:
    return ld(1, b"".join(entries))


WIRE_CASES = {
    "unpacked int64": example(entry(b"a", ld(3, varint(8) + varint(5) + varint(8) + varint(-3)))),
    "unpacked float": example(entry(b"a", ld(2, b"\x0d" + struct.pack("<f", 1.5) + b"\x0d" + struct.pack("<f", -2)))),
    "packed and unpacked mixed": example(entry(b"a", ld(3, ld(1, varint(1) + varint(300)) + varint(8) + varint(7)))),
    "repeated key: last wins": example(entry(b"k", ld(3, ld(1, varint(1)))), entry(b"k", ld(1, ld(1, b"x")))),
    "kind switch: last kind wins": example(entry(b"k", ld(2, ld(1, b"\0\0\x80?")) + ld(3, ld(1, varint(9))))),
    "same kind twice merges": example(entry(b"k", ld(3, ld(1, varint(1))) + ld(3, ld(1, varint(2))))),
    "kind, other kind, first kind again": example(
        entry(b"k", ld(3, ld(1, varint(1))) + ld(1, ld(1, b"z")) + ld(3, ld(1, varint(2))))
    ),
    "unknown fields everywhere": (
        varint(5 << 3)
        + varint(99)
        + example(
            entry(b"k", ld(3, ld(1, varint(4)) + varint(2 << 3 | 5) + b"abcd") + varint(9 << 3 | 1) + b"12345678")
        )
        + ld(7, b"junk")
    ),
    "a group as unknown field": example(
        entry(b"k", ld(3, ld(1, varint(6))) + varint(4 << 3 | 3) + varint(1 << 3) + varint(5) + varint(4 << 3 | 4))
    ),
    "map entry value before key": example(ld(1, ld(2, ld(3, ld(1, varint(11)))) + ld(1, b"late"))),
    "map entry without key": example(ld(1, ld(2, ld(1, ld(1, b"v"))))),
    "map entry without value": example(ld(1, ld(1, b"nokind"))),
    "features twice merges the maps": example(entry(b"a", ld(3, ld(1, varint(1)))))
    + example(entry(b"b", ld(3, ld(1, varint(2))))),
    "wrong wire type for a known field is unknown": example(
        entry(b"a", ld(3, varint(1 << 3 | 5) + b"wxyz" + varint(8) + varint(3)))
    ),
    "ten-byte negative varints": example(entry(b"n", ld(3, ld(1, varint(-1) * 20 + varint(-(2**63)))))),
    "misaligned float payload": example(entry(b"abc", ld(2, ld(1, struct.pack("<7f", *range(7)))))),
    "empty kinds": example(entry(b"f", ld(2, b"")), entry(b"i", ld(3, b"")), entry(b"b", ld(1, b""))),
    "empty message": b"",
}


NON_CANONICAL = set(WIRE_CASES) - {
    "repeated key: last wins",
    "ten-byte negative varints",
    "misaligned float payload",
    "empty kinds",
}


@pytest.mark.parametrize("name", sorted(NON_CANONICAL))
def test_odd_encodings_leave_the_fast_path(name):
    from tfrecord_lite._example import wire as _wire

    assert _wire._canonical_example(WIRE_CASES[name]) is None


@pytest.mark.parametrize("name", sorted(WIRE_CASES))
def test_wire_encodings_decode_like_protobuf(name):
    data = WIRE_CASES[name]
    assert reference.same_features(tfr.decode_example(data), reference.decode_example(data))


OVERLONG = b"\x81" * 10 + b"\x01"  # one varint of 11 bytes
# key "c" twice: an int64 list with an overlong varint, then a bytes list that replaces it
REPLACED_KEY = example(entry(b"c", ld(3, ld(1, OVERLONG))), entry(b"c", ld(1, ld(1, b"x"))))


@pytest.mark.parametrize(
    "data",
    [
        b"\x0a\x05",  # a field longer than the message
        b"\x0a\x02\x0a\x05",  # nested overrun
        b"\x08",  # truncated varint
        b"\x08" + b"\xff" * 11,  # varint too long
        b"\x0f",  # wire type 7
        b"\x00\x00",  # field number 0
        pytest.param(example(entry(b"\xff\xfe", b"")), marks=needs_sound_protobuf, id="key not UTF-8"),
        pytest.param(
            example(ld(1, ld(1, b"\x80") + ld(1, b"ok") + ld(2, b""))),
            marks=needs_sound_protobuf,
            id="an overridden key not UTF-8",
        ),
        example(entry(b"a", ld(2, ld(1, b"abc")))),  # packed floats not a multiple of 4
        example(entry(b"a", ld(3, ld(1, b"\x80")))),  # packed varints end inside a varint
        b"\x0b\x08\x01",  # unterminated group
        pytest.param(REPLACED_KEY, marks=needs_sound_protobuf, id="a replaced value with an overlong varint"),
        pytest.param(
            example(entry(b"c", ld(3, ld(1, OVERLONG)) + ld(1, ld(1, b"x")))),
            marks=needs_sound_protobuf,
            id="a replaced kind with an overlong varint",
        ),
    ],
)
def test_malformed_protos_raise_decode_error_like_protobuf(data):
    with pytest.raises(ProtobufDecodeError):
        tfr.Example.FromString(data)
    with pytest.raises(tfr.DecodeError):
        tfr.decode_example(data)
    with pytest.raises(tfr.DecodeError):
        tfr.decode_sequence_example(data)


def test_a_replaced_value_is_checked_without_a_spec_and_left_unread_with_one():
    # without a spec decode_example parses as protobuf does (every field: found by fuzzer/fuzz.py);
    # with one, as TensorFlow's parse_example, which reads only the last entry of a key
    spec = {"c": tfr.VarLenFeature("bytes")}
    assert tfr.decode_example(REPLACED_KEY, spec)["c"] == [b"x"]
    assert tfr.decode_examples([REPLACED_KEY] * 2, spec)["c"] == [[b"x"], [b"x"]]
    with pytest.raises(tfr.DecodeError, match="longer than 10 bytes"):
        tfr.decode_example(REPLACED_KEY)


def _protobuf_or_error(data):
    try:
        return reference.decode_example(data)
    except ProtobufDecodeError:
        return "error"


def _ours_or_error(data):
    try:
        return tfr.decode_example(data)
    except tfr.DecodeError as err:
        return "group error" if "group" in str(err) else "error"


def agree(theirs, ours) -> bool:
    """Both reject, or both accept. One documented exception: protobuf's upb parser accepts some
    malformed group encodings (unterminated, or holding field number 0) that we reject."""
    if ours == "group error":
        return True
    return (theirs == "error") == (ours == "error")


def _sequence_or_error(decode, data):
    try:
        return decode(data)
    except ProtobufDecodeError:
        return "error"
    except tfr.DecodeError as err:
        return "group error" if "group" in str(err) else "error"


def damage(blob: bytearray, data) -> bytes:
    """Flip, drop or insert one to three bytes."""
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(blob) - 1))
        op = data.draw(st.sampled_from(["flip", "drop", "insert"]))
        if op == "flip":
            blob[i] ^= 1 << data.draw(st.integers(0, 7))
        elif op == "drop" and len(blob) > 1:
            del blob[i]
        else:
            blob.insert(i, data.draw(st.integers(0, 255)))
    return bytes(blob)


@needs_sound_protobuf
@given(features, st.data())
def test_damaged_encodings_agree_with_protobuf(pairs, data):
    """Differential fuzzing: flip, drop or insert bytes in a valid Example; we and protobuf
    must both reject it or both accept it with equal values."""
    blob = bytearray(tfr.encode_example(split(pairs)[0]))
    assume(blob)
    blob = damage(blob, data)
    theirs, ours = _protobuf_or_error(blob), _ours_or_error(blob)
    assert agree(theirs, ours), (theirs, ours)
    if theirs != "error" and isinstance(ours, dict):
        assert reference.same_features(ours, theirs)


@needs_sound_protobuf
@given(features, st.dictionaries(st.text(max_size=4), steps, max_size=3), st.data())
def test_damaged_sequence_examples_agree_with_protobuf(context_pairs, list_pairs, data):
    blob = bytearray(
        tfr.encode_sequence_example(split(context_pairs)[0], {k: [v[0] for v in s] for k, s in list_pairs.items()})
    )
    blob = damage(blob, data)
    theirs = _sequence_or_error(reference.decode_sequence_example, blob)
    ours = _sequence_or_error(tfr.decode_sequence_example, blob)
    assert agree(theirs, ours), (theirs, ours)
    if not isinstance(theirs, tuple) or not isinstance(ours, tuple):
        return
    assert reference.same_features(ours[0], theirs[0])
    assert ours[1].keys() == theirs[1].keys()
    for key in ours[1]:
        assert len(ours[1][key]) == len(theirs[1][key])
        assert all(reference.same_value(a, b) for a, b in zip(ours[1][key], theirs[1][key], strict=False))


@given(st.binary(max_size=64))
def test_arbitrary_bytes_never_crash(blob):
    for decode in (tfr.decode_example, tfr.decode_sequence_example):
        try:
            decode(blob)
        except tfr.DecodeError:
            pass


def test_decode_accepts_bytes_like_objects():
    data = tfr.encode_example({"a": [1, 2], "b": b"x"})
    for view in (bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        assert reference.same_features(tfr.decode_example(view), tfr.decode_example(data))


# ----------------------------------------------------------------- encoding rules and errors


def test_values_are_encoded_by_type():
    data = tfr.encode_example(
        {
            "int": 3,
            "bool": True,
            "np_int": np.int32(-4),
            "float": 0.5,
            "np_float": np.float64(0.25),
            "str": "héllo",
            "bytes": b"\x00\xff",
            "uint8_image": np.arange(12, dtype=np.uint8).reshape(2, 2, 3),
            "float16": np.array([1.5, 2], np.float16),
            "int_and_float": [1, 2.5],
            "str_array": np.array(["a", "bc"]),
            "object_bytes": np.array([b"a", b""], dtype=object),
            "feature_message": tfr.Feature(int64_list=tfr.Int64List(value=[])),
            "none": None,
        }
    )
    msg = tfr.Example.FromString(data).features.feature
    assert msg["int"].int64_list.value == [3]
    assert msg["bool"].int64_list.value == [1]
    assert msg["np_int"].int64_list.value == [-4]
    assert list(msg["float"].float_list.value) == [0.5]
    assert list(msg["np_float"].float_list.value) == [0.25]
    assert msg["str"].bytes_list.value == ["héllo".encode()]
    assert msg["bytes"].bytes_list.value == [b"\x00\xff"]
    assert list(msg["uint8_image"].int64_list.value) == list(range(12))
    assert list(msg["float16"].float_list.value) == [1.5, 2.0]
    assert list(msg["int_and_float"].float_list.value) == [1.0, 2.5]
    assert msg["str_array"].bytes_list.value == [b"a", b"bc"]
    assert msg["object_bytes"].bytes_list.value == [b"a", b""]
    assert msg["feature_message"].WhichOneof("kind") == "int64_list"
    assert msg["none"].WhichOneof("kind") is None


def test_float64_values_round_to_float32_like_protobuf():
    values = [0.1, 1e-50, 3.5e38, -1e39, 123456789.123]
    ours = tfr.decode_example(tfr.encode_example({"f": values}))["f"]
    theirs = tfr.Example(features=tfr.Features(feature={"f": tfr.Feature(float_list=tfr.FloatList(value=values))}))
    assert ours.tobytes() == np.array(theirs.features.feature["f"].float_list.value, np.float32).tobytes()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (2**63, "outside the int64 range"),
        (-(2**63) - 1, "outside the int64 range"),
        ([1, 2**64], "outside the int64 range"),
        (np.array([2**63], np.uint64), "outside the int64 range"),
        ([1, b"x"], "mixed list"),
        (["a", 1.5], "mixed list"),
        ([[1, 2], [3, 4]], "nested"),
        ([[1, 2], [3]], "nested"),
        ([], "empty list"),
        (object(), "cannot encode a value of type object"),
        ({"a": 1}, "cannot encode a value of type dict"),
        (np.array([1 + 2j]), "dtype complex128"),
    ],
)
def test_unencodable_values_name_the_feature(value, message):
    with pytest.raises(tfr.FeatureError, match=message) as info:
        tfr.encode_example({"the_key": value})
    assert info.value.key == "the_key"
    assert "the_key" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_non_string_keys_are_rejected():
    with pytest.raises(tfr.FeatureError, match="keys must be str"):
        tfr.encode_example({1: 2})


def test_feature_list_values_must_be_lists_of_steps():
    with pytest.raises(tfr.FeatureError, match="one value per step"):
        tfr.encode_sequence_example({}, {"s": b"abc"})
    with pytest.raises(tfr.FeatureError, match="'s'"):
        tfr.encode_sequence_example({}, {"s": [[1], [b"x", 2]]})


def test_empty_containers_are_present_but_empty():
    assert tfr.Example.FromString(tfr.encode_example({})).HasField("features")
    seq = tfr.SequenceExample.FromString(tfr.encode_sequence_example({}, {}))
    assert seq.HasField("context") and seq.HasField("feature_lists")


# ----------------------------------------------------------------- decoding with a spec

SAMPLE = {
    "label": 7,
    "scores": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5],
    "name": b"abc",
    "tags": [b"x", b"y"],
    "ids": np.arange(6),
    "empty_ints": np.array([], np.int64),
    "kindless": None,
}


def decode(spec, sample=SAMPLE):
    return tfr.decode_example(tfr.encode_example(sample), spec)


def test_fixed_len_shapes_and_scalars():
    out = decode(
        {
            "label": tfr.FixedLenFeature([], normalize_dtype(np.int64)),
            "scores": tfr.FixedLenFeature([2, 3], "float32"),
            "name": tfr.FixedLenFeature((), "string"),
            "tags": tfr.FixedLenFeature([2], bytes),
            "ids": tfr.FixedLenFeature([3, 2], np.int64),
            "empty_ints": tfr.FixedLenFeature([0], "int64"),
        }
    )
    assert isinstance(out["label"], np.int64) and out["label"] == 7
    assert out["scores"].shape == (2, 3) and out["scores"].dtype == np.float32
    assert out["scores"][1, 2] == np.float32(5.5)
    assert out["name"] == b"abc"
    assert out["tags"].dtype == object and out["tags"].tolist() == [b"x", b"y"]
    assert out["ids"].tolist() == [[0, 1], [2, 3], [4, 5]]
    assert out["empty_ints"].shape == (0,)


def test_only_spec_keys_are_returned():
    assert list(decode({"name": tfr.VarLenFeature("bytes")})) == ["name"]


def test_defaults_fill_missing_and_kindless_features():
    out = decode(
        {
            "missing": tfr.FixedLenFeature([2, 2], "int64", default_value=[[1, 2], [3, 4]]),
            "kindless": tfr.FixedLenFeature([], "float32", default_value=2),
            "missing_bytes": tfr.FixedLenFeature([], "string", default_value="dé"),
        }
    )
    assert out["missing"].tolist() == [[1, 2], [3, 4]]
    assert out["kindless"] == np.float32(2.0) and isinstance(out["kindless"], np.float32)
    assert out["missing_bytes"] == "dé".encode()
    again = decode({"missing": tfr.FixedLenFeature([2, 2], "int64", default_value=[[1, 2], [3, 4]])})
    again["missing"][0, 0] = 99  # the returned default is a copy
    assert (
        decode({"missing": tfr.FixedLenFeature([2, 2], "int64", default_value=[[1, 2], [3, 4]])})["missing"][0, 0] == 1
    )


@pytest.mark.parametrize(
    ("key", "spec", "message"),
    [
        ("missing", tfr.FixedLenFeature([], "int64"), "required feature is missing"),
        ("kindless", tfr.FixedLenFeature([], "int64"), "required feature is missing"),
        ("label", tfr.FixedLenFeature([], "float32"), "expected float_list \\(float32\\), found int64_list"),
        ("label", tfr.VarLenFeature("bytes"), "expected bytes_list \\(bytes\\), found int64_list"),
        ("scores", tfr.FixedLenFeature([4], "float32"), "expected 4 values for shape \\[4\\], found 6"),
        (
            "label",
            tfr.FixedLenFeature([2], "int64", default_value=[0, 0]),
            "expected 2 values for shape \\[2\\], found 1",
        ),
        ("empty_ints", tfr.FixedLenFeature([], "int64", default_value=0), "expected 1 value for shape \\[\\], found 0"),
        ("ids", tfr.FixedLenSequenceFeature([4], "int64", allow_missing=True), "not a multiple of 4"),
        ("ids", tfr.FixedLenSequenceFeature([2], "int64"), "needs allow_missing=True"),
    ],
)
def test_spec_errors_name_feature_and_expected_vs_found(key, spec, message):
    with pytest.raises(tfr.FeatureError, match=message) as info:
        decode({key: spec})
    assert info.value.key == key and repr(key) in str(info.value)


def test_var_len_features():
    out = decode(
        {
            "ids": tfr.VarLenFeature("int64"),
            "tags": tfr.VarLenFeature("bytes"),
            "missing": tfr.VarLenFeature("float32"),
            "kindless": tfr.VarLenFeature("int64"),
            "missing_bytes": tfr.VarLenFeature("bytes"),
        }
    )
    assert out["ids"].tolist() == list(range(6))
    assert out["tags"] == [b"x", b"y"]
    assert out["missing"].dtype == np.float32 and out["missing"].shape == (0,)
    assert out["kindless"].dtype == np.int64 and out["kindless"].shape == (0,)
    assert out["missing_bytes"] == []


def test_fixed_len_sequence_feature_in_an_example():
    out = decode(
        {
            "ids": tfr.FixedLenSequenceFeature([2], "int64", allow_missing=True),
            "tags": tfr.FixedLenSequenceFeature([], "bytes", allow_missing=True),
            "missing": tfr.FixedLenSequenceFeature([3], "float32", allow_missing=True),
        }
    )
    assert out["ids"].tolist() == [[0, 1], [2, 3], [4, 5]]
    assert out["tags"].tolist() == [b"x", b"y"]
    assert out["missing"].shape == (0, 3) and out["missing"].dtype == np.float32


def test_spec_construction_checks():
    with pytest.raises(ValueError, match="unsupported dtype"):
        tfr.FixedLenFeature([], "int32")
    with pytest.raises(ValueError, match="shape"):
        tfr.FixedLenFeature([-1], "int64")
    with pytest.raises(ValueError, match="needs 3"):
        tfr.FixedLenFeature([3], "int64", default_value=0)
    with pytest.raises(ValueError, match="not an integer"):
        tfr.FixedLenFeature([], "int64", default_value=1.5)
    # an empty default is no default, as in TF
    assert tfr.FixedLenFeature([0], "int64", default_value=[]).default_value is None
    with pytest.raises(tfr.FeatureError, match="required"):
        decode({"missing": tfr.FixedLenFeature([0], "int64", default_value=[])})
    # a FixedLenSequenceFeature's default is one padding value, as in TF
    assert tfr.FixedLenSequenceFeature([2], "int64", allow_missing=True, default_value=9).default_value == 9
    with pytest.raises(ValueError, match="needs 1"):
        tfr.FixedLenSequenceFeature([2], "int64", allow_missing=True, default_value=[9, 9])

    class FakeTFDType:  # what tf.int64 / tf.string look like to us
        def __init__(self, name):
            self.name = name

    assert tfr.VarLenFeature(FakeTFDType("string")).dtype == "bytes"
    assert tfr.FixedLenFeature(3, FakeTFDType("float32")).shape == (3,)


SEQ = tfr.encode_sequence_example(
    {"length": 3, "kindless": None, "name": b"seq"},
    {
        "tokens": [[1, 2], [3, 4], [5, 6]],
        "ragged": [[1], np.array([], np.int64), None, [2, 3, 4]],
        "words": [[b"a"], [b"b"], [b"c"]],
        "empty": [],
    },
)


def test_sequence_example_with_specs():
    ctx, seq = tfr.decode_sequence_example(
        SEQ,
        {"length": tfr.FixedLenFeature([], "int64"), "name": tfr.VarLenFeature("bytes")},
        {
            "tokens": tfr.FixedLenSequenceFeature([2], "int64"),
            "words": tfr.FixedLenSequenceFeature([], "bytes"),
            "ragged": tfr.VarLenFeature("int64"),
            "empty": tfr.FixedLenSequenceFeature([2], "float32"),
            "missing": tfr.FixedLenSequenceFeature([2], "float32", allow_missing=True),
        },
    )
    assert ctx["length"] == 3 and ctx["name"] == [b"seq"]
    assert seq["tokens"].tolist() == [[1, 2], [3, 4], [5, 6]]
    assert seq["words"].tolist() == [b"a", b"b", b"c"]
    assert [r.tolist() for r in seq["ragged"]] == [[1], [], [], [2, 3, 4]]
    assert seq["empty"].shape == (0, 2) and seq["missing"].shape == (0, 2)


def test_sequence_context_kindless_is_present_with_no_values_as_in_tensorflow():
    ctx, _ = tfr.decode_sequence_example(SEQ, {"kindless": tfr.FixedLenFeature([0], "int64")}, {})
    assert ctx["kindless"].shape == (0,)
    with pytest.raises(tfr.FeatureError, match="found 0"):
        tfr.decode_sequence_example(SEQ, {"kindless": tfr.FixedLenFeature([], "int64", default_value=1)}, {})
    ctx, _ = tfr.decode_sequence_example(SEQ, {"absent": tfr.FixedLenFeature([], "int64", default_value=1)}, {})
    assert ctx["absent"] == 1


@pytest.mark.parametrize(
    ("context", "sequence", "message"),
    [
        ({}, {"missing": tfr.FixedLenSequenceFeature([2], "int64")}, "required feature_list is missing"),
        ({}, {"tokens": tfr.FixedLenSequenceFeature([3], "int64")}, "step 0: expected 3 values"),
        ({}, {"tokens": tfr.FixedLenSequenceFeature([2], "float32")}, "step 0: expected float_list"),
        ({}, {"ragged": tfr.FixedLenSequenceFeature([1], "int64")}, "step 1: expected 1 value"),
        ({}, {"words": tfr.VarLenFeature("int64")}, "step 0: expected int64_list"),
        ({}, {"tokens": tfr.FixedLenFeature([2], "int64")}, "take FixedLenSequenceFeature or VarLenFeature"),
        ({"length": tfr.FixedLenSequenceFeature([], "int64", allow_missing=True)}, {}, "context_features take"),
        ({}, {"tokens": tfr.FixedLenSequenceFeature([2], "int64", default_value=0)}, "takes no default_value"),
    ],
)
def test_sequence_spec_errors(context, sequence, message):
    with pytest.raises(tfr.FeatureError, match=message):
        tfr.decode_sequence_example(SEQ, context, sequence)


def test_errors_pickle_with_their_details():
    import pickle

    err = tfr.FeatureError("k", "expected 2 values, found 1")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is tfr.FeatureError and back.key == "k" and str(back) == str(err)
    err2 = tfr.CorruptRecordError("bad", path="/x.tfrecord", offset=12)
    back2 = pickle.loads(pickle.dumps(err2))
    assert (back2.path, back2.offset, str(back2)) == ("/x.tfrecord", 12, str(err2))
