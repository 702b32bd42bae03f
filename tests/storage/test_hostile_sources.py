# A folder link that loops back up the tree: `**` follows it, up to the system's limit on links
# (40 turns), so each file below it used to be read 41 times. Built here under tmp_path.
from __future__ import annotations

import glob
from pathlib import Path

import tfrecord_lite as tfr
from tfrecord_lite._storage.sources import resolve_inputs


def test_a_looping_folder_link_lists_each_file_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "a").mkdir(parents=True)
    for name, records in (("a/x.tfrecord", [b"x1", b"x2"]), ("y.tfrecord", [b"y"])):
        with tfr.TFRecordWriter(str(data / name)) as w:
            for r in records:
                w.write(r)
    (data / "a" / "up").symlink_to("..", target_is_directory=True)
    pattern = str(data / "**" / "*.tfrecord")
    assert len(glob.glob(pattern, recursive=True)) > 20  # what glob lists through the loop
    expected = [str(data / "a" / "x.tfrecord"), str(data / "y.tfrecord")]
    assert resolve_inputs(pattern) == expected
    assert sorted(tfr.iter_records(pattern)) == [b"x1", b"x2", b"y"]
    # a second loop doubles what glob lists at every turn (2 ** 40 paths); each file still comes once
    (data / "a" / "same").symlink_to(".", target_is_directory=True)
    (data / "other").symlink_to("a", target_is_directory=True)
    assert resolve_inputs(pattern) == expected
    assert resolve_inputs(str(data / "**" / "x.tfrecord")) == expected[:1]
    assert resolve_inputs(str(data / "*" / "**" / "*.tfrecord")) == expected[:1]


def test_recursive_globs_match_as_glob_does(tmp_path: Path) -> None:
    for name in ("a/b/c/r.tfrecord", "a/r.tfrecord", "r.tfrecord", "a/.hidden/r.tfrecord", "a/b/.r.tfrecord"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        with tfr.TFRecordWriter(str(tmp_path / name)) as w:
            w.write(b"x")
    for pattern in ("**/*.tfrecord", "a/**/*.tfrecord", "**/b/**/*.tfrecord", "a/**", "**/.*.tfrecord", "a/.*/**/*"):
        full = str(tmp_path / pattern)
        expected = sorted(p for p in glob.glob(full, recursive=True) if Path(p).is_file())
        assert sorted(resolve_inputs(full)) == expected, pattern
