# Memory stays flat in the size of the data: tfr.statistics over a file of 16 MiB and over one of
# 256 MiB (the same records again and again, small ones and 64 KiB ones), each in a fresh interpreter,
# peak RSS compared. The accumulators are fixed-size sketches and the reader keeps one buffer.
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tfrecord_lite as tfr

ROOT = Path(__file__).resolve().parents[2]
_PEAK = """
import resource, sys, tfrecord_lite as tfr
stats = tfr.statistics(sys.argv[1])
print(stats.records, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def _chunk(path: Path) -> bytes:
    rng = np.random.default_rng(0)
    with tfr.TFRecordWriter(str(path)) as writer:
        for i in range(20_000):
            writer.write_example({"label": i % 10, "x": rng.standard_normal(8).astype(np.float32), "s": b"k%d" % i})
        for i in range(64):
            writer.write_example({"label": i % 10, "blob": rng.bytes(64 * 1024)})
    return path.read_bytes()


def _peak_mib(path: Path) -> tuple[int, int]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path)], env=env, capture_output=True, text=True, check=True)
    records, peak = out.stdout.split()
    return int(records), int(peak)


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_file(tmp_path):
    chunk = _chunk(tmp_path / "chunk.tfrecord")
    copies = {}
    for name, size in (("small", 16 << 20), ("big", 256 << 20)):
        path = tmp_path / f"{name}.tfrecord"
        n = -(-size // len(chunk))
        with open(path, "wb") as out:
            for _ in range(n):
                out.write(chunk)
        copies[name] = (path, n)
    small_records, small_peak = _peak_mib(copies["small"][0])
    big_records, big_peak = _peak_mib(copies["big"][0])
    print(f"peak RSS: {small_peak} MiB over 16 MiB, {big_peak} MiB over 256 MiB")
    assert big_records == small_records * copies["big"][1] // copies["small"][1]
    assert big_peak - small_peak < 48, (small_peak, big_peak)  # MiB, for 16x the data
