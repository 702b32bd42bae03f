# RaggedFeature ValueRowIds: 250 records of 28 bytes, each declaring 2^20 empty rows (allowed per
# record), once took 2 GiB for the batch's row lengths; the empty rows are now bounded over the
# batch too, past which decoding is a FeatureError naming the feature and the record.
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import tfrecord_lite as tfr
from tfrecord_lite._example.ragged_build import MAX_EMPTY_ROWS


def test_empty_rows_are_bounded_over_a_batch():
    code = """
        import resource
        import tfrecord_lite as tfr
        from tfrecord_lite._example.ragged_build import MAX_EMPTY_ROWS
        records = [tfr.encode_example({"v": [1], "p": [MAX_EMPTY_ROWS]}) for _ in range(250)]
        spec = {"r": tfr.RaggedFeature("int64", value_key="v", partitions=(tfr.RaggedFeature.ValueRowIds("p"),))}
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        try:
            tfr.decode_examples(records, spec)
        except tfr.FeatureError as err:
            print(err)
        """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, env=os.environ
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "feature 'r'" in result.stdout and "empty rows in all (record 1 of the batch)" in result.stdout


def test_one_record_may_still_use_its_own_budget():
    spec = {"r": tfr.RaggedFeature("int64", value_key="v", partitions=(tfr.RaggedFeature.ValueRowIds("p"),))}
    record = tfr.encode_example({"v": [1], "p": [MAX_EMPTY_ROWS]})
    value = tfr.decode_example(record, spec)["r"]
    assert value.nrows == MAX_EMPTY_ROWS + 1
