"""read_events streams: memory stays flat in the size of the log. One events file of 8 MiB and one
of 96 MiB (the same events again and again: scalars, histograms, images), each read to the end in a
fresh interpreter with a tag filter and without, peak RSS compared."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from tfrecord_lite.events import EventWriter

ROOT = Path(__file__).resolve().parents[2]
_PEAK = """
import resource, sys
from tfrecord_lite.events import read_events
rows = sum(1 for _ in read_events(sys.argv[1], tags=sys.argv[2] if len(sys.argv) > 2 else None))
print(rows, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def _peak_mib(logdir: Path, *tags: str) -> tuple[int, int]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-c", _PEAK, str(logdir), *tags]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    rows, peak = out.stdout.split()
    return int(rows), int(peak)


def test_memory_is_flat_in_the_size_of_the_log(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    with EventWriter(tmp_path / "seed") as writer:
        for step in range(4000):
            writer.add_scalar("loss", 1 / (step + 1), step)
            writer.add_histogram("weights", rng.normal(size=64), step)
            if step % 100 == 0:
                writer.add_image("sample", rng.integers(0, 255, (64, 64, 3), dtype=np.uint8), step)
    chunk = Path(writer.path).read_bytes()
    small, large = tmp_path / "small" / "run", tmp_path / "large" / "run"
    for folder, times in ((small, 8 << 20), (large, 96 << 20)):
        folder.mkdir(parents=True)
        with open(folder / "events.out.tfevents.1", "wb") as f:
            for _ in range(times // len(chunk)):
                f.write(chunk)
    for tags in ((), ("loss",)):
        small_rows, small_peak = _peak_mib(small.parent, *tags)
        large_rows, large_peak = _peak_mib(large.parent, *tags)
        assert large_rows > 10 * small_rows
        assert large_peak < small_peak + 32, (tags, small_peak, large_peak)
