# Crash safety, proven: every writing command runs in a child process (tests/_crashkit.py)
# that is killed with SIGKILL at seeded random moments: at sampled file-system steps of
# a clean run (so the commit and rename phases are hit, a block of records is torn in
# half) and at random times. After each kill: the original files are byte-identical or,
# only past the commit point, replaced by the complete new ones; no file under a final
# name is partial; shards, sidecars and label map agree; then a rerun succeeds and leaves
# nothing behind. Disk full (RLIMIT_FSIZE): a clear error, the originals, no temporaries.
# Concurrency: readers of a file being appended to, and two appends at once.
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tests._crashkit import Runner, committed, hidden, record, runner, snapshot
from tests._records import write_records
from tfrecord_lite._storage.publish import recover

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill harness forks its runs")

KILLS = 20  # per command: at sampled steps, and at least 4 at random moments in time
TIMED_KILLS = 4
SEED = 12


def images(folder: Path, classes: dict[str, int], prefix: str = "") -> None:
    from PIL import Image

    for k, (name, n) in enumerate(classes.items()):
        (folder / name).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            blue = 7 + (ord(prefix[0]) if prefix else 0)  # every image its own bytes: appends skip repeats
            Image.new("RGB", (5, 4), (k * 60, i * 8, blue)).save(folder / name / f"{prefix}{i}.png")


def packed(base: Path) -> None:
    """An image dataset out/photos (4 images a shard), new images in more/ (one new class), and
    clean/photos, an earlier output of remove-images."""
    from tfrecord_lite import images as im

    images(base / "photos", {"cat": 4, "dog": 3})
    im.pack_images(base / "photos", prefix=base / "out" / "photos", max_records=4)
    images(base / "more", {"cat": 2, "dog": 2, "bird": 2}, prefix="m")
    im.remove_images(tfr.ShardedRecords(str(base / "out" / "photos")).paths, prefix=base / "clean" / "photos",
                     filenames={"dog/0.png"})  # fmt: skip


def record_files(base: Path) -> None:
    """in.tfrecord, b.tfrecord.gz and an output of an earlier run of each command."""
    write_records(base / "in.tfrecord", [record(i) for i in range(60)])
    write_records(base / "b.tfrecord.gz", [record(i) for i in range(60, 90)], "gzip")
    write_records(base / "all.tfrecord", [b"an older merge"])
    (base / "split").mkdir()
    write_records(base / "split" / "train.tfrecord", [b"an older split"])
    (base / "gz").mkdir()
    write_records(base / "gz" / "in.tfrecord.gz", [b"an older conversion"], "gzip")
    with tfr.ShardedWriter(str(base / "out" / "ds"), num_shards=2) as w:
        for i in range(10):
            w.write(b"an older reshard %d" % i)


