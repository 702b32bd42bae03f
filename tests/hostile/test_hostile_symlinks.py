# Files a user names, written through the atomic path: tfrecord2idx's index of a GZIP or a plain
# file replaces a symlink planted at its name instead of writing through it (once it overwrote the
# link's target), and gets no permission its data file lacks (once 0644 beside a 0600 file).
from __future__ import annotations

import os
import stat

import pytest

from tests._records import write_records
from tfrecord_lite.compat.tfrecord.tools.tfrecord2idx import create_indices


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_tfrecord2idx_replaces_a_symlink_and_keeps_the_data_files_permissions(tmp_path, compression):
    folder = tmp_path / "data"
    folder.mkdir()
    data = write_records(folder / "a.tfrecord", [b"x" * 10, b"y" * 20], compression)
    os.chmod(data, 0o600)
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH=...\n")
    (folder / "a.tfindex").symlink_to(victim)
    old = os.umask(0o022)
    try:
        create_indices(str(folder))
    finally:
        os.umask(old)
    assert victim.read_text() == "export PATH=...\n"
    index = folder / "a.tfindex"
    assert not index.is_symlink()
    assert index.read_text() == "0 26\n26 36\n"
    assert stat.S_IMODE(index.stat().st_mode) == 0o600
