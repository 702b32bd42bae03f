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
