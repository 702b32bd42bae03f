"""Which records carry feature lists: the batch probe (feature_list_rows) and the one-record test
(has_feature_lists) agree with the protobuf runtime's SequenceExample parser on canonical records,
hand-made layouts (feature lists first, split fields, unknown fields) and damaged bytes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests.example.test_codec import entry, ld, varint
from tfrecord_lite._batches.flat import spans_of
from tfrecord_lite._batches.sequence_probe import feature_list_rows, has_feature_lists

INT_FEATURE = ld(3, ld(1, varint(7)))
FEATURE_LISTS = ld(2, ld(1, ld(1, b"s") + ld(2, ld(1, INT_FEATURE))))
CONTEXT = ld(1, entry(b"c", INT_FEATURE))

CASES = {
    b"": False,
    tfr.encode_example({"a": [1]}): False,
    tfr.encode_sequence_example({"a": [1]}, {}): True,  # an empty feature_lists field is one
    tfr.encode_sequence_example({}, {"s": [[1]]}): True,
    FEATURE_LISTS + CONTEXT: True,  # feature lists first
    CONTEXT + CONTEXT: False,  # a split Features field: still an Example
    CONTEXT + ld(5, b"x") + FEATURE_LISTS: True,  # an unknown field between
    CONTEXT + varint(3 << 3) + varint(1): False,  # an unknown varint field
    b"\x0a\x05ab": False,  # damaged: the decoder reports it
    b"\x0a": False,
}


def test_cases_in_one_batch_and_one_by_one() -> None:
    records = list(CASES)
    assert feature_list_rows(*spans_of(records)[:3]).tolist() == list(CASES.values())
    assert [has_feature_lists(r) for r in records] == list(CASES.values())


def _protobuf_says(record: bytes) -> bool:
    return tfr.SequenceExample.FromString(record).HasField("feature_lists")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=2))))
def test_generated_records_agree_with_protobuf(shapes: list[tuple[bool, dict[str, int]]]) -> None:
    records = []
    for sequence, lists in shapes:
        steps = {key: [np.arange(n, dtype=np.int64)] * n for key, n in lists.items()}
        records.append(tfr.encode_sequence_example({"c": [1]}, steps) if sequence else tfr.encode_example({"c": [1]}))
    found = feature_list_rows(*spans_of(records)[:3]).tolist() if records else []
    assert found == [_protobuf_says(r) for r in records] == [has_feature_lists(r) for r in records]
