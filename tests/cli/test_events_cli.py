"""`tfrecord-lite events`: TensorFlow's logdir (tests/data/tensorboard) printed, exported and
filtered as a user runs the command."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from tests._cli import run_cli
from tests.conftest import DATA_DIR

LOGDIR = str(DATA_DIR / "tensorboard" / "logdir")


def test_text_lines_one_per_value_filtered_by_tag() -> None:
    proc = run_cli("events", LOGDIR, "--tags", "loss,v1/h*")
    assert proc.returncode == 0, proc.stderr
    lines = [line.split("\t") for line in proc.stdout.splitlines()]
    assert {line[3] for line in lines} == {"loss", "v1/histogram"}
    assert [line[5] for line in lines if line[0] == "v2"] == [
        "1.0",
        "0.5",
        "0.3333333432674408",
        "0.25",
        "0.20000000298023224",
    ]
    assert all(line[5].startswith("histogram of ") for line in lines if line[4] == "histogram")


def test_csv_and_json_lines() -> None:
    proc = run_cli("events", LOGDIR, "--runs", "v2", "--kinds", "scalar", "--to", "csv")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 10 and {r["tag"] for r in rows} == {"loss", "metrics/accuracy"}
    assert rows[0]["wall_time"].endswith("+00:00")
    proc = run_cli("events", LOGDIR, "--kinds", "hparams", "--to", "json")
    (line,) = [json.loads(x) for x in proc.stdout.splitlines()]
    assert line["value"]["session_start"]["hparams"] == {"learning_rate": 0.01, "optimizer": "adam", "dropout": True}


def test_parquet_wide_per_run(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    pytest.importorskip("pandas")
    out = tmp_path / "scalars.parquet"
    proc = run_cli("events", LOGDIR, "--kinds", "scalar", "--pivot", "--to", "parquet", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(out)
    assert table.column_names == ["run", "step", "wall_time", "loss", "metrics/accuracy", "v1/scalar"]
    assert table.num_rows == 11


def test_usage_and_data_errors_are_one_line(tmp_path: Path) -> None:
    proc = run_cli("events", LOGDIR, "--to", "parquet")
    assert proc.returncode == 2 and "-o OUT.parquet" in proc.stderr
    proc = run_cli("events", LOGDIR, "--kinds", "scalars")
    assert proc.returncode == 1 and "unknown 'scalars'" in proc.stderr
    proc = run_cli("events", str(tmp_path))
    assert proc.returncode == 2 and "no TensorBoard events file" in proc.stderr


def test_head_and_schema_recognise_events() -> None:
    v2 = str(DATA_DIR / "tensorboard" / "logdir" / "v2")
    proc = run_cli("head", "-n", "2", v2)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("(TensorBoard Event)") == 2
    assert '"brain.Event:2"' in proc.stdout and "loss (scalar)  float[1]  1" in proc.stdout
    proc = run_cli("cat", "--json", v2)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {line["type"] for line in lines} == {"event"}
    assert [
        line["features"]["loss (scalar)"]["values"][0] for line in lines if "loss (scalar)" in line["features"]
    ] == [
        1.0,
        0.5,
        0.3333333432674408,
        0.25,
        0.20000000298023224,
    ]
    proc = run_cli("schema", v2)
    assert re.search(r"weights \(histogram\) +float", proc.stdout)


def test_follow_prints_values_as_they_are_written(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests._cli import ROOT
    from tfrecord_lite.events import EventWriter

    writer = EventWriter(tmp_path / "run")
    writer.add_scalar("loss", 1.0, 0)
    writer.flush()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "tfrecord_lite", "events", str(tmp_path), "--follow", "--to", "json"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as proc:
        try:
            assert proc.stdout is not None
            first = json.loads(proc.stdout.readline())
            writer.add_scalar("loss", 0.5, 1)
            writer.flush()
            second = json.loads(proc.stdout.readline())
        finally:
            proc.kill()
            writer.close()
    assert [(first["step"], first["value"]), (second["step"], second["value"])] == [(0, 1.0), (1, 0.5)]
