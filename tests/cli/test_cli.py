# The `tfrecord-lite` command line, run as a real subprocess (`python -m
# tfrecord_lite`, and once through the installed console script) on real files:
# plain, GZIP and ZLIB inputs, files / globs / directories, corrupt and truncated
# files, missing paths and bad options, with their exit statuses. Expected values
# are computed here from what the test wrote, independently of the CLI.
from __future__ import annotations

import argparse
import base64
import functools
import gzip
import itertools
import json
import operator
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests._records import record_starts

N = 12


def example(i: int) -> dict:
    feats = {
        "id": [i],
        "score": [i * 0.5],
        "name": [f"item-{i}".encode()],
        "blob": [bytes(range(256)) * 2],
        "vec": np.arange(50, dtype=np.float32) + i,
    }
    if i % 2 == 0:
        feats["opt"] = [i, i + 1, i + 2]
    return feats


def cli(*args: str, cwd: Path, ok: bool = True, stdin: Path | None = None) -> subprocess.CompletedProcess:
    proc = run_cli(*args, cwd=cwd, stdin=stdin)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def error_line(proc: subprocess.CompletedProcess, status: int) -> str:
    """The one-line error of a failed command."""
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    lines = [x for x in proc.stderr.strip().splitlines() if "files that hold no TFRecords" not in x]
    assert len(lines) == 1 and lines[0].startswith("tfrecord-lite: error: "), proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    d = root / "data"
    d.mkdir()
    for name, compression in (("a.tfrecord", None), ("b.tfrecord.gz", "gzip"), ("c.tfrecord.zz", "zlib")):
        with tfr.TFRecordWriter(str(d / name), compression=compression) as w:
            for i in range(N):
                w.write_example(example(i))
    with tfr.TFRecordWriter(str(root / "seq.tfrecord")) as w:
        w.write(tfr.encode_sequence_example({"len": [2]}, {"tok": [[b"hello"], [b"world", b"!"]]}))
    plain = (d / "a.tfrecord").read_bytes()
    offs = record_starts(plain)
    bad = bytearray(plain)
    bad[offs[3] + 20] ^= 0xFF  # payload of record 3
    bad[offs[7] + 1] ^= 0x01  # length field of record 7
    (root / "corrupt.tfrecord").write_bytes(bytes(bad))
    (root / "corrupt.tfrecord.gz").write_bytes(gzip.compress(bytes(bad)))
    (root / "truncated.tfrecord").write_bytes(plain[: offs[-1] + 30])
    (root / "noise.bin").write_bytes(b"this is not a TFRecord file at all" * 3)
    return root


def test_help_teaches(data: Path) -> None:
    top = cli("--help", cwd=data).stdout
    for command in ("count", "head", "cat", "schema", "verify", "index", "pack-images", "unpack-images",
                    "remove-images", "reshard", "merge", "split", "convert", "examples:", "exit status"):  # fmt: skip
        assert command in top
    for command in ("verify", "split", "pack-images"):
        text = cli(command, "--help", cwd=data).stdout
        assert "examples:" in text and f"tfrecord-lite {command}" in text


