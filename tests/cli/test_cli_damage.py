# The reading commands over a folder with damaged files, as a user runs them: a bad file is
# reported (file, record number, byte offset) and the others are still read, with exit status 1;
# --on-error skip reads past the damage and --max-skipped bounds it; every damage message says
# what verify, salvage and --on-error skip do; verify lists record numbers; --keys with a typo is a
# usage error naming the close key. Where records are is found from the raw length fields
# (tests/_records.py), not by the library.
from __future__ import annotations

import json
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests._records import record_starts, write_records

N = 6
HINT = ("tfrecord-lite verify", "tfrecord-lite salvage", "--on-error skip")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """good.tfrecord (N records), cut.tfrecord (its last record truncated), flip.tfrecord (record 2's
    payload damaged) and zz.tfrecord (good, sorted last)."""
    root = tmp_path_factory.mktemp("damage")
    records = [tfr.encode_example({"label": [i], "text": [b"x%d" % i]}) for i in range(N)]
    for name in ("good", "cut", "flip", "zz"):
        write_records(root / f"{name}.tfrecord", records)
    data = (root / "cut.tfrecord").read_bytes()
    (root / "cut.tfrecord").write_bytes(data[:-5])
    flip = bytearray((root / "flip.tfrecord").read_bytes())
    flip[record_starts(bytes(flip))[2] + 14] ^= 0xFF
    (root / "flip.tfrecord").write_bytes(bytes(flip))
    return root


def offsets(path: Path) -> list[int]:
    return record_starts((path.parent / "good.tfrecord").read_bytes())


def test_count_per_file_reports_the_bad_files_and_counts_the_rest(folder: Path) -> None:
    proc = run_cli("count", "--no-verify", "--per-file", ".", cwd=folder)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    width = len(str(3 * N))  # flip.tfrecord counts: --no-verify does not check payload CRCs
    assert lines == [f"{N:>{width}}  ./{name}.tfrecord" for name in ("flip", "good", "zz")] + [str(3 * N)]
    starts = offsets(folder / "cut.tfrecord")
    errors = [line for line in proc.stderr.splitlines() if "cut.tfrecord" in line]
    assert len(errors) == 1 and f"record #{N - 1}, byte offset {starts[-1]}" in errors[0]
    assert all(hint in errors[0] for hint in HINT)
    assert "1 of 4 files could not be read to the end" in proc.stderr

    verified = run_cli("count", "--json", ".", cwd=folder)  # payload CRCs checked by default
    report = json.loads(verified.stdout)
    assert verified.returncode == 1 and report["total"] == 2 * N
    assert {(f["file"], f["record"], f["offset"]) for f in report["failed"]} == {
        ("./cut.tfrecord", N - 1, starts[-1]),
        ("./flip.tfrecord", 2, starts[2]),
    }


def test_on_error_skip_reads_past_damage_and_max_skipped_bounds_it(folder: Path) -> None:
    proc = run_cli("count", "--on-error", "skip", ".", cwd=folder)
    assert proc.returncode == 0 and int(proc.stdout) == 4 * N - 2, proc.stderr
    assert proc.stderr.count("skipped damaged data") == 2 and "skipped 2 damaged spans" in proc.stderr
    limited = run_cli("count", "--max-skipped", "1", ".", cwd=folder)
    assert limited.returncode == 1 and "max_skipped=1" in limited.stderr
    shown = run_cli("cat", "--json", "--on-error", "skip", "flip.tfrecord", cwd=folder)
    assert [json.loads(line)["features"]["label"]["values"] for line in shown.stdout.splitlines()] == [
        [i] for i in range(N) if i != 2
    ]
    for command in ("head", "schema"):
        assert run_cli(command, "--on-error", "skip", ".", cwd=folder).returncode == 0


@pytest.mark.parametrize("command", ["head", "cat", "schema"])
def test_reading_commands_go_on_past_a_bad_file(folder: Path, command: str) -> None:
    args = ["-n", "100"] if command == "head" else []
    proc = run_cli(command, *args, "--json", ".", cwd=folder)
    assert proc.returncode == 1
    assert "./flip.tfrecord: record #2, byte offset" in proc.stderr and "./cut.tfrecord: record #5" in proc.stderr
    if command == "schema":
        assert json.loads(proc.stdout)["records"] == N + N - 1 + 2 + N  # what came before the damage, too
    else:
        files = [json.loads(line)["file"] for line in proc.stdout.splitlines()]
        assert files.count("./zz.tfrecord") == N and files.count("./flip.tfrecord") == 2


