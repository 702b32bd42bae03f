# Keys and file names holding terminal escape sequences are printed escaped by `head`, `cat` and
# `schema`, as bytes values already were: nothing a file holds reaches the terminal raw.
from __future__ import annotations

from pathlib import Path

import tfrecord_lite as tfr
from tests._cli import run_cli

CLEAR = "\x1b[2J\x1b[31m"  # clear the screen, then red
BIDI = "\u202e"  # right-to-left override: shows text reversed


def test_escape_sequences_in_keys_and_names_are_shown_escaped(tmp_path: Path) -> None:
    path = tmp_path / f"shard{CLEAR}.tfrecord"
    with tfr.TFRecordWriter(str(path)) as w:
        w.write(tfr.encode_example({f"{CLEAR}key": [1], f"a{BIDI}b": [b"v"], "plain": [2.5], '"quoted"': [3]}))
        w.write(tfr.encode_sequence_example({"c": [1]}, {f"steps{CLEAR}": [[1], [2]]}))
    for command in ("head", "cat", "schema"):
        proc = run_cli(command, str(path))
        assert proc.returncode == 0, proc.stderr
        shown = proc.stdout
        assert "\x1b" not in shown and BIDI not in shown, (command, shown)
        assert '"\\u001b[2J\\u001b[31mkey"' in shown and '"a\\u202eb"' in shown and "plain" in shown
        assert '"\\"quoted\\""' in shown  # a key that starts with a quote cannot pass for an escaped one
        assert '"steps\\u001b[2J\\u001b[31m' in shown
    assert "shard\\u001b[2J" in run_cli("head", str(path)).stdout


def test_stats_verify_count_and_damage_reports_show_names_escaped(tmp_path: Path) -> None:
    good = tmp_path / f"good{CLEAR}.tfrecord"
    with tfr.TFRecordWriter(str(good)) as w:
        for i in range(3):
            w.write(tfr.encode_example({f"{CLEAR}key": [i], "label": [i % 2]}))
    cut = tmp_path / f"cut{BIDI}.tfrecord"
    cut.write_bytes(good.read_bytes()[:-5])

    stats = run_cli("stats", str(good))
    assert stats.returncode == 0, stats.stderr
    assert "\x1b" not in stats.stdout and '"\\u001b[2J\\u001b[31mkey"' in stats.stdout

    for args in (("count", "--per-file"), ("verify",), ("head",)):
        proc = run_cli(*args, str(good), str(cut))
        assert proc.returncode == 1, (args, proc.stderr)
        shown = proc.stdout + proc.stderr
        assert "\x1b" not in shown and BIDI not in shown, (args, shown)
        assert "cut\\u202e.tfrecord" in shown, (args, shown)
