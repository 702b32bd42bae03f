# File names holding terminal escape sequences reach the terminal escaped: the `stats` error line
# and the lines `view --html` logs about damage printed them raw (other commands quoted them).
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests._records import write_records

EVIL = "evil\x1b[31mRED\x07\x1b]0;owned\x07.tfrecord"


@pytest.fixture
def damaged(tmp_path):
    path = write_records(tmp_path / EVIL, [b"x" * 100, b"y" * 100])
    data = bytearray(path.read_bytes())
    data[20] ^= 1
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("command", [["stats"], ["view", "--html", "REPORT"], ["count", "--on-error", "skip"]])
def test_a_file_name_with_escape_sequences_is_printed_escaped(damaged, tmp_path, command):
    argv = [a.replace("REPORT", str(tmp_path / "r.html")) for a in command]
    result = subprocess.run(
        [sys.executable, "-m", "tfrecord_lite", argv[0], str(damaged), *argv[1:]],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
    assert "evil" in result.stderr, result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr, result.stderr
    assert "\\u001b[31mRED\\u0007" in result.stderr
