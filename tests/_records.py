# The TFRecord files of the tests: writing them through the library's own writer (its framing is
# checked against TensorFlow's in test_tf_compat.py), so that a test says only which records go
# where; and finding their records by walking the raw length fields, as an oracle that owes
# nothing to the library's reader or index.
from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import tfrecord_lite as tfr


def write_records(
    path: str | os.PathLike[str], records: Iterable[bytes], compression: str | None = None, **options: Any
) -> Path:
    """Write `records` to the file at `path` (compression and TFRecordWriter's other options as
    given); returns the path."""
    with tfr.TFRecordWriter(path, compression=compression, **options) as writer:
        for record in records:
            writer.write(record)
    return Path(path)


def record_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every record of an intact uncompressed TFRecord stream, walked from its raw
    length fields: the tests' own account of where records are, independent of the library."""
    spans, pos = [], 0
    while pos < len(data):
        end = pos + struct.unpack_from("<Q", data, pos)[0] + 16
        spans.append((pos, end))
        pos = end
    assert pos == len(data), f"the last record runs past the end ({pos} > {len(data)} bytes)"
    return spans


def record_starts(data: bytes) -> list[int]:
    """Where each record of an intact uncompressed stream starts (see record_spans)."""
    return [start for start, _ in record_spans(data)]


def write_until_full(path: Path, *, limit: int, options: str, record: str, count: int) -> tuple[int, int, str]:
    """Write `count` records (`record`: an expression of i) to `path` with TFRecordWriter(path +
    `options`) in a subprocess whose RLIMIT_FSIZE is `limit` bytes, as a full disk fails a write:
    (records written before the OSError, its errno, its message)."""
    import subprocess
    import sys

    code = f"""
import resource, signal
import tfrecord_lite as tfr
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
written = 0
try:
    with tfr.TFRecordWriter({str(path)!r}{options}) as w:
        for i in range({count}):
            w.write({record})
            written += 1
except OSError as err:
    print(written, err.errno, err, flush=True)
"""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    written, errno_, message = out.stdout.split(" ", 2)
    return int(written), int(errno_), message
