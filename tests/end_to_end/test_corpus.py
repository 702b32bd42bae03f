# Real TensorFlow-written files (tests/data/tfx, see PROVENANCE.md) against
# TensorFlow's own decoding of them (FILE.json oracles), without TensorFlow.
#
# Every feature of every record is reduced to (kind, count, digest of the
# values) exactly as the oracle was made, through two independent paths: our
# codec (decode_example / decode_sequence_example) and the protobuf classes.
from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr

CORPUS = Path(__file__).resolve().parents[1] / "data" / "tfx"
FILES = sorted(p.name[: -len(".json")] for p in CORPUS.glob("*.json"))
Summary = dict[str, Any]


def _summary(kind: str | None, values: Iterable[Any]) -> Summary:
    """A feature as the oracle states it: kind, number of values, digest of the values."""
    if kind is None:
        return {"kind": None}
    digest = hashlib.sha256(kind.encode())
    if kind == "float_list":
        packed = np.asarray(values, dtype="<f4")
        n = packed.size
        digest.update(packed.tobytes())
    elif kind == "int64_list":
        packed = np.asarray(values, dtype="<i8")
        n = packed.size
        digest.update(packed.tobytes())
    else:
        n = 0
        for value in values:
            digest.update(struct.pack("<Q", len(value)) + value)
            n += 1
    return {"kind": kind, "n": n, "digest": digest.hexdigest()[:32]}


def _summary_of_decoded(value: Any) -> Summary:
    """Summary of one value as decode_example returns it (no spec)."""
    if value is None:
        return _summary(None, ())
    if isinstance(value, list):
        assert all(isinstance(v, bytes) for v in value)
        return _summary("bytes_list", value)
    assert isinstance(value, np.ndarray) and value.ndim == 1
    kind = {np.dtype(np.int64): "int64_list", np.dtype(np.float32): "float_list"}[value.dtype]
    return _summary(kind, value)


def _summary_of_proto(feature: Any) -> Summary:
    """Summary of one protobuf Feature message."""
    kind = feature.WhichOneof("kind")
    return _summary(kind, getattr(feature, kind).value if kind else ())


def _codec_view(record: bytes, seq: bool) -> dict[str, Any]:
    if not seq:
        return {"features": {k: _summary_of_decoded(v) for k, v in tfr.decode_example(record).items()}}
    context, feature_lists = tfr.decode_sequence_example(record)
    return {
        "context": {k: _summary_of_decoded(v) for k, v in context.items()},
        "feature_lists": {k: [_summary_of_decoded(step) for step in steps] for k, steps in feature_lists.items()},
    }


def _proto_features(features: Any) -> dict[str, Summary]:
    return {k: _summary_of_proto(f) for k, f in features.feature.items()}


def _proto_view(record: bytes, seq: bool) -> dict[str, Any]:
    if not seq:
        return {"features": _proto_features(tfr.Example.FromString(record).features)}
    message = tfr.SequenceExample.FromString(record)
    return {
        "context": _proto_features(message.context),
        "feature_lists": {
            k: [_summary_of_proto(step) for step in fl.feature] for k, fl in message.feature_lists.feature_list.items()
        },
    }


def _oracle(name: str) -> dict[str, Any]:
    with open(CORPUS / f"{name}.json", encoding="utf-8") as f:
        return json.load(f)  # type: ignore[no-any-return]


def _check(name: str, records: Sequence[bytes], expected: Sequence[Mapping[str, Any]], view: Any, seq: bool) -> None:
    assert len(records) == len(expected), f"{name}: {len(records)} records, TensorFlow read {len(expected)}"
    for index, (record, want) in enumerate(zip(records, expected, strict=False)):
        got = view(record, seq)
        assert got == want, f"{name} record {index} differs from TensorFlow's decoding"


def test_corpus_is_complete() -> None:
    assert FILES == [
        "mnist.tfrecord",
        "next-page.tfrecord.gz",
        "penguin-eval.tfrecord.gz",
        "penguin-train.tfrecord.gz",
        "sequence-eval.tfrecord.gz",
        "taxi-eval-00000-of-00012.tfrecord.gz",
    ]
    assert (CORPUS / "PROVENANCE.md").is_file() and (CORPUS / "LICENSE").is_file()


@pytest.mark.parametrize("name", FILES)
def test_codec_matches_tensorflow(name: str) -> None:
    oracle = _oracle(name)
    records = list(tfr.iter_records(CORPUS / name))  # compression detected from the content
    _check(name, records, oracle["records"], _codec_view, oracle["seq"])


@pytest.mark.parametrize("name", FILES)
def test_protobuf_classes_match_tensorflow(name: str) -> None:
    oracle = _oracle(name)
    compression = (oracle["compression"] or "").lower()
    with open(CORPUS / name, "rb") as f:  # a file object and the stated compression, this time
        records = list(tfr.iter_records(f, compression=compression))
    _check(name, records, oracle["records"], _proto_view, oracle["seq"])


def test_kindless_features_are_checked() -> None:
    # The taxi and sequence files are full of Features with no kind: make sure the oracle has them,
    # so that the None path of the decoder is really exercised above.
    taxi = _oracle("taxi-eval-00000-of-00012.tfrecord.gz")["records"]
    assert any(f == {"kind": None} for r in taxi for f in r["features"].values())
    seq = _oracle("sequence-eval.tfrecord.gz")["records"]
    assert any(f == {"kind": None} for r in seq for f in r["context"].values())
