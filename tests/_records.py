# Writing the TFRecord files the tests read: one helper, through the library's own writer (its
# framing is checked against TensorFlow's in test_tf_compat.py), so that a test says only which
# records go where.
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import tfrecord_lite as tfr


def write_records(
    path: str | os.PathLike[str], records: Iterable[bytes], compression: str | None = None, **options: Any
) -> Path:
    """Write `records` to the file at `path` (compression and TFRecordWriter's other options as
    given); returns the path."""
    with tfr.TFRecordWriter(path, compression, **options) as writer:
        for record in records:
            writer.write(record)
    return Path(path)
