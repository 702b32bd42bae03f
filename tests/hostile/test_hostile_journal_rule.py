# Who may follow a publication journal. A well-formed journal naming only the dataset's own files,
# with their sizes, cannot be told from the one a killed run leaves; readers follow it anyway, and
# the next writer rolls it forward (docs/reliability.md, "Who follows a journal"): that is what
# makes a publish killed after its commit point show readers the new dataset whole. Refusing such
# a journal unless its writer's lock is live would turn every killed publish into an error for
# readers, and give a planted journal nothing it could not do without one (whoever can plant it can
# rewrite the shards themselves).
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import tfrecord_lite as tfr
from tests._cli import ROOT

KILLED_AFTER_COMMIT = """
import os, signal, sys
import tfrecord_lite as tfr

real_replace = os.replace

def replace(src, dst, *args, **kwargs):
    real_replace(src, dst, *args, **kwargs)
    if str(dst).endswith("journal.json"):  # the commit point: killed before any rename
        os.kill(os.getpid(), signal.SIGKILL)

os.replace = replace
with tfr.ShardedWriter(sys.argv[1], num_shards=3, overwrite=True) as w:
    for i in range(30):
        w.write(b"new %d" % i)
"""


def test_a_publish_killed_after_its_commit_point_shows_readers_the_new_dataset_whole(tmp_path: Path) -> None:
    prefix = str(tmp_path / "train")
    with tfr.ShardedWriter(prefix, num_shards=2) as w:
        for i in range(20):
            w.write(b"old %d" % i)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(KILLED_AFTER_COMMIT), prefix], env=env, check=False)
    assert proc.returncode == -9
    staging = [n for n in os.listdir(tmp_path) if ".publish-" in n]
    assert staging and (tmp_path / staging[0] / "journal.json").exists()  # no writer holds the lock now

    new = sorted(b"new %d" % i for i in range(30))
    assert sorted(tfr.iter_records(f"{prefix}-*")) == new  # the new dataset whole, no error, no mix
    assert tfr.count_records(f"{prefix}-*") == 30
    assert staging[0] in os.listdir(tmp_path)  # readers change nothing

    with tfr.ShardedWriter(str(tmp_path / "train"), num_shards=1, overwrite=True) as w:  # the next writer
        w.write(b"newest")
    assert not [n for n in os.listdir(tmp_path) if ".publish-" in n]
    assert list(tfr.iter_records(f"{prefix}-*")) == [b"newest"]
