# `tfrecord-lite stats`: the text report, --json (DatasetStatistics.to_dict), -n / --all, --features,
# --on-error, and the exit statuses: 0 done, 1 bad data, 2 a wrong command line.
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import tfrecord_lite as tfr
from tests._cli import run_cli


def _file(tmp_path, n=300):
    path = str(tmp_path / "a.tfrecord")
    rng = np.random.default_rng(0)
    with tfr.TFRecordWriter(path) as writer:
        for i in range(n):
            writer.write_example({"label": i % 3, "x": rng.standard_normal(2).astype(np.float32), "s": b"v%d" % i})
    return path


def test_text_report(tmp_path):
    proc = run_cli("stats", _file(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "300 records (example)" in proc.stdout
    lines = {line.split()[0]: line for line in proc.stdout.splitlines()[3:] if line.strip()}
    assert {"label", "x", "s"} <= set(lines)
    assert "label: 0 100, 1 100, 2 100" in proc.stdout


def test_json_limits_and_features(tmp_path):
    path = _file(tmp_path)
    proc = run_cli("stats", path, "--json", "-n", "120", "--features", "label,x")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["records"] == 120 and data["complete"] is False
    assert [f["name"] for f in data["features"]] == ["label", "x"]
    assert "--all reads every record" in proc.stderr
    whole = json.loads(run_cli("stats", path, "--json", "--all").stdout)
    assert whole["records"] == 300 and whole["complete"] is True
    assert whole == tfr.statistics(path).to_dict()


def test_exit_statuses(tmp_path):
    assert run_cli("stats", str(tmp_path / "missing.tfrecord")).returncode == 2
    assert run_cli("stats", _file(tmp_path), "-n", "0").returncode == 2
    assert run_cli("stats", _file(tmp_path), "--all", "-n", "5").returncode == 2
    path = _file(tmp_path)
    data = bytearray(Path(path).read_bytes())
    data[len(data) // 2] ^= 0xFF
    Path(path).write_bytes(bytes(data))
    proc = run_cli("stats", path)
    assert proc.returncode == 1 and proc.stderr.startswith("tfrecord-lite: error:")
    skipped = run_cli("stats", path, "--on-error", "skip", "--json")
    assert skipped.returncode == 0 and json.loads(skipped.stdout)["skipped"] == 1
