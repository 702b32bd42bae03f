"""tfrecord_lite.arrow against tfx-bsl, the decoder it replaces: the schema-less decoders give
equal record batches (RecordBatch.equals) on the TFX corpus and on hypothesis batches, and
raise where tfx-bsl raises. Runs in the tf env (tasks.py installs tfx-bsl there; the `tfx`
marker and TFRECORD_LITE_REQUIRE_TFX=1 make a skip fail the run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytestmark = pytest.mark.tfx
example_coder = pytest.importorskip("tfx_bsl.coders.example_coder")
sequence_example_coder = pytest.importorskip("tfx_bsl.coders.sequence_example_coder")
pa = pytest.importorskip("pyarrow")

import tfrecord_lite as tfr
from tests.adapters.test_arrow import layout_batches, schemaless_batches
from tests.conftest import DATA_DIR
from tfrecord_lite import arrow as tfa

CORPUS = sorted(p for p in (DATA_DIR / "tfx").glob("*.tfrecord*") if not p.name.endswith(".json"))
SEQUENCE_COLUMN = "##SEQUENCE##"


def _is_sequence(path: Path) -> bool:
    return bool(json.loads(Path(f"{path}.json").read_text())["seq"])


def _their_batch(records: list[bytes]) -> Any:
    return example_coder.ExamplesToRecordBatchDecoder().DecodeBatch(records)


def assert_like_tfx_bsl(records: list[bytes]) -> None:
    try:
        want = _their_batch(records)
    except Exception:
        want = None
    if want is None:
        with pytest.raises(tfr.FeatureError):
            tfa.decode_arrow(records)
        return
    got = tfa.decode_arrow(records)
    assert got.schema == want.schema
    assert got.equals(want), (got.to_pydict(), want.to_pydict())


@pytest.mark.parametrize("path", [p for p in CORPUS if not _is_sequence(p)], ids=lambda p: p.name)
def test_corpus_examples(path: Path):
    records = list(tfr.iter_records(str(path)))
    for start in range(0, len(records), 100):
        assert_like_tfx_bsl(records[start : start + 100])
    assert_like_tfx_bsl(records)


@given(st.one_of(schemaless_batches(), layout_batches()))
def test_hypothesis_batches(records):
    assert_like_tfx_bsl(records)


def test_a_key_that_changes_kind_is_an_error_in_both():
    records = [tfr.encode_example({"x": [1]}), tfr.encode_example({"x": [b"a"]})]
    with pytest.raises(Exception, match=r"(?i)type"):  # tfx-bsl's own error type
        _their_batch(records)
    with pytest.raises(tfr.FeatureError):
        tfa.decode_arrow(records)


# ----------------------------------------------------------------- SequenceExamples


def _their_sequences(records: list[bytes]) -> Any:
    return sequence_example_coder.SequenceExamplesToRecordBatchDecoder(SEQUENCE_COLUMN).DecodeBatch(records)


def assert_sequences_like_tfx_bsl(records: list[bytes]) -> None:
    """Context columns equal tfx-bsl's; each feature list equals its field of tfx-bsl's struct column."""
    want = _their_sequences(records)
    got = tfa.decode_sequence_arrow(records)
    expected = [name for name in want.schema.names if name != SEQUENCE_COLUMN]
    if SEQUENCE_COLUMN in want.schema.names:
        lists = want.column(SEQUENCE_COLUMN)
        expected += [field.name for field in lists.type]
    assert sorted(got.schema.names) == sorted(expected)
    for name in want.schema.names:
        if name != SEQUENCE_COLUMN:
            assert got.column(name).equals(want.column(name)), name
    if SEQUENCE_COLUMN in want.schema.names:
        for i, field in enumerate(lists.type):
            theirs = lists.field(i)
            assert got.schema.field(field.name).type == field.type, field.name
            assert got.column(field.name).to_pylist() == theirs.to_pylist(), field.name


@pytest.mark.parametrize("path", [p for p in CORPUS if _is_sequence(p)], ids=lambda p: p.name)
def test_corpus_sequence_examples(path: Path):
    records = list(tfr.iter_records(str(path)))
    for start in range(0, len(records), 100):
        assert_sequences_like_tfx_bsl(records[start : start + 100])


@st.composite
def sequence_batches(draw: Any) -> list[bytes]:
    # int64 values stay within 32 bits: tfx-bsl's sequence decoder truncates some wider ones
    ints = st.lists(st.integers(-(2**31), 2**31 - 1), max_size=3).map(lambda v: np.array(v, np.int64))
    floats = st.lists(st.floats(width=32, allow_nan=False), max_size=3).map(lambda v: np.array(v, np.float32))
    words = st.lists(st.binary(max_size=4), max_size=3).map(lambda v: np.array(v, dtype=object))
    kinds = draw(st.dictionaries(st.sampled_from(["c1", "c2"]), st.sampled_from([ints, floats, words]), max_size=2))
    list_kinds = draw(
        st.dictionaries(st.sampled_from(["s1", "s2"]), st.sampled_from([ints, floats, words]), min_size=1, max_size=2)
    )
    records = []
    for _ in range(draw(st.integers(1, 8))):
        context = {k: draw(v) for k, v in kinds.items() if draw(st.booleans())}
        lists = {k: draw(st.lists(v, min_size=1, max_size=3)) for k, v in list_kinds.items() if draw(st.booleans())}
        records.append(tfr.encode_sequence_example(context, lists))
    return records


@given(sequence_batches())
def test_hypothesis_sequence_batches(records):
    assert_sequences_like_tfx_bsl(records)


def test_sequence_int64_beyond_32_bits_where_tfx_bsl_truncates():
    """tfx-bsl 1.21's sequence decoder keeps only the low 32 bits of feature-list int64 values
    (docs/arrow.md says so); decode_sequence_arrow keeps all 64, as decode_sequence_example."""
    values = [2**40, -(2**40), 2**63 - 1]
    records = [tfr.encode_sequence_example({}, {"fl": [values]})]
    theirs = _their_sequences(records).column(SEQUENCE_COLUMN).field(0).to_pylist()
    assert theirs == [[[int(np.int32(np.int64(v).astype(np.int32))) for v in values]]]
    assert tfa.decode_sequence_arrow(records).column("fl").to_pylist() == [[values]]
    assert tfr.decode_sequence_example(records[0])[1]["fl"][0].tolist() == values
