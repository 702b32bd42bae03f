"""TensorFlow as the oracle for the write-through writer (buffered=False), which writes a local
file through a shared memory map: its file is tf.io.TFRecordWriter's byte for byte, and the
zero tail a writer leaves when it is stopped before close() is what TensorFlow reports as a
corrupted record after the records before it (as a torn record); once cut off by
append=True, truncate_partial=True, TensorFlow reads every record.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tf = pytest.importorskip("tensorflow")

import tfrecord_lite as tfr
from tests._reading import tf_read, tf_read_until_error

pytestmark = pytest.mark.tf


def tf_write(path: Path, records: list[bytes]) -> None:
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.binary(max_size=400), min_size=0, max_size=200))
def test_write_through_files_are_tfs_bytes(tmp_path_factory: pytest.TempPathFactory, records: list[bytes]) -> None:
    folder = tmp_path_factory.mktemp("through")
    ours, theirs = folder / "ours.tfrecord", folder / "theirs.tfrecord"
    with tfr.TFRecordWriter(ours, buffered=False) as w:
        for r in records:
            w.write(r)
    tf_write(theirs, records)
    assert ours.read_bytes() == theirs.read_bytes()


def test_tf_reports_a_stopped_writers_zero_tail_as_corruption_and_reads_it_repaired(tmp_path: Path) -> None:
    records = [b"record %d" % i * (1 + i % 9) for i in range(500)]
    live, stopped = tmp_path / "live.tfrecord", tmp_path / "stopped.tfrecord"
    with tfr.TFRecordWriter(live, buffered=False) as w:
        for r in records:
            w.write(r)
        shutil.copyfile(live, stopped)  # what a kill leaves: the records, then the map's zero bytes
    assert stopped.stat().st_size > live.stat().st_size
    got, err = tf_read_until_error(stopped)
    assert got == records and isinstance(err, tf.errors.DataLossError), err
    with pytest.raises(tfr.TruncatedRecordError, match="write-through writer"):
        list(tfr.iter_records(stopped))
    with tfr.TFRecordWriter(stopped, append=True, truncate_partial=True):
        pass
    assert tf_read(stopped) == records
    assert stopped.read_bytes() == live.read_bytes()
