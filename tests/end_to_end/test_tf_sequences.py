"""TensorFlow as the oracle for SequenceExamples through Parquet: a file written by TF's own
tf.io.TFRecordWriter (and the TFX-written file of tests/data) converted to Parquet and back —
by `convert` with its inferred specs, and by read_arrow / write_arrow without a spec — holds
records that tf.io.parse_single_sequence_example parses exactly as it parses the originals."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
pq = pytest.importorskip("pyarrow.parquet")

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests.conftest import DATA_DIR
from tfrecord_lite import arrow as tfa

pytestmark = pytest.mark.tf

T = tf.train
TF_DTYPES = {"int64": tf.int64, "float32": tf.float32, "bytes": tf.string}


def feature(value: Any) -> Any:
    if value is None:
        return T.Feature()
    if isinstance(value, list) and (not value or isinstance(value[0], bytes)):
        return T.Feature(bytes_list=T.BytesList(value=value))
    array = np.asarray(value)
    if array.dtype.kind == "f":
        return T.Feature(float_list=T.FloatList(value=array.tolist()))
    return T.Feature(int64_list=T.Int64List(value=array.tolist()))


def tf_record(i: int) -> bytes:
    """SequenceExamples built with TF's protos: feature lists of varying steps, some absent, one
    empty, an Example-like record with no feature lists."""
    context = {"id": feature([i]), "name": feature([f"r{i}".encode()])}
    if i % 7 == 3:
        return T.SequenceExample(context=T.Features(feature=context)).SerializeToString()  # type: ignore[no-any-return]
    lists = {
        "tokens": T.FeatureList(feature=[feature([i + k] * (k + 1)) for k in range(i % 4)]),
        "xy": T.FeatureList(feature=[feature([i / 2, -k / 4]) for k in range(i % 3)]),
    }
    if i % 5 == 0:
        lists["words"] = T.FeatureList(feature=[feature([b"w%d" % k]) for k in range(i % 6)])
    example = T.SequenceExample(context=T.Features(feature=context), feature_lists=T.FeatureLists(feature_list=lists))
    return example.SerializeToString()  # type: ignore[no-any-return]


def tf_specs(specs: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, spec in specs.items():
        dtype = TF_DTYPES[spec.dtype]
        if isinstance(spec, tfr.VarLenFeature):
            out[key] = tf.io.VarLenFeature(dtype)
        elif isinstance(spec, tfr.FixedLenSequenceFeature):
            out[key] = tf.io.FixedLenSequenceFeature(spec.shape, dtype, allow_missing=spec.allow_missing)
        else:
            out[key] = tf.io.FixedLenFeature(spec.shape, dtype)
    return out


def parsed(record: bytes, context: dict[str, Any], lists: dict[str, Any]) -> list[tuple[str, Any]]:
    ctx, seq = tf.io.parse_single_sequence_example(record, context_features=context, sequence_features=lists)
    out = []
    for key, value in sorted({**ctx, **{f"list:{k}": v for k, v in seq.items()}}.items()):
        if isinstance(value, tf.SparseTensor):
            out.append(
                (
                    key,
                    (value.indices.numpy().tolist(), value.values.numpy().tolist(), value.dense_shape.numpy().tolist()),
                )
            )
        else:
            out.append((key, (value.shape.as_list(), value.numpy().tolist())))
    return out


def assert_tf_parses_alike(got: Path, want: Path, every: int = 1) -> None:
    """The records of `got` parse as those of `want` (every `every`-th one) with the specs inferred
    from `want`."""
    context, lists = tfr.infer_sequence_features(want)
    assert lists, "the file has feature lists"
    tf_context, tf_lists = tf_specs(context), tf_specs(lists)
    originals = [bytes(r.numpy()) for r in tf.data.TFRecordDataset(str(want), compression_type=_compression(want))]
    back = [bytes(r.numpy()) for r in tf.data.TFRecordDataset(str(got))]
    assert len(back) == len(originals)
    for a, b in zip(originals[::every], back[::every], strict=True):
        assert parsed(a, tf_context, tf_lists) == parsed(b, tf_context, tf_lists)


def _compression(path: Path) -> str:
    return "GZIP" if path.suffix == ".gz" else ""


@pytest.fixture
def tf_written(tmp_path: Path) -> Path:
    path = tmp_path / "tf.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(60):
            writer.write(tf_record(i))
    return path


def test_convert_to_parquet_and_back_parses_alike_in_tensorflow(tf_written: Path, tmp_path: Path) -> None:
    assert run_cli("convert", str(tf_written), "seq.parquet", "-q", cwd=tmp_path).returncode == 0
    assert run_cli("convert", "seq.parquet", "back.tfrecord", "-q", cwd=tmp_path).returncode == 0
    assert_tf_parses_alike(tmp_path / "back.tfrecord", tf_written)


def test_read_arrow_without_a_spec_and_back_parses_alike(tf_written: Path, tmp_path: Path) -> None:
    table = tfa.read_arrow(tf_written)
    assert {"tokens", "xy", "words"} <= set(table.column_names)
    pq.write_table(table, tmp_path / "seq.parquet")
    tfa.write_arrow(pq.read_table(tmp_path / "seq.parquet"), tmp_path / "back.tfrecord")
    assert_tf_parses_alike(tmp_path / "back.tfrecord", tf_written)


def test_tfx_written_file_parses_alike_after_convert(tmp_path: Path) -> None:
    source = DATA_DIR / "tfx" / "sequence-eval.tfrecord.gz"
    run_cli("convert", str(source), "seq.parquet", "-q", cwd=tmp_path)
    run_cli("convert", "seq.parquet", "back.tfrecord", "-q", cwd=tmp_path)
    assert_tf_parses_alike(tmp_path / "back.tfrecord", source, every=15)  # 300 of its 4500 records
