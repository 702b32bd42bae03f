"""Which records of a batch carry feature lists: the test that tells a SequenceExample from an
Example, whose bytes a SequenceExample's also parse as (its context read as the features).

Strategy: an Example is one field 1 (its Features); a SequenceExample adds a field 2 (its
FeatureLists), which an Example parser skips as unknown — so a reader that does not look for it
drops the feature lists without a word. One numpy step reads every record's first field: a field 1
that fills the record is an Example (the usual case, decided with no Python work per record), a
first field 2 is a SequenceExample; only the others (several top-level fields, unusual tags) are
walked field by field. A record too damaged to walk counts as no SequenceExample: the decoder that
reads it next reports the damage. Readers that name columns by key also share here why a key may
not be a context feature and a feature list at once (CLASH).
"""

from __future__ import annotations

import numpy as np

from tfrecord_lite._batches.lockstep import delimited_fields
from tfrecord_lite._errors import DecodeError
from tfrecord_lite._example.wire import fields_in, read_varint32

__all__ = ["CLASH", "feature_list_rows", "has_feature_lists"]

# why a key may not be both a context feature and a feature list where columns are named by key
CLASH = (
    "one column cannot hold both (columns are named by key, so that the way back writes the same keys): "
    "rename one, or decode the two apart with decode_sequence_example"
)

_FEATURE_LISTS = 2  # SequenceExample.feature_lists; Example has no field 2


def feature_list_rows(view: memoryview, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """A bool per record view[starts[k]:ends[k]]: does it hold a feature_lists field?"""
    out = np.zeros(len(starts), dtype=bool)
    filled = starts < ends
    if not filled.any():
        return out
    buf = np.frombuffer(view, dtype=np.uint8)
    rows = np.flatnonzero(filled & ~_one_features_field(buf, starts, ends))
    if not rows.size:
        return out
    _, end, ok = delimited_fields(buf, starts[rows], ends[rows], 0x0A)
    example = ok & (end == ends[rows])
    out[rows[buf[starts[rows]] == 0x12]] = True
    for k in rows[~example & ~out[rows]].tolist():
        out[k] = _walk(bytes(view[starts[k] : ends[k]]))
    return out


def _one_features_field(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Records that are exactly one field 1 with a one- or two-byte length (most Examples): the
    bytes after the tag are the canonical varint of the length the record's size leaves."""
    size = ends - starts
    last = len(buf) - 1

    def byte(k: int) -> np.ndarray:
        at: np.ndarray = buf[np.minimum(starts + k, last)].astype(np.int64)
        return at

    one, two = size - 2, size - 3  # the payload's length if its varint has one byte, or two
    second = byte(1)
    short = (one < 0x80) & (second == one)
    wide = (two >= 0x80) & (two < 0x4000) & (second == (two & 0x7F) | 0x80) & (byte(2) == two >> 7)
    whole: np.ndarray = (byte(0) == 0x0A) & (short | wide) & (size > 0)
    return whole


def has_feature_lists(record: bytes) -> bool:
    """Whether one serialized record holds a feature_lists field (the same test, one record)."""
    if not record or (record[0] == 0x0A and _filled(record)):
        return False
    return record[0] == 0x12 or _walk(record)


def _filled(record: bytes) -> bool:
    """Whether the record's first field (a field 1) is all of it."""
    try:
        length, after = read_varint32(record, 1, len(record))
    except DecodeError:
        return False
    return after + length == len(record)


def _walk(record: bytes) -> bool:
    try:
        return any(number == _FEATURE_LISTS and wire == 2 for number, wire, _, _ in fields_in(record, 0, len(record)))
    except DecodeError:
        return False
