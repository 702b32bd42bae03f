# Hostile records: groups nested thousands deep, records of very many keys, and runs of
# repeated or empty map entries. Each input is built here; the protobuf runtime is the oracle
# for where nesting stops being accepted.
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests.reference import SOUND_ON_MALFORMED_INPUT
from tests.reference import decode_example as reference_decode
from tfrecord_lite.arrow import decode_arrow


def varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def groups(depth: int, number: int = 3) -> bytes:
    """`depth` groups of field `number`, each inside the last."""
    return varint(number << 3 | 3) * depth + varint(number << 3 | 4) * depth


def in_example(where: str, inner: bytes) -> bytes:
    """An Example with `inner` (unknown fields) placed at one level of its nesting."""
    if where == "example":
        return inner
    if where == "features":
        return field(1, inner)
    if where == "entry":
        return field(1, field(1, field(1, b"a") + inner))
    if where == "feature":
        return field(1, field(1, field(1, b"a") + field(2, inner)))
    return field(1, field(1, field(1, b"a") + field(2, field(3, field(1, b"\x01") + inner))))  # a list


def in_sequence_example(where: str, inner: bytes) -> bytes:
    """A SequenceExample with `inner` placed at one level of its feature lists."""
    if where == "feature_lists":
        return field(2, inner)
    if where == "list_entry":
        return field(2, field(1, field(1, b"a") + inner))
    if where == "feature_list":
        return field(2, field(1, field(1, b"a") + field(2, inner)))
    step = field(3, field(1, b"\x01"))
    if where == "step":
        return field(2, field(1, field(1, b"a") + field(2, field(1, step + inner))))
    return field(2, field(1, field(1, b"a") + field(2, field(1, field(3, field(1, b"\x01") + inner)))))


def raises(decode: Callable[[bytes], object], data: bytes) -> bool:
    try:
        decode(data)
    except Exception:  # the runtime raises its own DecodeError
        return True
    return False


DEPTHS = range(94, 103)  # every level's limit lies in here
EXAMPLE_LEVELS = ["example", "features", "entry", "feature", "list"]
SEQUENCE_LEVELS = ["feature_lists", "list_entry", "feature_list", "step", "step_list"]
oracle = pytest.mark.skipif(not SOUND_ON_MALFORMED_INPUT, reason="protobuf < 4.25 may crash on deep unknown groups")


@oracle
@pytest.mark.parametrize("where", EXAMPLE_LEVELS)
def test_nesting_is_refused_where_the_protobuf_runtime_refuses_it(where: str) -> None:
    for depth in DEPTHS:
        data = in_example(where, groups(depth))
        expected = raises(tfr.Example.FromString, data)
        assert raises(tfr.decode_example, data) == expected, (where, depth)
        assert raises(lambda d: tfr.decode_examples([d], {"a": tfr.VarLenFeature("int64")}), data) == expected


@oracle
@pytest.mark.parametrize("where", SEQUENCE_LEVELS)
def test_sequence_nesting_is_refused_where_the_protobuf_runtime_refuses_it(where: str) -> None:
    for depth in DEPTHS:
        data = in_sequence_example(where, groups(depth))
        expected = raises(tfr.SequenceExample.FromString, data)
        assert raises(tfr.decode_sequence_example, data) == expected, (where, depth)


@pytest.mark.parametrize("where", EXAMPLE_LEVELS + SEQUENCE_LEVELS)
def test_shallow_groups_are_skipped_and_deep_ones_refused(where: str) -> None:
    build = in_example if where in EXAMPLE_LEVELS else in_sequence_example
    decode = tfr.decode_example if where in EXAMPLE_LEVELS else tfr.decode_sequence_example
    assert not raises(decode, build(where, groups(50)))
    with pytest.raises(tfr.DecodeError, match="nested more than 100 deep"):
        decode(build(where, groups(101)))


def test_thousands_of_nested_groups_are_a_decode_error_everywhere(tmp_path) -> None:
    deep = in_example("features", groups(5000))
    messages = []
    for decode in (
        tfr.decode_example,
        tfr.decode_sequence_example,
        lambda d: tfr.decode_examples([tfr.encode_example({"a": [1]}), d], {"a": tfr.VarLenFeature("int64")}),
        lambda d: decode_arrow([d]),
        lambda d: tfr.parse_tensor(groups(5000), "float32"),
    ):
        with pytest.raises(tfr.DecodeError) as caught:
            decode(deep)
        messages.append(str(caught.value))
    assert all("nested more than 100 deep" in m for m in messages), messages


def many_keys(n: int) -> bytes:
    return tfr.encode_example({f"k{i}": [i] for i in range(n)})


def test_a_record_of_many_keys_decodes_without_a_schema() -> None:
    # every key is a column: matching them one by one was quadratic (20k keys took 20 s)
    n = 20_000
    record = many_keys(n)
    table = decode_arrow([record, tfr.encode_example({"k7": [70], "other": [b"x"]})])
    assert table.num_columns == n + 1
    assert table.column("k7").to_pylist() == [[7], [70]]
    assert table.column(f"k{n - 1}").to_pylist() == [[n - 1], None]
    assert table.column("other").to_pylist() == [None, [b"x"]]


def test_many_wanted_keys_match_as_one_by_one_would() -> None:
    # keys of every length, a key given twice (the last wins), prefixes of other keys, empty keys
    rng = np.random.default_rng(7)
    names = sorted({"", "a", "ab", "abc", *(f"key{int(i)}" for i in rng.integers(0, 400, 300))})
    records = []
    for r in range(40):
        chosen = [names[int(i)] for i in rng.choice(len(names), size=int(rng.integers(0, 30)), replace=False)]
        record = b"".join(field(1, field(1, k.encode()) + field(2, field(3, field(1, varint(r))))) for k in chosen)
        if chosen:  # the first key again, with another value: protobuf keeps the last entry
            record += field(1, field(1, chosen[0].encode()) + field(2, field(3, field(1, varint(1000 + r)))))
        records.append(field(1, record))
    spec = {name: tfr.VarLenFeature("int64") for name in names}
    batch = tfr.decode_examples(records, spec)
    for r, record in enumerate(records):
        expected = reference_decode(record)
        for name in names:
            values = batch[name].row(r)
            assert list(values) == (expected[name].tolist() if name in expected else []), (r, name)


@pytest.mark.parametrize("entry", ["repeated", "empty"])
def test_runs_of_repeated_or_empty_entries_decode_as_the_runtime_does(entry: str) -> None:
    one = field(1, b"a") + field(2, field(3, field(1, b"\x05")))
    filler = field(1, one) if entry == "repeated" else b"\x0a\x00"
    record = field(1, filler * 50_000 + field(1, one))
    ordinary = tfr.encode_example({"a": [3]})
    batch = tfr.decode_examples([ordinary, record, ordinary], {"a": tfr.FixedLenFeature([1], "int64")})
    assert batch["a"].tolist() == [[3], reference_decode(record)["a"].tolist(), [3]]
    table = decode_arrow([ordinary, record])
    assert table.column("a").to_pylist() == [[3], [5]]