def tables(base: Path) -> None:
    """rows.parquet (200 rows) and old.tfrecord, an earlier output of the conversions."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = pa.table({"id": list(range(200)), "name": [f"row {i}" * (1 + i % 5) for i in range(200)]})
    pq.write_table(rows, base / "rows.parquet", row_group_size=32)
    write_records(base / "old.tfrecord", [b"an older conversion"])


@dataclass
class Scenario:
    setup: Callable[[Path], None]
    argv: list[str]
    target: str = ""  # the output whose leftovers the next run recovers ("": each file on its own, like `index`)
    idempotent: bool = True  # a rerun after success changes nothing (an API append appends again)
    needs: str = ""


SCENARIOS = {
    "pack-images --append": Scenario(
        packed, ["pack-images", "more", "out/photos", "--append", "--max-records", "2", "-q"], "out/photos", needs="PIL"
    ),
    "remove-images": Scenario(
        packed,
        [
            "remove-images",
            "out",
            "-o",
            "clean/photos",
            "--filename",
            "cat/1.png",
            "--max-records",
            "2",
            "--force",
            "-q",
        ],
        "clean/photos",
        needs="PIL",
    ),
    "reshard": Scenario(
        record_files, ["reshard", "in.tfrecord", "-o", "out/ds", "--max-records", "4", "--force", "-q"], "out/ds"
    ),
    "merge": Scenario(
        record_files, ["merge", "in.tfrecord", "b.tfrecord.gz", "-o", "all.tfrecord", "--force", "-q"], "all.tfrecord"
    ),
    "split": Scenario(
        record_files,
        ["split", "in.tfrecord", "--ratio", "50/30/20", "--shuffle", "-o", "split/", "--force", "-q"],
        "split",
    ),
    "convert": Scenario(
        record_files, ["convert", "in.tfrecord", "b.tfrecord.gz", "gz/", "--to", "gzip", "--force", "-q"], "gz"
    ),
    "index": Scenario(record_files, ["index", "in.tfrecord", "all.tfrecord", "--text", "-q"]),
    "ShardedWriter(append=True)": Scenario(record_files, ["@sharded", "out/ds", "40"], "out/ds", idempotent=False),
    "convert from Parquet": Scenario(
        tables,
        ["convert", "rows.parquet", "old.tfrecord", "--batch-size", "16", "--force", "-q"],
        "old.tfrecord",
        needs="pyarrow",
    ),
    "write_arrow": Scenario(tables, ["@write_arrow", "rows.parquet", "old.tfrecord"], "old.tfrecord", needs="pyarrow"),
}


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runner]:
    with runner(tmp_path_factory.mktemp("crashkit")) as r:
        yield r


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    """A folder for the runs: in memory (/dev/shm) where there is one, as the writers fsync every file."""
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(dir=shm)) if shm.is_dir() and os.access(shm, os.W_OK) else tmp_path / "work"
    folder.mkdir(exist_ok=True)
    yield folder
    shutil.rmtree(folder)


def prepared(scenario: Scenario, work: Path) -> Path:
    if scenario.needs:
        pytest.importorskip(scenario.needs)
    base = work / "base"
    base.mkdir()
    scenario.setup(base)
    return base


def fresh_copy(base: Path, name: str) -> Path:
    work = base.parent / name
    shutil.copytree(base, work)  # copy2 keeps mtimes: the sidecars stay fresh
    return work


def check_after_kill(work: Path, old: dict[str, str], new: dict[str, str], scenario: Scenario) -> None:
    """No partial or foreign file under a final name; the old state, the new one, or past the commit point."""
    now = snapshot(work)
    for name, digest in now.items():
        assert digest in (old.get(name), new.get(name)), f"{name} is neither its old nor its new version"
    if not scenario.target:
        assert all(old[name] == now.get(name) for name in old if name not in new), "an original was lost"
        return
    assert now in (old, new) or committed(work), "a mix of old and new files without a committed journal"
    recover(work / scenario.target)  # what the next run on this output does first
    assert snapshot(work) in (old, new), "recovery did not lead to the old state or the new one"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_killed_anywhere_then_rerun(name: str, kit: Runner, work: Path) -> None:
    scenario = SCENARIOS[name]
    base = prepared(scenario, work)
    old = snapshot(base)
    clean = kit.run(scenario.argv, fresh_copy(base, "clean"))
    assert clean.code == 0 and not clean.signal, clean
    new = snapshot(base.parent / "clean")
    assert new != old and hidden(base.parent / "clean") == []
    rng = random.Random(f"{SEED} {name}")
    steps = sorted(rng.sample(range(1, clean.steps + 1), min(KILLS - TIMED_KILLS, clean.steps)))
    moments = [rng.uniform(0, clean.seconds) for _ in range(KILLS - len(steps))]
    kills = [{"kill_at": k} for k in steps] + [{"kill_after": t} for t in moments]
    for n, kill in enumerate(kills):
        work = fresh_copy(base, f"kill{n}")
        ended = kit.run(scenario.argv, work, **kill)  # type: ignore[arg-type]
        assert ended.killed or ("kill_after" in kill and ended.code == 0), (kill, ended)
        check_after_kill(work, old, new, scenario)
        rerun = kit.run(scenario.argv, work)
        assert rerun.code == 0, (kill, rerun)
        assert snapshot(work) == new or not scenario.idempotent, kill
        assert hidden(work) == [], kill
        shutil.rmtree(work)


def test_killed_write_through_writer_loses_only_the_torn_record(kit: Runner, work: Path) -> None:
    """buffered=False, no flush(): every record whose write() returned is in the file, whether the kill
    tears the next record (at a write step: the first 32 records go to os.writev), lands before a
    record is stored into the map (the later steps: the file then ends with zero bytes, reported as
    a truncated tail), or lands at a random moment (in a store, too)."""
    path = work / "log.tfrecord"
    rng = random.Random(SEED)
    kills = [{"kill_at": k + 2} for k in rng.sample(range(40), 16)]  # step 1 takes the lock; k+2 tears record k
    kills += [{"kill_after": rng.uniform(0.01, 0.3)} for _ in range(TIMED_KILLS)]
    for kill in kills:
        path.unlink(missing_ok=True)
        ended = kit.run(["@plain", str(path), "0", "1000000", "", "through"], work, **kill)  # type: ignore[arg-type]
        assert ended.killed, kill
        returned = int(ended.output.split()[-1]) if ended.output.split() else 0  # write() calls that returned
        got: list[bytes] = []
        torn_at = None
        try:
            got.extend(tfr.iter_records(path))
        except tfr.TruncatedRecordError as err:  # only ever the record in flight, at the end
            torn_at = err.offset
        assert got == [record(i) for i in range(len(got))], kill
        assert returned <= len(got) <= returned + 1, (kill, returned, len(got))
        assert torn_at in (None, sum(len(r) + 16 for r in got)), kill
        if "kill_at" in kill:
            assert len(got) == returned == kill["kill_at"] - 2 and torn_at is not None
            with pytest.raises(tfr.TruncatedRecordError, match="truncate_partial=True"):
                tfr.TFRecordWriter(path, append=True)
        assert kit.run(["@plain", str(path), "0", "5", "append"], work).code == 0
        assert list(tfr.iter_records(path)) == got + [record(i) for i in range(5)]
        assert hidden(work) == [], kill


def test_killed_buffered_writer_keeps_whole_records_and_one_torn_tail(kit: Runner, work: Path) -> None:
    """The default (buffered) writer, no flush(): a kill loses the unflushed tail. The file holds a
    prefix of the records written, whole, then at most one torn record, which readers report as a
    truncated last record and append=True, truncate_partial=True cuts off."""
    path = work / "log.tfrecord"
    rng = random.Random(SEED)
    kills: list[dict[str, float]] = [{"kill_at": k} for k in (2, 3, 4)]  # step 1 takes the lock; then buffers
    kills += [{"kill_after": rng.uniform(0.05, 0.4)} for _ in range(TIMED_KILLS)]
    for kill in kills:
        path.unlink(missing_ok=True)
        ended = kit.run(["@plain", str(path), "0", "1000000", "", "buffered"], work, **kill)  # type: ignore[arg-type]
        assert ended.killed, kill
        returned = int(ended.output.split()[-1]) if ended.output.split() else 0
        got: list[bytes] = []
        torn_at = None
        try:
            got.extend(tfr.iter_records(path))
        except tfr.TruncatedRecordError as err:
            torn_at = err.offset
        assert got == [record(i) for i in range(len(got))], kill
        # a write() that drains the buffer puts its own record out too: killed before the child
        # reports that it returned, the file holds one record more than were reported
        assert len(got) <= returned + 1, (kill, returned, len(got))
        assert torn_at in (None, sum(len(r) + 16 for r in got)), kill
        if "kill_at" in kill:  # a buffer cut in half: whole records of it, then a torn one
            assert torn_at is not None and len(got) > 0, (kill, len(got))
        assert kit.run(["@plain", str(path), "0", "5", "append", "buffered"], work).code == 0
        assert list(tfr.iter_records(path)) == got + [record(i) for i in range(5)]
        assert hidden(work) == [], kill


@pytest.mark.parametrize("name", [n for n in SCENARIOS if SCENARIOS[n].target])
def test_disk_full(name: str, kit: Runner, work: Path) -> None:
    scenario = SCENARIOS[name]
    base = prepared(scenario, work)
    old = snapshot(base)
    clean = fresh_copy(base, "clean")
    assert kit.run(scenario.argv, clean).code == 0
    written = [(clean / name).stat().st_size for name, digest in snapshot(clean).items() if old.get(name) != digest]
    ended = kit.run(scenario.argv, base, fsize=max(written) // 2)  # the largest new file does not fit
    assert ended.code == 1 and "File too large" in ended.output and "Traceback" not in ended.output, ended
    assert "nothing was published" in ended.output, ended.output
    assert snapshot(base) == old and hidden(base) == []


@pytest.mark.parametrize("mode", ["buffered", "through"])
def test_disk_full_plain_writer(kit: Runner, tmp_path: Path, mode: str) -> None:
    path = tmp_path / "log.tfrecord"
    ended = kit.run(["@plain", str(path), "0", "400", "", mode], tmp_path, fsize=3000)
    assert ended.code == 1 and f"File too large: writing {path} failed" in ended.output, ended
    got = list(tfr.iter_records(path))  # cut back to its last complete record: no error
    assert got == [record(i) for i in range(len(got))] and path.stat().st_size <= 3000
    if mode == "through":  # every record that fitted was written before the failing one
        assert path.stat().st_size > 0
    assert hidden(tmp_path) == []


# ---------------------------------------------------------------- concurrency

APPENDER = """
import sys, time, tfrecord_lite as tfr
from tests._crashkit import record
with tfr.TFRecordWriter(sys.argv[1], append=True) as w:
    for i in range(int(sys.argv[2]), int(sys.argv[3])):
        w.write(record(i))
        if i % 7 == 0:
            w.flush()
            time.sleep(0.001)
