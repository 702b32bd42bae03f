# Statistics over hostile data: records that each hold a key of their own (once rows x keys cells
# per batch: 8,000 records took 800 MiB, now sliced under a cell budget), a record of more keys
# than the cap on features tracked (the rest counted and reported), and the page they make kept
# to a bounded size.
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import tfrecord_lite as tfr
from tests._records import write_records
from tfrecord_lite._stats import collect, html


def test_records_with_keys_of_their_own_take_bounded_memory(tmp_path):
    path = write_records(tmp_path / "own.tfrecord", [tfr.encode_example({f"key{i}": [i]}) for i in range(8000)])
    code = f"""
        import resource
        import tfrecord_lite as tfr
        resource.setrlimit(resource.RLIMIT_AS, (700 << 20, 700 << 20))
        stats = tfr.statistics({str(path)!r})
        print(len(stats.features), stats.untracked_features)
        """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300, env=os.environ
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["8000", "0"]


def test_features_past_the_cap_are_counted_and_reported(tmp_path):
    wide = {f"k{i}": [i] for i in range(collect.MAX_FEATURES + 500)}
    path = write_records(tmp_path / "wide.tfrecord", [tfr.encode_example(wide)])
    stats = tfr.statistics(path)
    assert len(stats.features) == collect.MAX_FEATURES
    assert stats.untracked_features == 500
    assert stats.to_dict()["untracked_features"] == 500
    assert "500 more features not tracked" in repr(stats)
    page = stats.to_html()
    assert "features not tracked" in page
    assert f"{collect.MAX_FEATURES - html.TABLE_FEATURES:,} more features not listed" in page
    assert len(page) < 2_000_000  # 10,000 features made an 11 MB page


def test_a_record_of_many_values_is_summarised_in_slices(tmp_path):
    values = list(range(300_000))
    path = write_records(tmp_path / "ints.tfrecord", [tfr.encode_example({"i": values, "b": [b"x"] * 200_000})])
    stats = tfr.statistics(path)
    assert stats["i"].numbers is not None and stats["i"].numbers.max == 299_999
    assert stats["i"].categories is not None and stats["i"].categories.distinct > 290_000
    assert stats["b"].value_counts.max == 200_000
    assert stats["b"].categories is not None and stats["b"].categories.distinct == 1


def test_a_record_of_ten_million_empty_values_takes_bounded_memory(tmp_path):
    # 20 MB: once a bytes object and a span tuple per value, 3.6 GiB
    path = write_records(tmp_path / "empty.tfrecord", [tfr.encode_example({"b": [b""] * 10_000_000})])
    code = f"""
        import resource
        import tfrecord_lite as tfr
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        stats = tfr.statistics({str(path)!r})
        print(stats["b"].value_counts.max, stats["b"].lengths.max, stats["b"].categories.distinct)
        """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300, env=os.environ
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["10000000", "0", "1"]
