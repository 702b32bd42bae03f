# Files that shrink while they are open: a mapped file truncated, or rewritten by a writer, under a
# TFRecordFile (once a SIGBUS that killed the process, now a TFRecordError saying the file changed),
# and a GZIP file truncated below its seek points (once a bare IndexError, now TruncatedRecordError).
from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap

import pytest

import tfrecord_lite as tfr
from tests._records import write_records
from tfrecord_lite._errors import TFRecordError, TruncatedRecordError


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, env=os.environ
    )


@pytest.mark.parametrize("how", ["truncate", "rewrite"])
def test_a_mapped_file_that_shrinks_raises_instead_of_sigbus(tmp_path, how):
    path = tmp_path / "data.tfrecord"
    write_records(path, [bytes([i % 256]) * 5000 for i in range(400)])
    shrink = (
        f"os.truncate({str(path)!r}, 100 * 5016 + 1000)"  # 100 records left whole
        if how == "truncate"
        else f"w = tfr.TFRecordWriter({str(path)!r}); w.write(b'new'); w.close()"
    )
    result = run(
        f"""
        import os
        import tfrecord_lite as tfr
        f = tfr.TFRecordFile({str(path)!r})
        assert f[399] == bytes([399 % 256]) * 5000
        {shrink}
        kept = os.path.getsize({str(path)!r}) // 5016  # records still whole in the file
        assert f[0:kept] == [bytes([i % 256]) * 5000 for i in range(kept)] if {how!r} == "truncate" else True
        # one record, a slice, a list and a slice read backwards: a batch is checked once, against its furthest end
        for key in (1500 % 400, 399, slice(0, 400), [0, 399, 1], slice(399, None, -1), slice(kept, kept + 1)):
            try:
                f[key]
            except tfr.TFRecordError as err:
                print(type(err).__name__, err)
        print("went on")
        """
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])  # -7: SIGBUS
    lines = result.stdout.splitlines()
    assert len(lines) == 7, lines
    now = os.path.getsize(path)
    for line in lines[:6]:
        assert f"changed while open: {now} bytes now, {400 * 5016} when opened" in line
        assert "data.tfrecord" in line


def test_a_gzip_file_truncated_under_its_seek_points_is_truncated(tmp_path):
    rng = random.Random(1)
    path = write_records(tmp_path / "g.tfrecord.gz", [rng.randbytes(3000) for _ in range(3000)], "gzip")
    size = os.path.getsize(path)
    for fraction in (0.01, 0.3, 0.9):
        f = tfr.TFRecordFile(path)
        data = path.read_bytes()
        os.truncate(path, int(size * fraction))
        failures: list[TFRecordError] = []
        for i in (0, 1500, 2999):
            try:
                f[i]
            except TFRecordError as err:
                failures.append(err)
        assert failures  # the last record at least is gone
        assert all(isinstance(err, TruncatedRecordError) for err in failures), (fraction, failures)
        with pytest.raises(TruncatedRecordError):
            f[0:3000]
        f.close()
        path.write_bytes(data)
