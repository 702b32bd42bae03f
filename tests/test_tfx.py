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
pa = pytest.importorskip("pyarrow")

import tfrecord_lite as tfr
from tests.conftest import DATA_DIR
from tests.test_arrow import schemaless_batches
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


@given(schemaless_batches())
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
    decoder = example_coder.SequenceExamplesToRecordBatchDecoder(SEQUENCE_COLUMN)
    return decoder.DecodeBatch(records)


def assert_sequences_like_tfx_bsl(records: list[bytes]) -> None:
    """Context columns equal tfx-bsl's; each feature list equals its field of tfx-bsl's struct column."""
    want = _their_sequences(records)
    got = tfa.decode_sequence_arrow(records)
    for name in want.schema.names:
        if name == SEQUENCE_COLUMN:
            continue
        assert got.column(name).equals(want.column(name)), name
    if SEQUENCE_COLUMN not in want.schema.names:
        return
    lists = want.column(SEQUENCE_COLUMN)
    for i, field in enumerate(lists.type):
        theirs = lists.field(i)
        ours = got.column(field.name)
        if theirs.type == pa.null():
            assert ours.null_count == len(ours)
            continue
        # tfx-bsl nulls the list of a record whose SequenceExample has no feature_lists at all
        assert (
            ours.to_pylist()
            == [
                None if (t is None and o is not None and not o) else o
                for o, t in zip(ours.to_pylist(), theirs.to_pylist(), strict=True)
            ]
            or ours.to_pylist() == theirs.to_pylist()
        )
        assert [o for o in ours.to_pylist() if o] == [t for t in theirs.to_pylist() if t], field.name


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
