"""`convert` with SequenceExamples, run as a user runs it: TFRecord → Parquet / Arrow → TFRecord keeps
every feature list (records decode equal to the input with the inferred specs), `schema --spec-json`
feeds `--features`, CSV refuses naming the feature lists, and `--feature-lists` names the columns of
a file that carries no mark."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import tfrecord_lite as tfr
from tests import reference
from tests._cli import run_cli
from tests._records import write_records
from tests.conftest import DATA_DIR

TFX_SEQUENCES = DATA_DIR / "tfx" / "sequence-eval.tfrecord.gz"


def assert_decode_alike(got: Path, want: Path) -> None:
    """Every record of `got` decodes as the one of `want` with the specs inferred from `want`."""
    context, lists = tfr.infer_sequence_features(want)
    pairs = list(zip(tfr.iter_records(got), tfr.iter_records(want), strict=True))
    assert pairs
    for a, b in pairs:
        got_a, got_b = (tfr.decode_sequence_example(r, context, lists) for r in (a, b))
        for x, y in zip(got_a, got_b, strict=True):
            assert x.keys() == y.keys()
            for key in x:
                steps_x, steps_y = (v if isinstance(v, list) else [v] for v in (x[key], y[key]))
                assert all(reference.same_value(p, q) for p, q in zip(steps_x, steps_y, strict=True)), key


@pytest.mark.parametrize("table", ["seq.parquet", "seq.arrow"])
def test_tfx_sequence_examples_round_trip(tmp_path: Path, table: str) -> None:
    assert run_cli("convert", str(TFX_SEQUENCES), table, "-q", cwd=tmp_path).returncode == 0
    if table.endswith(".parquet"):
        field = pq.read_schema(tmp_path / table).field("s")
        assert field.type == pa.large_list(pa.large_binary())  # FixedLenSequenceFeature([], bytes): a bytes a step
        assert field.metadata == {b"tfrecord_lite.section": b"feature_list"}
    assert run_cli("convert", table, "back.tfrecord", "-q", cwd=tmp_path).returncode == 0
    assert_decode_alike(tmp_path / "back.tfrecord", TFX_SEQUENCES)


def test_spec_json_feeds_features_and_csv_refuses(tmp_path: Path) -> None:
    records = [
        tfr.encode_sequence_example({"id": [i]}, {"frames": [np.arange(i % 3, dtype=np.int64)] * (i % 4)})
        for i in range(20)
    ]
    write_records(tmp_path / "seq.tfrecord", records)
    spec = run_cli("schema", "--spec-json", "seq.tfrecord", cwd=tmp_path)
    assert set(json.loads(spec.stdout)) == {"context_features", "sequence_features"}
    (tmp_path / "spec.json").write_text(spec.stdout)
    run_cli("convert", "seq.tfrecord", "seq.parquet", "--features", "spec.json", "-q", cwd=tmp_path)
    run_cli("convert", "seq.parquet", "back.tfrecord", "-q", cwd=tmp_path)
    assert_decode_alike(tmp_path / "back.tfrecord", tmp_path / "seq.tfrecord")
    refused = run_cli("convert", "seq.tfrecord", "seq.csv", cwd=tmp_path)
    assert refused.returncode != 0 and not (tmp_path / "seq.csv").exists()
    assert "'frames'" in refused.stderr and "feature list" in refused.stderr and "Parquet" in refused.stderr


def test_feature_lists_names_unmarked_columns(tmp_path: Path) -> None:
    table = pa.table({"id": [1, 2], "steps": [[[1, 2], [3]], None]})
    pq.write_table(table, tmp_path / "plain.parquet")
    run_cli("convert", "plain.parquet", "seq.tfrecord", "--feature-lists", "steps", "-q", cwd=tmp_path)
    decoded = [reference.decode_sequence_example(r) for r in tfr.iter_records(tmp_path / "seq.tfrecord")]
    steps = [{key: [step.tolist() for step in value] for key, value in lists.items()} for _, lists in decoded]
    assert steps == [{"steps": [[1, 2], [3]]}, {}]
    unknown = run_cli("convert", "plain.parquet", "bad.tfrecord", "--feature-lists", "nope", cwd=tmp_path)
    assert unknown.returncode != 0 and "'nope' is not a column" in unknown.stderr
    assert not (tmp_path / "bad.tfrecord").exists()
    flat = run_cli("convert", "plain.parquet", "flat.tfrecord", "-q", cwd=tmp_path)  # unnamed: an Example, flattened
    assert flat.returncode == 0
    first = next(iter(tfr.iter_records(tmp_path / "flat.tfrecord")))
    assert reference.decode_example(first)["steps"].tolist() == [1, 2, 3]


def test_a_key_both_context_and_feature_list_is_one_error_line(tmp_path: Path) -> None:
    write_records(tmp_path / "clash.tfrecord", [tfr.encode_sequence_example({"x": [1]}, {"x": [[2]]})])
    proc = run_cli("convert", "clash.tfrecord", "clash.parquet", cwd=tmp_path)
    assert proc.returncode != 0 and not (tmp_path / "clash.parquet").exists()
    assert "'x'" in proc.stderr and "both a context feature and a feature list" in proc.stderr