def test_console_script(data: Path) -> None:
    script = Path(sys.executable).with_name("tfrecord-lite")
    if not script.exists():
        pytest.skip("the package is not installed with its console script in this environment")
    proc = subprocess.run([str(script), "count", "data/a.tfrecord"], cwd=data, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == str(N)


def test_count_files_globs_dirs_and_compression(data: Path) -> None:
    assert cli("count", "data/a.tfrecord", cwd=data).stdout.strip() == str(N)
    assert cli("count", "data", cwd=data).stdout.strip() == str(3 * N)  # plain + GZIP + ZLIB in a directory
    per = cli("count", "--per-file", "data/*.tfrecord*", "seq.tfrecord", cwd=data).stdout.splitlines()
    assert per[-1] == str(3 * N + 1) and len(per) == 5 and per[1].split() == [str(N), "data/b.tfrecord.gz"]
    counts = json.loads(cli("count", "--json", "-z", "GZIP", "data/b.tfrecord.gz", cwd=data).stdout)
    assert counts == {"files": {"data/b.tfrecord.gz": N}, "total": N}
    assert cli("count", "-", "data/a.tfrecord", cwd=data, stdin=data / "data" / "c.tfrecord.zz").stdout.strip() == str(
        2 * N
    )
    proc = cli("verify", "-", cwd=data, stdin=data / "corrupt.tfrecord.gz", ok=False)
    assert proc.returncode == 1 and proc.stdout.startswith("BAD  -  10 good records, 2 bad")
    assert "standard input" in error_line(cli("split", "-", "--ratio", "1/1", "-o", "x", cwd=data, ok=False), 2)


def test_bad_input_gives_one_line_errors_and_exit_codes(data: Path) -> None:
    line = error_line(cli("count", "nope.tfrecord", cwd=data, ok=False), 2)
    assert "nope.tfrecord" in line
    assert "no TFRecord files match" in error_line(cli("head", "data/*.nothing", cwd=data, ok=False), 2)
    line = error_line(cli("count", "-z", "bz2", "data/a.tfrecord", cwd=data, ok=False), 2)
    assert "unknown compression 'bz2'" in line
    assert "--shards" in error_line(cli("reshard", "data", "-o", "x", "--shards", "0", cwd=data, ok=False), 2)
    assert "invalid choice" in error_line(cli("frobnicate", cwd=data, ok=False), 2)
    line = error_line(cli("count", "corrupt.tfrecord", cwd=data, ok=False), 1)
    offs = record_starts((data / "data" / "a.tfrecord").read_bytes())
    assert "corrupt.tfrecord" in line and f"offset {offs[3]}" in line
    line = error_line(cli("head", "-n", "100", "noise.bin", cwd=data, ok=False), 1)
    assert "noise.bin" in line and "not a TFRecord file" in line
    line = error_line(cli("cat", "--json", "-z", "gzip", "data/a.tfrecord", cwd=data, ok=False), 1)
    assert "a.tfrecord" in line  # forced GZIP on a plain file


def test_head_readable_and_elided(data: Path) -> None:
    out = cli("head", "-n", "2", "data/c.tfrecord.zz", cwd=data).stdout
    blocks = out.strip().split("\n\n")
    assert len(blocks) == 2 and blocks[0].startswith("data/c.tfrecord.zz #0")
    first = {line.split()[0]: line for line in blocks[0].splitlines()[1:]}
    assert first["name"].split()[1:] == ["bytes[1]", '"item-0"']
    assert "<512 bytes: 000102030405" in first["blob"] and "…" in first["blob"]
    assert first["vec"].split()[1:4] == ["float[50]", "0", "1"] and first["vec"].endswith("… (50 values)")
    assert first["opt"].split()[1:] == ["int64[3]", "0", "1", "2"]
    assert "opt" not in blocks[1]  # odd records have no opt
    seq = cli("head", "seq.tfrecord", cwd=data).stdout
    assert "(SequenceExample)" in seq and '"hello"' in seq and "tok  2 steps" in seq


def test_cat_json_lines_roundtrip(data: Path) -> None:
    lines = cli("cat", "--json", "data", cwd=data).stdout.splitlines()
    assert len(lines) == 3 * N
    rows = [json.loads(line) for line in lines]
    for row in rows:
        i = row["index"]
        f = row["features"]
        assert f["id"] == {"kind": "int64", "values": [i]}
        assert f["score"]["values"] == [i * 0.5] and f["name"]["values"] == [f"item-{i}"]
        assert f["vec"]["elided"] == 40 and f["vec"]["values"] == [float(v) for v in range(i, i + 10)]
        assert f["blob"]["values"][0]["size"] == 512 and f["blob"]["values"][0]["elided"] is True
        assert ("opt" in f) == (i % 2 == 0)
    assert [r["file"] for r in rows[::N]] == ["data/a.tfrecord", "data/b.tfrecord.gz", "data/c.tfrecord.zz"]
    full = json.loads(
        cli(
            "head", "-n", "1", "--skip", "5", "--json", "--full", "--keys", "blob,vec", "data/a.tfrecord", cwd=data
        ).stdout
    )
    assert full["index"] == 5 and set(full["features"]) == {"blob", "vec"}
    assert base64.b64decode(full["features"]["blob"]["values"][0]["base64"]) == bytes(range(256)) * 2
    assert full["features"]["vec"]["values"] == [float(v) for v in range(5, 55)]
    raw = json.loads(cli("head", "-n", "1", "--raw", "--json", "--full", "data/a.tfrecord", cwd=data).stdout)
    assert base64.b64decode(raw["base64"]) == next(iter(tfr.iter_records(str(data / "data" / "a.tfrecord"))))


def test_schema(data: Path) -> None:
    rows = json.loads(cli("schema", "--all", "--json", "data", cwd=data).stdout)
    assert rows["records"] == 3 * N and rows["complete"] is True
    by_key = {r["key"]: r for r in rows["features"]}
    assert set(by_key) == {"id", "score", "name", "blob", "vec", "opt"}
    assert by_key["opt"]["present_pct"] == 50.0 and by_key["opt"]["min_values"] == 3
    assert by_key["vec"]["kind"] == "float" and by_key["vec"]["max_values"] == 50
    assert by_key["id"]["present_pct"] == 100.0 and by_key["blob"]["kind"] == "bytes"
    table = cli("schema", "-n", "3", "data/a.tfrecord", cwd=data).stdout.splitlines()
    assert table[0] == "scanned the first 3 records"
    opt = next(line for line in table if line.startswith("opt "))
    assert opt.split() == ["opt", "int64", "66.7%", "3"]


def test_verify_lists_every_bad_record(data: Path) -> None:
    good = cli("verify", "data", cwd=data).stdout.splitlines()
    assert [line.split()[0] for line in good] == ["OK"] * 3 and good[0].endswith(f"{N} records")

    offs = record_starts((data / "data" / "a.tfrecord").read_bytes())
    proc = cli(
        "verify",
        "--json",
        "corrupt.tfrecord",
        "corrupt.tfrecord.gz",
        "truncated.tfrecord",
        "data/a.tfrecord",
        cwd=data,
        ok=False,
    )
    assert proc.returncode == 1 and "3 of 4 files have bad records" in proc.stderr
    reports = [json.loads(line) for line in proc.stdout.splitlines()]
    for report in reports[:2]:  # the same damage, plain and inside GZIP
        assert [b["offset"] for b in report["bad"]] == [offs[3], offs[7]]
        assert "payload CRC" in report["bad"][0]["reason"] and "length CRC" in report["bad"][1]["reason"]
        assert f"next valid record header is at offset {offs[8]}" in report["bad"][1]["reason"]
        assert report["records"] == N - 2 and report["ok"] is False
    assert reports[2]["records"] == N - 1 and [b["offset"] for b in reports[2]["bad"]] == [offs[-1]]
    assert "truncated" in reports[2]["bad"][0]["reason"]
    assert reports[3] == {"file": "data/a.tfrecord", "ok": True, "records": N, "bad": []}

    text = cli("verify", "-q", "corrupt.tfrecord", "data/a.tfrecord", cwd=data, ok=False).stdout
    assert text.splitlines()[0].startswith("BAD  corrupt.tfrecord") and "a.tfrecord" not in text
    assert f"offset {offs[3]}: payload CRC mismatch" in text


def test_index_sidecar_and_dali_text_index(data: Path, tmp_path: Path) -> None:
    src = tmp_path / "x.tfrecord"
    shutil.copy(data / "data" / "a.tfrecord", src)
    out = cli("index", "--text", str(src), cwd=tmp_path).stdout
    assert f"{N} records" in out and (tmp_path / "x.tfrecord.tfrlidx").exists()
    plain = src.read_bytes()
    offs = record_starts(plain) + [len(plain)]
    expected = [f"{a} {b - a}" for a, b in itertools.pairwise(offs)]
    assert (tmp_path / "x.tfrecord.idx").read_text().split("\n")[:-1] == expected
    cli("index", "--text-dir", "idx", str(src), cwd=tmp_path)
    assert (tmp_path / "idx" / "x.tfrecord.idx").read_text().split("\n")[:-1] == expected
    gz = data / "data" / "b.tfrecord.gz"
    assert "12 records" in cli("index", str(gz), cwd=tmp_path).stdout  # the compressed stream's index
    assert Path(str(gz) + ".tfrlidx").exists()
    line = error_line(cli("index", "--text", str(gz), cwd=tmp_path, ok=False), 2)
    assert "GZIP" in line and "convert" in line  # DALI's text index cannot point into a compressed file


def test_index_folder_indexes_compressed_files_too(data: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(data / "data" / "a.tfrecord", folder / "a.tfrecord")
    shutil.copy(data / "data" / "b.tfrecord.gz", folder / "b.tfrecord.gz")
    run = cli("index", "--text", str(folder), cwd=tmp_path)
    assert (folder / "a.tfrecord.tfrlidx").exists() and (folder / "b.tfrecord.gz.tfrlidx").exists()
    assert (folder / "a.tfrecord.idx").exists() and not (folder / "b.tfrecord.gz.idx").exists()
    assert "no text index for 1 compressed or remote file " in run.stderr and "b.tfrecord.gz" in run.stderr
    with tfr.TFRecordFile(str(folder / "b.tfrecord.gz")) as f:  # opens from the sidecar just written
        assert f.index_path == str(folder / "b.tfrecord.gz.tfrlidx")
        assert list(f) == read_all(data / "data" / "b.tfrecord.gz")


def read_all(path: Path) -> list[bytes]:
    return list(tfr.iter_records(str(path)))


def test_convert_merge_reshard(data: Path, tmp_path: Path) -> None:
    original = read_all(data / "data" / "a.tfrecord")
    cli("convert", str(data / "data" / "a.tfrecord"), "a.tfrecord.gz", cwd=tmp_path)
    assert (tmp_path / "a.tfrecord.gz").read_bytes()[:2] == b"\x1f\x8b"
    cli("convert", "a.tfrecord.gz", "a.zlib.tfrecord", "--to", "zlib", cwd=tmp_path)
    assert (
        zlib.decompress((tmp_path / "a.zlib.tfrecord").read_bytes())[:8]
        == (data / "data" / "a.tfrecord").read_bytes()[:8]
    )
    cli("convert", "a.zlib.tfrecord", "back.tfrecord", cwd=tmp_path)
    assert (tmp_path / "back.tfrecord").read_bytes() == (data / "data" / "a.tfrecord").read_bytes()
    cli(
        "convert", str(data / "data"), "-o", "ignored", "--to", "gzip", cwd=tmp_path, ok=False
    )  # -o is not an option of convert
    cli(
        "convert",
        str(data / "data" / "a.tfrecord"),
        str(data / "data" / "c.tfrecord.zz"),
        "gz/",
        "--to",
        "gzip",
        cwd=tmp_path,
    )
    assert sorted(os.listdir(tmp_path / "gz")) == ["a.tfrecord.gz", "c.tfrecord.gz"]
    assert read_all(tmp_path / "gz" / "c.tfrecord.gz") == original
    assert "already exists" in error_line(cli("convert", "a.tfrecord.gz", "back.tfrecord", cwd=tmp_path, ok=False), 2)
    assert "unknown compression" in error_line(
        cli("convert", "a.tfrecord.gz", "y", "--to", "lz4", cwd=tmp_path, ok=False), 2
    )

    cli("merge", str(data / "data"), "-o", "all.tfrecord", cwd=tmp_path)
    assert read_all(tmp_path / "all.tfrecord") == original * 3
    line = error_line(
        cli("merge", "all.tfrecord", "a.tfrecord.gz", "-o", "all.tfrecord", "--force", cwd=tmp_path, ok=False), 2
    )
    assert "is an input and an output" in line and read_all(tmp_path / "all.tfrecord") == original * 3

    cli("reshard", "all.tfrecord", "-o", "shards/part", "--shards", "4", cwd=tmp_path)
    names = sorted(os.listdir(tmp_path / "shards"))
    assert [n for n in names if n.endswith(".tfrecord")] == [f"part-0000{k}-of-00004.tfrecord" for k in range(4)]
    parts = [read_all(tmp_path / "shards" / f"part-0000{k}-of-00004.tfrecord") for k in range(4)]
    assert sorted(r for p in parts for r in p) == sorted(original * 3) and [len(p) for p in parts] == [9] * 4
    assert "already exist" in error_line(
        cli("reshard", "all.tfrecord", "-o", "shards/part", "--max-records", "10", cwd=tmp_path, ok=False), 2
    )
    cli("reshard", "all.tfrecord", "-o", "shards/part", "--max-records", "10", "--force", "--to", "gzip", cwd=tmp_path)
    gz = sorted(p for p in os.listdir(tmp_path / "shards") if p.endswith(".gz"))
    assert gz == [f"part-0000{k}-of-00004.tfrecord.gz" for k in range(4)]
    assert [len(read_all(tmp_path / "shards" / g)) for g in gz] == [10, 10, 10, 6]
    line = error_line(
        cli("reshard", "shards/part-*.gz", "-o", "shards/part", "--to", "gzip", "--force", cwd=tmp_path, ok=False), 2
    )
    assert "overwrite the input" in line


def test_split_by_ratio_and_count(data: Path, tmp_path: Path) -> None:
    records = read_all(data / "data" / "a.tfrecord") + read_all(data / "data" / "a.tfrecord")[:8]  # 20
    with tfr.TFRecordWriter(str(tmp_path / "in.tfrecord")) as w:
        for r in records:
            w.write(r)
    cli("split", "in.tfrecord", "--ratio", "90/10", "-o", "out/", cwd=tmp_path)
    train, val = read_all(tmp_path / "out" / "train.tfrecord"), read_all(tmp_path / "out" / "val.tfrecord")
    assert train == records[:18] and val == records[18:]

    cli("split", "in.tfrecord", "--ratio", "80/10/10", "--shuffle", "--seed", "3", "-o", "s", cwd=tmp_path)
    parts = [read_all(tmp_path / f"s-{n}.tfrecord") for n in ("train", "val", "test")]
    assert [len(p) for p in parts] == [16, 2, 2] and sorted(functools.reduce(operator.iadd, parts, [])) == sorted(
        records
    )
    assert parts[0] != records[:16]  # shuffled assignment
    cli("split", "in.tfrecord", "--ratio", "80/10/10", "--shuffle", "--seed", "3", "-o", "again", cwd=tmp_path)
    assert read_all(tmp_path / "again-val.tfrecord") == parts[1]  # same seed, same split

    cli("split", "in.tfrecord", "--count", "5/3", "--names", "a,b", "--to", "gzip", "-o", "c", cwd=tmp_path)
    assert (
        read_all(tmp_path / "c-a.tfrecord.gz") == records[:5] and read_all(tmp_path / "c-b.tfrecord.gz") == records[5:8]
    )
    assert "asks for 30" in error_line(
        cli("split", "in.tfrecord", "--count", "25/5", "-o", "d", cwd=tmp_path, ok=False), 2
    )
    assert "--names" in error_line(
        cli("split", "in.tfrecord", "--ratio", "1/1", "--names", "x", "-o", "d", cwd=tmp_path, ok=False), 2
    )


def test_image_commands(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    from PIL import Image

    rng = np.random.default_rng(0)
    for k, (cls, name) in enumerate([("cat", "a.png"), ("cat", "b.png"), ("dog", "c.png")]):
        (tmp_path / "photos" / cls).mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (4 + k, 5, 3), dtype=np.uint8)).save(tmp_path / "photos" / cls / name)
    broken = tmp_path / "photos" / "dog" / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n and then nothing")

    line = error_line(cli("pack-images", "photos", "out/pets", cwd=tmp_path, ok=False), 1)
    assert str(Path("photos") / "dog" / "broken.png") in line and "--skip-bad" in line
    proc = cli("pack-images", "photos", "out/pets", "--skip-bad", "--shards", "2", cwd=tmp_path)
    assert (
        f"skipped {Path('photos') / 'dog' / 'broken.png'}" in proc.stderr
        and "packed 3 images into 2 shards" in proc.stderr
    )
    assert json.loads((tmp_path / "out" / "pets.labels.json").read_text()) == {"cat": 0, "dog": 1}
    assert "--append" in error_line(cli("pack-images", "photos", "out/pets", "--skip-bad", cwd=tmp_path, ok=False), 2)
    broken.unlink()

    (tmp_path / "more" / "bird").mkdir(parents=True)
    Image.fromarray(rng.integers(0, 256, (3, 3, 3), dtype=np.uint8)).save(tmp_path / "more" / "bird" / "d.png")
    proc = cli("pack-images", "more", "out/pets", "--append", cwd=tmp_path)
    assert "new: bird" in proc.stderr
    assert json.loads((tmp_path / "out" / "pets.labels.json").read_text()) == {"cat": 0, "dog": 1, "bird": 2}
    assert cli("count", "out", cwd=tmp_path).stdout.strip() == "4"

    cli("unpack-images", "out", "-o", "restored", cwd=tmp_path)
    for rel in ["cat/a.png", "cat/b.png", "dog/c.png"]:
        assert (tmp_path / "restored" / rel).read_bytes() == (tmp_path / "photos" / rel).read_bytes()
    assert (tmp_path / "restored" / "bird" / "d.png").read_bytes() == (
        tmp_path / "more" / "bird" / "d.png"
    ).read_bytes()

    proc = cli("remove-images", "out", "-o", "clean/pets", "--filename", "cat/b.png", "--class", "bird", cwd=tmp_path)
    assert "kept 2 images, removed 2" in proc.stderr
    rows = [
        json.loads(x)
        for x in cli("cat", "--json", "--keys", "image/filename", "clean", cwd=tmp_path).stdout.splitlines()
    ]
    assert sorted(r["features"]["image/filename"]["values"][0] for r in rows) == ["cat/a.png", "dog/c.png"]
    assert json.loads((tmp_path / "clean" / "pets.labels.json").read_text()) == {"cat": 0, "dog": 1, "bird": 2}
    assert "say what to remove" in error_line(cli("remove-images", "out", "-o", "x", cwd=tmp_path, ok=False), 2)
    with tfr.TFRecordWriter(str(tmp_path / "plain.tfrecord")) as w:
        w.write_example({"x": [1]})
    line = error_line(cli("unpack-images", "plain.tfrecord", "-o", "r2", cwd=tmp_path, ok=False), 1)
    assert "image/encoded" in line and "record 0 of plain.tfrecord" in line


def test_output_closed_early_is_not_an_error(tmp_path: Path) -> None:
    with tfr.TFRecordWriter(str(tmp_path / "many.tfrecord")) as w:
        for i in range(3000):  # ~1 MB of output: more than a pipe holds
            w.write_example(example(i))
    proc = subprocess.Popen([sys.executable, "-m", "tfrecord_lite", "cat", "many.tfrecord"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"many.tfrecord #0")
    proc.stdout.close()  # like `| head -1`
    assert proc.wait(timeout=60) == 0 and proc.stderr.read() == b""


def test_progress_bars_only_on_a_terminal_and_only_with_tqdm(monkeypatch: pytest.MonkeyPatch) -> None:
    from tfrecord_lite.cli import options as cli_module

    class Terminal:
        def __init__(self, tty: bool) -> None:
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

        def write(self, text: str) -> int:
            return len(text)

        def flush(self) -> None:
            pass

    items = [1, 2, 3]
    monkeypatch.setattr(sys, "stderr", Terminal(False))
    assert cli_module.progress(items, 3) is items  # a pipe or a file: no bar
    monkeypatch.setattr(sys, "stderr", Terminal(True))
    pytest.importorskip("tqdm")
    bar = cli_module.progress(items, 3)
    assert type(bar).__name__ == "tqdm" and list(bar) == items
    assert cli_module.progress(items, 3, quiet=True) is items
    monkeypatch.setitem(sys.modules, "tqdm", None)  # tqdm not installed: the job runs without a bar
    assert cli_module.progress(items, 3) is items
    assert list(cli_module.progress(items)) == items


READERS = (
    "count",
    "head",
    "cat",
    "schema",
    "stats",
    "index",
    "reshard",
    "merge",
    "split",
    "convert",
    "unpack-images",
    "remove-images",
)
DAMAGE_READERS = ("verify", "salvage")


def _flags() -> dict[str, dict[str, str]]:
    """{command: {flag: dest}} of the reader flags each command's parser takes."""
    from tfrecord_lite.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    wanted = {"--compression", "--no-verify", "--on-error", "--max-skipped", "--max-record-bytes"}
    return {
        name: {flag: action.dest for action in parser._actions for flag in action.option_strings if flag in wanted}
        for name, parser in sub.choices.items()
    }


def test_every_reading_command_takes_the_reader_flags_by_the_library_names() -> None:
    flags = _flags()
    full = {
        "--compression": "compression",
        "--no-verify": "verify",
        "--on-error": "on_error",
        "--max-skipped": "max_skipped",
        "--max-record-bytes": "max_record_bytes",
    }
    for command in READERS:
        expected = dict(full)
        if command == "index":  # a sidecar describes a clean file: damage is reported, never indexed past
            del expected["--on-error"], expected["--max-skipped"]
        assert flags[command] == expected, command
    for command in DAMAGE_READERS:
        assert flags[command] == {"--compression": "compression", "--max-record-bytes": "max_record_bytes"}


def test_the_reader_flags_reach_the_library(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord.gz"
    with tfr.TFRecordWriter(path, compression="gzip") as w:
        w.write(b"x" * 10)
        w.write(b"y" * (2 << 20))
    assert cli("count", "-z", "gzip", "--no-verify", str(path), cwd=tmp_path).stdout.strip() == "2"
    for command in ("head", "schema", "stats"):
        line = error_line(cli(command, "--max-record-bytes", "1M", str(path), cwd=tmp_path, ok=False), 1)
        assert "max_record_bytes" in line, command
    assert "unknown compression" in error_line(
        cli("verify", "--compression", "lz4", str(path), cwd=tmp_path, ok=False), 2
    )
    assert cli("salvage", "-z", "gzip", str(path), str(tmp_path / "out.tfrecord"), cwd=tmp_path).returncode == 0


def test_convert_to_a_table_reads_with_the_reader_flags(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "a.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for k in range(3):
            w.write_example({"k": k, "blob": b"z" * (k * 1000)})
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF  # inside the last record's payload: its CRC no longer matches
    path.write_bytes(bytes(data))
    table = tmp_path / "a.parquet"
    failed = cli("convert", str(path), str(table), cwd=tmp_path, ok=False)  # the schema's first pass says so
    assert failed.returncode == 1 and "CRC" in failed.stderr.splitlines()[-1]
    cli("convert", "--no-verify", "-f", str(path), str(table), cwd=tmp_path)
    assert pq.read_table(table).num_rows == 3
    args = ("--no-verify", "--max-record-bytes", "1K", "-f", str(path), str(table))
    too_long = cli("convert", *args, cwd=tmp_path, ok=False)
    assert too_long.returncode == 1 and "max_record_bytes=1024" in too_long.stderr.splitlines()[-1]
