# Writes killed midway, on disk and in moto's S3 server: a real child process packs images
# (or writes shards) and SIGKILLs itself at the n-th call of a step of the library. Readers
# (resolve_inputs and all built on it: iter_records, ShardedRecords, the CLI) must see the
# previous dataset when the kill came before the commit point (the journal) and the new one
# when it came after, never a mix; the next write of the output finishes or removes what the
# killed run left (_storage/journal.py). The oracle is the same write run to the end elsewhere.
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import importlib, os, signal, sys
spec, at, code = sys.argv[1], int(sys.argv[2]), sys.argv[3]
module, _, attrs = spec.partition(":")
owner = importlib.import_module(module)
*path, name = attrs.split(".")
for part in path:
    owner = getattr(owner, part)
original, calls = getattr(owner, name), [0]
def hooked(*args, **kwargs):
    calls[0] += 1
    if calls[0] == at:
        os.kill(os.getpid(), signal.SIGKILL)
    return original(*args, **kwargs)
setattr(owner, name, hooked)
exec(code)
"""


def run_killed(code: str, hook: str, at: int, **env: str) -> None:
    """Run `code` in a new process (with `env` added to its environment) that kills itself
    (SIGKILL) at the `at`-th call of `hook`, 'module:Class.method'."""
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, hook, str(at), code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def image_tree(root: Path, names: list[str]) -> Path:
    pil = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(len(names))
    for k, name in enumerate(names):
        path = root / ("cat" if k % 2 else "dog") / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pil.fromarray(rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)).save(path, format="PNG")
    return root


def seen(inputs: Any, options: Any = None) -> list[bytes]:
    return list(tfr.iter_records(inputs, storage_options=options))


# ----------------------------------------------------------------------------- on disk


def test_local_readers_follow_the_journal_of_a_write_killed_while_publishing(tmp_path: Path) -> None:
    old = [f"old {i}".encode() for i in range(9)]
    new = [f"new {i}".encode() for i in range(8)]
    with tfr.ShardedWriter(tmp_path / "ds", num_shards=3) as w:
        for r in old:
            w.write(r)
    code = f"""
import tfrecord_lite as tfr
with tfr.ShardedWriter({str(tmp_path / "ds")!r}, num_shards=2, overwrite=True) as w:
    for r in {new!r}:
        w.write(r)
"""
    run_killed(code, "tfrecord_lite._storage.journal:LocalFolder.move", at=2)  # after the journal and one rename
    assert sum(name.startswith(".ds.publish-") for name in os.listdir(tmp_path)) == 1
    paths = tfr.resolve_inputs(str(tmp_path / "ds"))
    dealt = [new[0], new[2], new[4], new[6], new[1], new[3], new[5], new[7]]  # round-robin into 2 shards
    assert len(paths) == 2 and seen(paths) == dealt
    assert seen(str(tmp_path / "ds-*-of-*.tfrecord")) == seen(str(tmp_path)) == dealt  # the old shards are gone
    assert len(tfr.ShardedRecords(str(tmp_path / "ds"))) == 8
    from tfrecord_lite._storage.publish import recover

    assert "completed a write" in recover(tmp_path / "ds")[0]  # what the next write does first
    assert sorted(os.listdir(tmp_path)) == sorted(
        f"ds-0000{k}-of-00002.tfrecord{end}" for k in range(2) for end in ("", ".tfrlidx")
    )
    assert seen(str(tmp_path / "ds")) == dealt


# ----------------------------------------------------------------------------- in a bucket


def s3_env(s3: Any) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL": s3.endpoint,
        "AWS_ACCESS_KEY_ID": "testing-key",
        "AWS_SECRET_ACCESS_KEY": "testing-secret",
        "AWS_DEFAULT_REGION": "us-east-1",
    }


def pack_code(tree: Path, prefix: str, **kw: Any) -> str:
    return f"""