def test_a_single_damaged_file_and_the_writing_commands_say_what_to_do(folder: Path, tmp_path: Path) -> None:
    proc = run_cli("cat", "cut.tfrecord", cwd=folder)
    assert proc.returncode == 1 and proc.stdout.count("cut.tfrecord #") == N - 1
    (line,) = proc.stderr.splitlines()
    assert line.startswith("tfrecord-lite: error: cut.tfrecord: record #5") and all(h in line for h in HINT)
    merged = run_cli("merge", str(folder / "flip.tfrecord"), "-o", str(tmp_path / "m.tfrecord"))
    assert merged.returncode == 1 and all(h in merged.stderr for h in HINT)
    assert not (tmp_path / "m.tfrecord").exists()  # a writing command publishes nothing
    skipped = run_cli("merge", "--on-error", "skip", str(folder / "flip.tfrecord"), "-o", str(tmp_path / "m.tfrecord"))
    assert skipped.returncode == 0 and len(list(tfr.iter_records(tmp_path / "m.tfrecord"))) == N - 1
    converted = run_cli("convert", "--on-error", "skip", str(folder / "cut.tfrecord"), str(tmp_path / "c.tfrecord.gz"))
    assert converted.returncode == 0 and len(list(tfr.iter_records(tmp_path / "c.tfrecord.gz"))) == N - 1


def test_index_goes_on_past_a_bad_file(folder: Path, tmp_path: Path) -> None:
    for name in ("good", "cut", "zz"):
        (tmp_path / f"{name}.tfrecord").write_bytes((folder / f"{name}.tfrecord").read_bytes())
    proc = run_cli("index", str(tmp_path))
    assert proc.returncode == 1 and "cut.tfrecord: record #5" in proc.stderr
    assert "--on-error" not in proc.stderr  # index has no such option: the hint does not offer it
    assert (tmp_path / "zz.tfrecord.tfrlidx").exists() and not (tmp_path / "cut.tfrecord.tfrlidx").exists()


def test_verify_lists_record_numbers(folder: Path) -> None:
    starts = offsets(folder / "flip.tfrecord")
    proc = run_cli("verify", "flip.tfrecord", "cut.tfrecord", cwd=folder)
    assert proc.returncode == 1
    assert f"record #2, offset {starts[2]}: payload CRC mismatch" in proc.stdout
    assert f"record #{N - 1}, offset {starts[-1]}: truncated" in proc.stdout
    report = json.loads(run_cli("verify", "--json", "flip.tfrecord", cwd=folder).stdout)
    assert [(b["record"], b["offset"]) for b in report["bad"]] == [(2, starts[2])]
    assert tfr.verify_file(folder / "flip.tfrecord").bad_records[0][:2] == (2, starts[2])


def test_keys_with_a_typo_is_a_usage_error(folder: Path) -> None:
    proc = run_cli("head", "--keys", "lable", "good.tfrecord", cwd=folder)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "no key 'lable'; did you mean 'label'?" in proc.stderr
    assert run_cli("head", "--keys", "nothing_like_it", "good.tfrecord", cwd=folder).returncode == 2
    ok = run_cli("head", "-n", "1", "--keys", "label,optional_key", "good.tfrecord", cwd=folder)
    assert ok.returncode == 0 and "label" in ok.stdout  # a key only some records have is fine


def test_messages_count_in_english(tmp_path: Path) -> None:
    with tfr.ShardedWriter(tmp_path / "ds", num_shards=2) as w:
        w.write(b"one")
    (tmp_path / "notes.txt").write_text("hello")
    quiet = run_cli("count", str(tmp_path / "ds"))
    assert quiet.returncode == 0 and quiet.stderr == ""  # the sidecars the library wrote are no news
    proc = run_cli("count", str(tmp_path))
    assert "skipped 1 file that holds no TFRecords (1 .txt file)" in proc.stderr
    verify = run_cli("verify", str(tmp_path))
    assert verify.stdout.splitlines()[0].endswith("1 record") and verify.stdout.splitlines()[1].endswith("0 records")
