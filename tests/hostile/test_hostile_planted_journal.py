# A planted, schema-valid publication journal: readers of a prefix follow it (docs/reliability.md,
# "Who follows a journal", says why), but no longer silently: with no running writer holding the
# output's lock they warn, naming the journal; while a writer holds the lock they do not.
from __future__ import annotations

import json
import logging
import os

import pytest

import tfrecord_lite as tfr
from tests._records import write_records
from tfrecord_lite._storage.publish import OutputLock


@pytest.fixture
def planted(tmp_path):
    prefix = tmp_path / "train"
    with tfr.ShardedWriter(str(prefix), num_shards=2) as w:
        for i in range(20):
            w.write(b"genuine %d" % i)
    staging = tmp_path / ".train.publish-0a1b2c3d"
    staging.mkdir()
    hidden = write_records(staging / "h", [b"hidden %d" % i for i in range(100)])
    journal = {
        "moves": [["h", "train-00000-of-00002.tfrecord", os.path.getsize(hidden)]],
        "deletes": ["train-00001-of-00002.tfrecord"],
    }
    (staging / "journal.json").write_text(json.dumps(journal))
    return prefix, staging


def test_a_journal_no_live_writer_holds_is_followed_with_a_warning(planted, caplog):
    prefix, staging = planted
    with caplog.at_level(logging.WARNING, logger="tfrecord_lite"):
        records = list(tfr.iter_records(f"{prefix}-*"))
    assert records[0] == b"hidden 0"
    warned = [r.getMessage() for r in caplog.records if "publication journal" in r.getMessage()]
    assert warned and str(staging / "journal.json") in warned[0] and "no running writer" in warned[0]


def test_a_journal_whose_writer_holds_the_lock_is_followed_quietly(planted, caplog):
    prefix, _ = planted
    with OutputLock(str(prefix)), caplog.at_level(logging.WARNING, logger="tfrecord_lite"):
        assert next(iter(tfr.iter_records(f"{prefix}-*"))) == b"hidden 0"
    assert not [r for r in caplog.records if "publication journal" in r.getMessage()]
