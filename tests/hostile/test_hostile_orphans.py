# remove_orphans (what `tfrecord-lite index` runs) removes only the temporary files this library
# makes, `.NAME.PID-TOKEN.tmp` with an 8-hex-digit token, of dead writers; a hidden file of the
# user's that ends in digits and `.tmp` once went too, its digits read as a dead process id.
from __future__ import annotations

import subprocess
import sys

from tfrecord_lite._storage.atomic import remove_orphans


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_only_names_the_library_makes_are_removed(tmp_path):
    pid = dead_pid()
    theirs = [".thesis.20240115-draft.tmp", f".notes.{pid}-draft.tmp", f".x.{pid}-DEADBEEF.tmp", f".y.{pid}.tmp"]
    ours = f".a.tfrecord.{pid}-0a1b2c3d.tmp"
    for name in [*theirs, ours]:
        (tmp_path / name).write_text("keep me")
    removed = remove_orphans(str(tmp_path))
    assert removed == [str(tmp_path / ours)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(theirs)
