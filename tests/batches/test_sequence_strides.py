"""decode_sequence_examples' strided lists (steps of one encoded size, found with no walk) and
their fallbacks to the walk: which lists sequence_steps.strided_lists takes, and batches mixing
strided lists, lists whose steps vary, and malformed steps inside a list that looks strided,
each equal to decode_sequence_example record by record (or raising its error)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests.batches.test_sequence_batches import assert_like_stacked
from tests.example.test_codec import ld, varint
from tfrecord_lite._batches.columnar import assembly_for
from tfrecord_lite._batches.sequence_steps import strided_lists
from tfrecord_lite._batches.sequences import checked_sequence_specs, decode_sequence_records


def floats(*values: float) -> bytes:
    return ld(2, ld(1, struct.pack(f"<{len(values)}f", *values)))


def ints(*values: int) -> bytes:
    return ld(3, ld(1, b"".join(map(varint, values))))


def feature_list(*steps: bytes) -> bytes:
    return b"".join(ld(1, step) for step in steps)


def sequence_example(**lists: bytes) -> bytes:
    return ld(2, b"".join(ld(1, ld(1, key.encode()) + ld(2, value)) for key, value in lists.items()))


def strided(payload: bytes) -> tuple[int, int, int, int]:
    """(stride, steps, values a step, bytes a value) that strided_lists finds for one list."""
    buf = np.frombuffer(payload + bytes(64), dtype=np.uint8)  # the batch's padding
    found = strided_lists(buf, np.array([0]), np.array([len(payload)]))
    return int(found.stride[0]), int(found.steps[0]), int(found.per_step[0]), int(found.width[0])


EMBEDDING = feature_list(floats(1, 2, 3), floats(4, 5, 6), floats(-1, 0.5, 1e30))


@pytest.mark.parametrize(
    ("payload", "want"),
    [
        (EMBEDDING, (18, 3, 3, 4)),
        (feature_list(ints(5), ints(127), ints(0)), (7, 3, 1, 1)),
        (feature_list(ints(300), ints(16383)), (8, 2, 1, 2)),
        (feature_list(ints(1, 2, 3), ints(4, 5, 6)), (9, 2, 3, 1)),
        (feature_list(floats(1.0)), (10, 1, 1, 4)),
    ],
)
def test_lists_of_steps_of_one_size_are_strided(payload, want):
    assert strided(payload) == want


@pytest.mark.parametrize(
    "payload",
    [
        feature_list(floats(1, 2), floats(3)),  # steps of two sizes
        feature_list(ints(5), ints(300)),  # varints of two widths
        feature_list(ints(1), floats()),  # an empty packed run
        feature_list(floats(1.0), ints(1, 2, 3, 4)),  # one size, two kinds
        feature_list(floats(*range(40))),  # a step of 128 bytes or more
        feature_list(ints(-1)),  # a varint wider than a word
        feature_list(ld(1, ld(1, b"abcd"))),  # bytes
        feature_list(floats(1.0), floats(2.0))[:-1],  # the last step cut short
        feature_list(floats(1.0)) + b"\x12\x00",  # a field after the steps
        feature_list(floats(1.0), ld(2, b"\x08\x00" + struct.pack("<f", 2))),  # a step of one size, not packed
        feature_list(floats(1.0, 2.0), ld(2, ld(1, struct.pack("<f", 3)) + b"\x0d\x00\x00\x00")),
    ],
)
def test_lists_that_do_not_fit_are_walked(payload):
    assert strided(payload)[0] == 0


FIXED = {
    "embedding": tfr.FixedLenSequenceFeature([3], "float32"),
    "item": tfr.FixedLenSequenceFeature([], "int64"),
    "pair": tfr.FixedLenSequenceFeature([2], "int64", allow_missing=True),
}
VAR = {
    "embedding": tfr.VarLenFeature("float32"),
    "item": tfr.VarLenFeature("int64"),
    "pair": tfr.VarLenFeature("int64"),
}


def test_a_batch_mixing_strided_and_walked_lists_decodes_like_single_records():
    records = [
        sequence_example(embedding=EMBEDDING, item=feature_list(ints(1), ints(2), ints(3))),
        sequence_example(embedding=feature_list(floats(7, 8, 9)), item=feature_list(ints(5), ints(300), ints(1 << 40))),
        sequence_example(item=feature_list(), embedding=feature_list(), pair=feature_list(ints(1, 2), ints(3, 4))),
        sequence_example(embedding=EMBEDDING, item=feature_list(ints(999), ints(1000), ints(70000))),
        sequence_example(embedding=EMBEDDING, item=feature_list(ints(4)), pair=feature_list(ints(1, 300), ints(2, 3))),
        sequence_example(embedding=EMBEDDING, item=feature_list(ints(8), ints(9)), other=feature_list(ints(1, 2))),
    ]
    for spec in (FIXED, VAR, {"item": FIXED["item"]}, {"pair": VAR["pair"]}):
        assert_like_stacked(records, {}, spec, fast=True)


@pytest.mark.parametrize(
    "embedding",
    [
        feature_list(floats(1, 2, 3), ints(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)),  # an int64 step of the same size
        feature_list(floats(1, 2, 3), floats(4, 5, 6))[:-2],  # the last step cut short
        feature_list(floats(1, 2, 3), floats(4, 5)),  # a step one value short
        feature_list(floats(1, 2, 3), floats(4, 5, 6)) + b"\x0a\x00",  # an empty step after
        feature_list(floats(1, 2, 3), b"\x12\x0e\x0a\x0c" + struct.pack("<3f", 4, 5, 6) + b"\x0a\x00"),
    ],
)
def test_malformed_steps_in_a_strided_looking_list_take_the_walk(embedding):
    good = sequence_example(embedding=EMBEDDING, item=feature_list(ints(1), ints(2), ints(3)))
    records = [good, sequence_example(embedding=embedding, item=feature_list(ints(1), ints(2))), good]
    assert_like_stacked(records, {}, {"embedding": FIXED["embedding"]})
    assert_like_stacked(records, {}, {"embedding": VAR["embedding"]})
    assert_like_stacked(records, {}, {"item": FIXED["item"]})  # the list is checked, though not asked for


def test_varints_of_another_width_in_a_strided_list_send_the_record_to_the_single_record_decoder():
    pairs = feature_list(ints(1, 2), ints(300))  # one step size: 2 values of 1 byte, then 1 of 2 bytes
    assert strided(pairs)[:2] == (8, 2)  # strided_values finds it out
    records = [sequence_example(pair=feature_list(ints(1, 2))), sequence_example(pair=pairs)]
    specs = checked_sequence_specs({"pair": VAR["pair"]})
    assert decode_sequence_records(records, {}, specs, assembly_for(True, specs))[1] == [1]
    assert_like_stacked(records, {}, specs)
    assert_like_stacked(records, {}, {"pair": FIXED["pair"]})  # raises as decode_sequence_example does
    assert_like_stacked(records[:1] * 2, {}, {"pair": FIXED["pair"]}, fast=True)


@pytest.mark.parametrize("spec", [{}, {"item": FIXED["item"]}, {"item": VAR["item"]}])
def test_a_varint_cut_short_in_a_strided_list_is_found_asked_for_or_not(spec):
    cut = feature_list(ints(5), b"\x1a\x03\x0a\x01\x80", ints(6))  # the second id's last byte goes on
    assert strided(cut)[0] == 0
    records = [sequence_example(embedding=EMBEDDING, item=feature_list(ints(1))), sequence_example(item=cut)]
    assert_like_stacked(records, {}, {"embedding": VAR["embedding"], **spec})


def test_a_strided_list_of_the_wrong_kind_raises_the_single_record_error():
    records = [
        sequence_example(embedding=EMBEDDING, item=feature_list(ints(1), ints(2), ints(3))),
        sequence_example(embedding=feature_list(ints(1, 2, 3), ints(4, 5, 6)), item=feature_list(ints(1))),
    ]
    assert_like_stacked(records, {}, FIXED)
    assert_like_stacked(records, {}, VAR)
    assert_like_stacked(records, {}, {"item": tfr.FixedLenSequenceFeature([], "float32")})


widths = st.sampled_from([0, 1, 127, 128, 300, 16383, 16384, 1 << 21, 1 << 40, -1])


@st.composite
def lists_of_steps(draw: st.DrawFn) -> bytes:
    """A feature list whose steps mostly have one size: floats of one count or ints of one
    width, with now and then a step of another size or kind."""
    steps = draw(st.integers(0, 6))
    count = draw(st.integers(1, 4))
    if draw(st.booleans()):
        return feature_list(*(floats(*draw(st.lists(st.floats(width=32), min_size=count, max_size=count)))
                              if draw(st.integers(0, 9)) else floats(1.0) for _ in range(steps)))  # fmt: skip
    value = draw(widths)
    return feature_list(
        *(ints(*[value] * count) if draw(st.integers(0, 9)) else ints(draw(widths)) for _ in range(steps))
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(lists_of_steps(), lists_of_steps()), min_size=1, max_size=5))
def test_strided_and_walked_lists_decode_like_single_records(rows):
    records = [sequence_example(a=a, b=b) for a, b in rows]
    var = {"a": tfr.VarLenFeature("float32"), "b": tfr.VarLenFeature("int64")}
    assert_like_stacked(records, {}, var)
    assert_like_stacked(records, {}, {"a": tfr.VarLenFeature("int64"), "b": tfr.VarLenFeature("float32")})
    assert_like_stacked(
        records, {}, {k: tfr.FixedLenSequenceFeature([2], s.dtype, allow_missing=True) for k, s in var.items()}
    )
