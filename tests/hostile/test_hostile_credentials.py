# Credentials in locations: a URL with a user and password, or signed with a query string, is never
# shown whole: not by the command line's output or errors, nor by errors, log lines or reprs, and
# not even when it is malformed enough that parsing it raises.
from __future__ import annotations

import logging
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests._records import write_records
from tfrecord_lite._errors import RemoteError
from tfrecord_lite._redact import redact, scrub
from tfrecord_lite._repr import shown_paths

SECRET = "SECRETPASS"
SIGNED = f"?X-Amz-Signature={SECRET}1&X-Goog-Signature={SECRET}2&sig={SECRET}3&token={SECRET}4"
PASSWORDS = [SECRET, f"{SECRET}/x", f"x?{SECRET}", f"{SECRET}#x", f"12/{SECRET}", f"12?{SECRET}", f"[{SECRET}"]


@pytest.mark.parametrize("password", PASSWORDS)
def test_redact_never_raises_and_never_shows_a_secret(password: str) -> None:
    url = f"https://alice:{password}@store.example:8443/bucket/a.tfrecord{SIGNED}#frag{SECRET}"
    shown = redact(url)
    assert SECRET not in shown and "alice" not in shown and shown.startswith("https://")
    assert shown.endswith("a.tfrecord")
    assert SECRET not in scrub(f"reading {url!r} failed: X-Amz-Credential={SECRET}")


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text(alphabet="/?#@:[]%", max_size=6), st.text())
def test_redact_is_total(user: str, tricky: str, rest: str) -> None:
    url = f"s3://{user}:{tricky}{SECRET}{tricky}@{rest}"
    assert isinstance(redact(url), str) and isinstance(scrub(url), str)
    assert SECRET not in redact(f"https://alice:{tricky}{SECRET}{tricky}@h/x{rest.replace(SECRET, '')}")


def test_local_paths_are_shown_as_they_are(tmp_path: Path) -> None:
    odd = str(tmp_path / "a?b#c@d.tfrecord")
    assert redact(odd) == odd and redact(Path(odd)) == odd and redact(odd.encode()) == odd


def test_errors_log_lines_and_reprs_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    url = f"https://alice:{SECRET}/x@h/a.tfrecord{SIGNED}"
    err = tfr.CorruptRecordError(f"bad record of {url}", path=url, offset=3)
    remote = RemoteError(f"GET {url} failed", url=url, offset=5)
    for e in (err, remote, pickle.loads(pickle.dumps(err)), pickle.loads(pickle.dumps(remote))):
        assert SECRET not in str(e) and SECRET not in repr(e) and SECRET not in repr(e.args)
    with caplog.at_level(logging.INFO, logger="tfrecord_lite"):
        logging.getLogger("tfrecord_lite").warning("skipped %s", url)
    assert caplog.records and all(SECRET not in r.getMessage() for r in caplog.records)
    assert SECRET not in shown_paths([url]) + shown_paths([url, url]) + shown_paths([url] * 9)


def test_the_command_line_never_shows_a_secret(http_server: Any, tmp_path: Path) -> None:
    data = write_records(tmp_path / "a.tfrecord", [b"x" * 10, b"y" * 20]).read_bytes()
    base = http_server.put("/a.tfrecord", data).removesuffix("/a.tfrecord")
    url = f"{base}/a.tfrecord{SIGNED}"
    with tfr.TFRecordFile(url) as f, tfr.iter_records([url, url]) as records:
        assert SECRET not in repr(f) + repr(records)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    scheme, host = base.split("://")
    signed = f"{scheme}://alice:{SECRET}@{host}/a.tfrecord{SIGNED}"
    out = str(tmp_path / "out.tfrecord")
    for args in (["count", "--per-file"], ["verify"], ["head", "--json"], ["head"], ["index"], ["convert", "--force"]):
        proc = run_cli(*args, signed, *([out] if args[0] == "convert" else []), env=env)
        assert proc.returncode == 0 and SECRET not in proc.stdout + proc.stderr and "alice" not in proc.stdout, proc
    malformed = f"{scheme}://alice:{SECRET}/x@{host}/a.tfrecord{SIGNED}"  # urllib.parse raises, quoting it
    for args in (["verify"], ["salvage", malformed, out]):
        proc = run_cli(*args, *([] if args[0] == "salvage" else [malformed]), env=env)
        assert proc.returncode != 0 and SECRET not in proc.stdout + proc.stderr, proc