from tfrecord_lite import images
images.pack_images({str(tree)!r}, prefix={prefix!r}, **{kw!r})
"""


def cli_count(s3: Any, target: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "tfrecord_lite", "count", target],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **s3_env(s3)},
        check=True,
    )
    return proc.stdout


def staged(s3: Any) -> list[str]:
    s3.fs.invalidate_cache()
    return [p for p in s3.fs.find(s3.bucket, withdirs=False) if ".publish-" in p]


@pytest.mark.object_store
def test_a_pack_killed_before_its_commit_shows_the_previous_dataset(
    s3: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tfrecord_lite import images

    options = s3.storage_options
    prefix = f"{s3.bucket}/ds/pets"
    before = images.pack_images(
        image_tree(tmp_path / "a", ["1.png", "2.png", "3.png"]), prefix=prefix, num_shards=2, storage_options=options
    )
    more = image_tree(tmp_path / "b", ["4.png", "5.png"])
    (more / "dog").rename(more / "ant")
    code = pack_code(more, prefix, append=True, num_shards=2)
    run_killed(code, "tfrecord_lite._storage.uploads:RemotePublication.commit", at=1, **s3_env(s3))
    assert staged(s3)  # the killed run's shards are uploaded, under the staging prefix
    assert tfr.resolve_inputs(prefix, storage_options=options) == before.paths
    assert seen(f"{prefix}-*-of-*.tfrecord", options) == seen(before.paths, options)
    assert len(tfr.ShardedRecords(prefix, storage_options=options)) == 3
    assert images.load_label_map(before.label_map_path, storage_options=options) == before.label_map
    assert int(cli_count(s3, prefix)) == 3
    # the next run on the output removes what the killed one staged (its process is gone), and says so
    with caplog.at_level(logging.WARNING, "tfrecord_lite"):
        after = images.pack_images(more, prefix=prefix, append=True, num_shards=2, storage_options=options)
    assert "rolled back an unfinished write" in caplog.text
    assert staged(s3) == []
    assert after.label_map == {**before.label_map, "ant": 2}
    assert len(tfr.ShardedRecords(prefix, storage_options=options)) == 5


@pytest.mark.object_store
@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_a_pack_killed_while_publishing_shows_the_new_dataset(s3: Any, tmp_path: Path, mode: str) -> None:
    from tfrecord_lite import images
    from tfrecord_lite._storage.publish import open_publication

    options = s3.storage_options
    first = image_tree(tmp_path / "a", [f"{k}.png" for k in range(6)])
    more = image_tree(tmp_path / "b", ["x.png", "y.png", "z.png"])
    (more / "dog").rename(more / "ant")
    kw = {"append": True, "num_shards": 2} if mode == "append" else {"overwrite": True, "num_shards": 2}
    # the oracle: the same two packs run to the end under another prefix
    done = f"{s3.bucket}/done/pets"
    images.pack_images(first, prefix=done, num_shards=3, storage_options=options)
    oracle = images.pack_images(more, prefix=done, storage_options=options, **kw)

    prefix = f"{s3.bucket}/ds/pets"
    images.pack_images(first, prefix=prefix, num_shards=3, storage_options=options)
    run_killed(pack_code(more, prefix, **kw), "tfrecord_lite._storage.journal:StoreFolder.move", at=2, **s3_env(s3))
    assert staged(s3)  # killed after the journal, one object given its final name
    paths = tfr.resolve_inputs(prefix, storage_options=options)
    assert any(".publish-" in p for p in paths)  # read from their staged copies, for now
    assert seen(paths, options) == seen(done, options)
    assert seen(f"{prefix}-*-of-*.tfrecord", options) == seen(done, options)
    assert len(tfr.ShardedRecords(prefix, storage_options=options)) == len(seen(done, options))
    torch_data = pytest.importorskip("tfrecord_lite.torch")
    streamed = torch_data.IterableTFRecordDataset(prefix, storage_options=options)
    assert [r["image/filename"] for r in streamed] == [
        r["image/filename"] for r in map(tfr.decode_example, seen(done, options))
    ]
    assert images.load_label_map(f"{prefix}.labels.json", storage_options=options) == oracle.label_map
    assert int(cli_count(s3, prefix)) == len(seen(done, options))
    # the next write of the output finishes the copies first
    open_publication(prefix, options).abort()
    assert staged(s3) == []
    s3.fs.invalidate_cache()
    names = sorted(p.rsplit("/", 1)[1] for p in s3.fs.ls(f"{s3.bucket}/ds"))
    assert names == sorted(p.rsplit("/", 1)[1] for p in s3.fs.ls(f"{s3.bucket}/done"))
    finals = [p.replace("/done/", "/ds/") for p in tfr.resolve_inputs(done, storage_options=options)]
    assert tfr.resolve_inputs(prefix, storage_options=options) == finals


@pytest.mark.object_store
def test_staged_objects_of_a_live_run_are_reported_not_removed(s3: Any, caplog: pytest.LogCaptureFixture) -> None:
    from tfrecord_lite._storage.uploads import RemotePublication

    running = RemotePublication(f"{s3.bucket}/ds/x", s3.storage_options)  # this process: alive
    with tfr.TFRecordWriter(
        running.file(f"{s3.bucket}/ds/x-00000-of-00001.tfrecord"), storage_options=s3.storage_options
    ) as w:
        w.write(b"r")
    with caplog.at_level(logging.WARNING, "tfrecord_lite"):
        second = RemotePublication(f"{s3.bucket}/ds/x", s3.storage_options)
    assert len(second.recovered) == 1 and "may still be going" in second.recovered[0]
    assert running.staging_name in caplog.text and len(staged(s3)) == 3  # owner.json of both, and the shard
    second.abort()
    running.commit()
    assert staged(s3) == [] and seen(f"{s3.bucket}/ds/x", s3.storage_options) == [b"r"]


@pytest.mark.object_store
def test_the_next_run_aborts_the_multipart_uploads_of_a_killed_one(s3: Any) -> None:
    from tfrecord_lite._storage.uploads import RemotePublication

    options = {**s3.storage_options, "default_block_size": 5 << 20}  # a multipart upload from 5 MiB on
    prefix = f"{s3.bucket}/ds/big"
    code = f"""
import tfrecord_lite as tfr
with tfr.ShardedWriter({prefix!r}, storage_options={options!r}) as w:
    for i in range(100):
        w.write(bytes([i]) * (64 << 10))
"""
    run_killed(code, "tfrecord_lite._storage.uploads:RemoteUpload.close", at=1, **s3_env(s3))
    bucket = s3.bucket[len("s3://") :]
    assert s3.fs.call_s3("list_multipart_uploads", Bucket=bucket).get("Uploads")  # its parts are kept
    assert staged(s3)  # owner.json
    following = RemotePublication(prefix, options)
    assert "rolled back" in following.recovered[0]
    assert s3.fs.call_s3("list_multipart_uploads", Bucket=bucket).get("Uploads", []) == []
    following.abort()
    assert staged(s3) == []
