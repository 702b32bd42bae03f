"""The command line's report of damaged files shows their locations redacted, as every other message does."""

from __future__ import annotations

import argparse

import pytest

from tfrecord_lite._errors import CorruptRecordError
from tfrecord_lite.cli.options import Damaged, damage_hint

SIGNED = "https://user:pw@host.example/data/x.tfrecord?X-Amz-Signature=s3cr3t&token=t0k3n"


def test_damage_hint_and_failure_line_hide_credentials(capsys: pytest.CaptureFixture[str]) -> None:
    err = CorruptRecordError("data CRC mismatch", path=SIGNED, offset=16)
    damaged = Damaged(argparse.Namespace(on_error="raise"), [SIGNED])
    damaged.fail(SIGNED, 0, err)
    shown = damage_hint(err) + capsys.readouterr().err + repr(damaged.failed)
    assert "https://host.example/data/x.tfrecord" in shown
    for secret in ("user", "pw@", "s3cr3t", "t0k3n", "Signature"):
        assert secret not in shown
