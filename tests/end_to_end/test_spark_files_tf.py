# What Spark writes through tfrecord_lite.spark, read by TensorFlow: tests/data/spark/ holds the
# parts Spark wrote from the DataFrames of tests/_spark_frames.py (tests/spark/make_files.py, in the
# engines environment, where tests/spark/test_spark.py checks that Spark still writes exactly these
# records). This environment has TensorFlow and no Spark: TensorFlow's parsers must give back the
# DataFrame's rows.
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tests._spark_frames import BYTE_ROWS, SEQUENCE_DDL, SEQUENCE_ROWS, TYPES_DDL, TYPES_ROWS

pytestmark = pytest.mark.tf
DATA = Path(__file__).resolve().parents[1] / "data" / "spark"


def columns(ddl: str) -> list[tuple[str, str]]:
    return [(name, kind) for name, kind in (column.strip().split(" ", 1) for column in ddl.split(", "))]


def tf_dtype(kind: str) -> Any:
    leaf = kind.replace("array<", "").rstrip(">")
    return {"string": tf.string, "binary": tf.string, "float": tf.float32, "double": tf.float32}.get(leaf, tf.int64)


def as_python(value: Any, kind: str) -> Any:
    """A DataFrame value as TensorFlow's parser gives it back (a list of numpy scalars)."""
    values = value if isinstance(value, list) else [value]
    if "string" in kind:
        return [v.encode() for v in values]
    if "boolean" in kind:
        return [int(v) for v in values]
    if "float" in kind or "double" in kind:
        return [np.float32(v) for v in values]
    return values


def records(name: str) -> list[bytes]:
    return [r.numpy() for r in tf.data.TFRecordDataset(str(DATA / name))]


def test_tensorflow_parses_the_examples_spark_wrote() -> None:
    spec = {name: tf.io.VarLenFeature(tf_dtype(kind)) for name, kind in columns(TYPES_DDL)}
    found = records("types.tfrecord")
    assert len(found) == len(TYPES_ROWS)
    for record, row in zip(found, TYPES_ROWS, strict=True):
        parsed = tf.io.parse_single_example(record, spec)
        example = tf.train.Example.FromString(record)
        for (name, kind), value in zip(columns(TYPES_DDL), row, strict=True):
            assert (name in example.features.feature) == (value is not None), name
            got = tf.sparse.to_dense(parsed[name]).numpy().tolist()
            assert got == ([] if value is None else as_python(value, kind)), name


def test_tensorflow_parses_the_sequence_examples_spark_wrote() -> None:
    (_, _), (label, _), (tokens, _), (frames, _) = columns(SEQUENCE_DDL)
    context = {"id": tf.io.FixedLenFeature([], tf.int64), label: tf.io.VarLenFeature(tf.string)}
    lists = {tokens: tf.io.RaggedFeature(tf.int64), frames: tf.io.RaggedFeature(tf.float32)}
    found = records("sequence.tfrecord")
    assert len(found) == len(SEQUENCE_ROWS)
    for record, (ident, text, steps, frame_steps) in zip(found, SEQUENCE_ROWS, strict=True):
        ctx, seq = tf.io.parse_single_sequence_example(record, context, lists)
        assert int(ctx["id"]) == ident
        assert tf.sparse.to_dense(ctx[label]).numpy().tolist() == ([] if text is None else [text.encode()])
        assert seq[tokens].to_list() == (steps or [])
        assert seq[frames].to_list() == [[np.float32(v) for v in step] for step in frame_steps or []]


def test_tensorflow_reads_the_raw_records_spark_wrote() -> None:
    assert records("bytes.tfrecord") == [row[0] for row in BYTE_ROWS]
