"""The tfds tests' shared fixture: a copy of the stored TFDS folders (tests/data/tfds), since random
access saves index sidecars beside the shards it reads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

STORED = Path(__file__).resolve().parents[1] / "data" / "tfds"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of tests/data/tfds (the folders `everything` and `episodes`)."""
    copy = tmp_path_factory.mktemp("tfds") / "tfds"
    shutil.copytree(STORED, copy)
    return copy
