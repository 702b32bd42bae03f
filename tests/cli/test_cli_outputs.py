"""Outputs go where they are named: `convert` of several files to one named TFRecord file says to
use `merge` (it made a folder of that name), and `view --html` into a folder that does not exist
yet makes it (it failed naming an internal temporary file)."""

from __future__ import annotations

from pathlib import Path

import tfrecord_lite as tfr
from tests._cli import run_cli


def records(folder: Path, names: tuple[str, ...]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        with tfr.TFRecordWriter(str(folder / name)) as writer:
            writer.write_example({"label": 1})


def test_several_files_into_one_named_file_points_to_merge(tmp_path: Path) -> None:
    records(tmp_path / "cli", ("a.tfrecord", "b.tfrecord"))
    out = tmp_path / "conv" / "all.tfrecord.gz"
    done = run_cli("convert", str(tmp_path / "cli"), str(out), "--to", "gzip")
    assert done.returncode == 2
    assert "merge" in done.stderr and str(out) in done.stderr
    assert not out.exists()
    into_folder = run_cli("convert", str(tmp_path / "cli"), str(tmp_path / "conv") + "/", "--to", "gzip")
    assert into_folder.returncode == 0, into_folder.stderr
    assert sorted(p.name for p in (tmp_path / "conv").iterdir()) == ["a.tfrecord.gz", "b.tfrecord.gz"]


def test_view_html_makes_the_folder_it_writes_into(tmp_path: Path) -> None:
    records(tmp_path, ("a.tfrecord",))
    out = tmp_path / "view" / "deeper" / "report.html"
    done = run_cli("view", str(tmp_path / "a.tfrecord"), "--html", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("<!")
