# Telling local paths from URLs (file:// ones are local), and naming URLs in messages.
from __future__ import annotations

from tfrecord_lite._storage.locations import has_scheme, is_url, redact, scheme, scrub, split_options, takes_no_uploads


def test_redact_cuts_credentials_and_query() -> None:
    assert redact("https://u:p@host:8080/a/b.tfrecord?X-Amz-Signature=abc#f") == "https://host:8080/a/b.tfrecord"
    assert redact("s3://bucket/key.tfrecord") == "s3://bucket/key.tfrecord"
    text = "GET https://u:p@h/x?sig=1 failed; see s3://b/k?versionId=2"
    assert scrub(text) == "GET https://h/x failed; see s3://b/k"


def test_file_urls_are_local_paths() -> None:
    assert is_url("s3://bucket/key") and is_url("https://host/a.tfrecord")
    assert not is_url("file:///tmp/a.tfrecord") and not is_url("/tmp/a.tfrecord") and not is_url(b"s3://b/k")
    assert has_scheme("file:///tmp/a.tfrecord") and not has_scheme("/tmp/a.tfrecord")


def test_schemes() -> None:
    assert scheme("gcs://bucket/key") == "gcs"
    assert takes_no_uploads("HTTPS://host/a") and takes_no_uploads("http://host/a")
    assert not takes_no_uploads("s3://bucket/key")


def test_storage_options_are_fsspec_options_or_a_filesystem() -> None:
    fs = object()
    assert split_options(None) == (None, None)
    assert split_options({"anon": True}) == ({"anon": True}, None)
    assert split_options(fs) == (None, fs)
