# A URL's secrets in what a URL-backed object shows: TFRecordFile(url).path held the raw URL (its
# repr was redacted), and fsspec's own DEBUG lines quoted it once the user turned logging on.
from __future__ import annotations

import logging
import pickle
from pathlib import Path
from typing import Any

import pytest

import tfrecord_lite as tfr
from tests._records import write_records

SECRET = "SECRETPASS"


def test_the_path_of_a_url_backed_file_is_redacted_and_it_still_reads(
    http_server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = write_records(tmp_path / "a.tfrecord", [b"x" * 10, b"y" * 20]).read_bytes()
    url = http_server.put("/a.tfrecord", data) + f"?X-Amz-Signature={SECRET}&token={SECRET}"
    with caplog.at_level(logging.DEBUG), tfr.TFRecordFile(url, index=False) as f:
        assert SECRET not in f.path and f.path.endswith("/a.tfrecord")
        assert f[1] == b"y" * 20
        again = pickle.loads(pickle.dumps(f))  # the raw URL travels privately: it reads
        assert again[0] == b"x" * 10
        again.close()
    fsspec_lines = [r for r in caplog.records if r.name.startswith("fsspec")]
    assert fsspec_lines  # fsspec logs the URLs it is handed at DEBUG
    assert all(SECRET not in r.getMessage() for r in caplog.records)