"""


def start_appender(path: Path, start: int, stop: int) -> subprocess.Popen[bytes]:
    root = Path(__file__).resolve().parents[2]
    return subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(start), str(stop)], cwd=root)


def test_readers_of_a_growing_file_see_complete_records(tmp_path: Path) -> None:
    path = tmp_path / "growing.tfrecord"
    write_records(path, [record(i) for i in range(10)])
    before = tfr.TFRecordFile(path)  # opened before the append: keeps its 10 records
    writer = start_appender(path, 10, 3000)
    seen = []
    while writer.poll() is None or not seen or seen[-1] < 3000:
        got: list[bytes] = []
        torn_at = None
        try:
            got.extend(tfr.iter_records(path))
        except tfr.TruncatedRecordError as err:  # a record being written: only ever at the end
            torn_at = err.offset
        assert torn_at in (None, sum(len(r) + 16 for r in got))
        assert got == [record(i) for i in range(len(got))]
        assert len(before) == 10 and before[9] == record(9) and list(before) == got[:10]
        seen.append(len(got))
        if writer.poll() is not None and len(seen) > 1 and seen[-1] == seen[-2]:
            break
    assert writer.wait() == 0 and seen[-1] == 3000 and seen == sorted(seen)
    before.close()
    with tfr.TFRecordFile(path) as after:  # the stale sidecar is noticed and extended
        assert len(after) == 3000 and after[2999] == record(2999)


def test_two_appends_at_once_never_interleave(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    from tfrecord_lite import images as im

    images(tmp_path / "photos", {"cat": 3})
    prefix = tmp_path / "out" / "photos"
    im.pack_images(tmp_path / "photos", prefix=prefix)
    for k in "ab":
        images(tmp_path / k, {f"class_{k}": 30}, prefix=k)
    root = Path(__file__).resolve().parents[2]
    outcomes = []
    for _ in range(2):
        runs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tfrecord_lite",
                    "pack-images",
                    str(tmp_path / k),
                    str(prefix),
                    "--append",
                    "--max-records",
                    "8",
                    "-q",
                ],
                cwd=root,
                stderr=subprocess.PIPE,
                text=True,
            )
            for k in "ab"
        ]
        for run in runs:
            _, err = run.communicate(timeout=120)
            outcomes.append(run.returncode)
            # the loser names the winner's pid, or "another process" if it lost before the pid was written
            assert run.returncode == 0 or "is being written by" in err, err
    shards = tfr.ShardedRecords(str(prefix))
    numbers = [int(Path(p).name.split("-")[1]) for p in shards.paths]
    assert numbers == list(range(len(numbers)))  # one shard per number, no gap, no clash
    labels = im.load_label_map(str(prefix) + ".labels.json")
    recs = list(im.iter_image_records(shards.paths))
    assert all(labels[r.text] == r.label for r in recs)  # no lost label
    names = [r.filename for r in recs]
    assert len(names) == len(set(names)) == 3 + 30 * len({"a", "b"} & {r.text[-1] for r in recs})
    assert 0 in outcomes and hidden(tmp_path / "out") == []
