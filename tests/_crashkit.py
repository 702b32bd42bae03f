# The kill harness behind test_crash.py. A zygote process imports the library (and Pillow)
# once and forks one child per run, so a run costs milliseconds, not an interpreter start.
# The child counts the file-system steps the writers take (os.replace, os.rename, os.unlink,
# os.mkdir, os.fsync, os.ftruncate, os.truncate, shutil.rmtree, and every block of records
# TFRecordWriter pushes out: one record, or a buffer of them) and sends itself SIGKILL at
# the k-th one; the record or block is cut in half first, so the kill tears a record. Kill
# points are drawn, seeded, from the steps a clean run takes, so every phase (writing,
# committing, renaming, cleaning up) is hit.
# A run can also get a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored): writes past it fail
# with EFBIG, as on a full disk.
#
# The checks: `snapshot` maps every visible file to a digest (an index sidecar to whether it
# is fresh for its file, since it records the file's mtime); `hidden` lists what a run left.
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_HOOKED = ("replace", "rename", "unlink", "mkdir", "fsync", "ftruncate", "truncate")


def _install_kill(kill_at: int, counter: list[int]) -> None:
    """Count the writers' file-system steps; SIGKILL this process at step `kill_at` (0: never). A step
    is a call of the os functions in _HOOKED, a write (torn in half by the kill), or a write-through
    writer's store of a record into its map (killed before it: a map is written by no call to tear)."""
    from tfrecord_lite._records.writer import TFRecordWriter

    def step() -> bool:
        counter[0] += 1
        return counter[0] == kill_at

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def hooked(original: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if step():
                die()
            return original(*args, **kwargs)

        return call

    for name in _HOOKED:
        setattr(os, name, hooked(getattr(os, name)))
    shutil.rmtree = hooked(shutil.rmtree)  # type: ignore[assignment]
    emit = TFRecordWriter._emit

    def torn_emit(self: TFRecordWriter, size: int, *parts: bytes) -> None:
        if step():
            emit(self, size // 2, b"".join(parts)[: size // 2])
            die()
        emit(self, size, *parts)

    TFRecordWriter._emit = torn_emit  # type: ignore[method-assign]
    from tfrecord_lite._records.writer import _ThroughWriter

    store = _ThroughWriter.write

    def mapped_write(self: _ThroughWriter, record: bytes) -> None:  # a write-through writer's store into its map
        if self._map is not None and self._at + len(record) + 16 <= self._room and step():
            die()
        store(self, record)

    _ThroughWriter.write = mapped_write  # type: ignore[method-assign]


def _run_child(request: dict[str, Any], output: int) -> int:
    os.chdir(request["cwd"])
    os.dup2(output, 1)  # a pipe: no file-size limit applies to it
    os.dup2(output, 2)
    if request.get("fsize"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (request["fsize"], request["fsize"]))
    if request.get("kill_after"):  # a kill at a moment in time rather than at a step
        signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGKILL))
        signal.setitimer(signal.ITIMER_REAL, request["kill_after"])
    counter = [0]
    _install_kill(request.get("kill_at", 0), counter)
    started = time.perf_counter()
    argv = request["argv"]
    if argv[0].startswith("@"):
        try:
            status = API[argv[0][1:]](*argv[1:])
        except OSError as err:  # reported as the command line reports it
            print(f"error: {err}", file=sys.stderr)
            status = 1
    else:
        from tfrecord_lite.cli import main

        status = main(argv)
    signal.setitimer(signal.ITIMER_REAL, 0)
    Path(request["log"], "steps").write_text(f"{counter[0]} {time.perf_counter() - started}")
    return int(status or 0)


def record(i: int) -> bytes:
    """The i-th record the API writers below write: sizes vary, contents name their index."""
    return f"record {i};".encode() * (1 + i % 7)


def write_sharded(prefix: str, n: str) -> int:
    """ShardedWriter(append=True): `n` more records, 3 per shard."""
    import tfrecord_lite as tfr

    with tfr.ShardedWriter(prefix, max_records=3, append=True) as w:
        for i in range(int(n)):
            w.write(record(i))
    return 0


def write_plain(path: str, start: str, stop: str, append: str = "", mode: str = "through") -> int:
    """TFRecordWriter: records start..stop-1, never flushed; after each write() returns, prints how
    many have returned. `mode` "through" writes with buffered=False, "buffered" with the default."""
    import tfrecord_lite as tfr

    through = {"through": True, "buffered": False}[mode]
    with tfr.TFRecordWriter(path, append=bool(append), truncate_partial=bool(append), buffered=not through) as w:
        for n, i in enumerate(range(int(start), int(stop)), 1):
            w.write(record(i))
            print(n, flush=True)
    return 0


def write_from_parquet(source: str, dest: str) -> int:
    """arrow.write_arrow: the rows of a Parquet file as Examples."""
    import pyarrow.parquet as pq

    from tfrecord_lite import arrow

    arrow.write_arrow(pq.ParquetFile(source).iter_batches(batch_size=16), dest)
    return 0


API: dict[str, Callable[..., int]] = {"sharded": write_sharded, "plain": write_plain, "write_arrow": write_from_parquet}


def zygote() -> None:
    """Serve run requests (one JSON line each on stdin) by forking; answer with how each ended."""
    sys.path[0] = os.getcwd()  # `-c` put '' there, which would follow the children's chdir
    with contextlib.suppress(ImportError):
        import PIL.Image  # noqa: F401  # imported once, here, for every pack-images child

    import tfrecord_lite._records.example_batches
    import tfrecord_lite._records.random_access
    import tfrecord_lite.images  # noqa: F401
    from tfrecord_lite.cli import build_parser

    build_parser().parse_args(["count", "x"])  # compiles argparse's regular expressions once, here

    for line in sys.stdin:
        request = json.loads(line)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                os.close(read_end)
                code = _run_child(request, write_end)
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        os.close(write_end)
        with open(read_end, "rb") as output, open(os.path.join(request["log"], "output"), "wb") as log:
            shutil.copyfileobj(output, log)
        _, status = os.waitpid(pid, 0)
        reply = {"signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0}
        reply["code"] = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        print(json.dumps(reply), flush=True)


class Runner:
    """Runs commands (CLI argv, or '@function' of test_crash) in forked children of one zygote."""

    def __init__(self, root: Path) -> None:
        self.log = root / "logs"
        self.log.mkdir(parents=True, exist_ok=True)
        repo = Path(__file__).resolve().parent.parent
        self._proc = subprocess.Popen(
            [sys.executable, "-c", "from tests._crashkit import zygote; zygote()"],
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, argv: list[str], cwd: Path, *, kill_at: int = 0, kill_after: float = 0, fsize: int = 0) -> Result:
        """Run `argv` in `cwd`: killed at step `kill_at` or after `kill_after` seconds, or with writes
        limited to `fsize` bytes a file."""
        request = {"argv": argv, "cwd": str(cwd), "kill_at": kill_at, "kill_after": kill_after, "fsize": fsize}
        request["log"] = str(self.log)
        steps = self.log / "steps"
        steps.unlink(missing_ok=True)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        reply = json.loads(self._proc.stdout.readline())
        done = steps.read_text().split() if steps.exists() else ["0", "0"]
        return Result(reply["signal"], reply["code"], int(done[0]), float(done[1]), (self.log / "output").read_text())

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=30)


class Result:
    """How a run ended: killed by `signal`, or exit `code`; a finished run's steps and seconds, and
    what it printed (stdout and stderr)."""

    def __init__(self, signal: int, code: int, steps: int, seconds: float, output: str) -> None:
        self.signal, self.code, self.steps, self.seconds, self.output = signal, code, steps, seconds, output

    @property
    def killed(self) -> bool:
        return self.signal == signal.SIGKILL

    def __repr__(self) -> str:
        return f"Result(signal={self.signal}, code={self.code}, steps={self.steps}, output={self.output!r})"


@contextlib.contextmanager
def runner(root: Path) -> Iterator[Runner]:
    r = Runner(root)
    try:
        yield r
    finally:
        r.close()


def _walk(root: Path) -> Iterator[tuple[str, Path, bool]]:
    """(relative path, path, hidden) of every file under root (a name starting with '.' is hidden)."""
    for folder, dirs, files in os.walk(root):
        for name in files + [d for d in dirs if d.startswith(".")]:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            yield rel, path, any(part.startswith(".") for part in rel.split("/"))


def snapshot(root: Path) -> dict[str, str]:
    """Visible file -> sha256; an index sidecar -> 'fresh' or 'stale' for its record file."""
    from tfrecord_lite import TFRecordFile

    state: dict[str, str] = {}
    for rel, path, hidden in _walk(root):
        if hidden or not path.is_file():
            continue
        if rel.endswith(".tfrlidx"):
            try:
                TFRecordFile(str(path)[: -len(".tfrlidx")], index=str(path), on_stale="raise").close()
                state[rel] = "fresh"
            except Exception as err:  # any failure is a bad sidecar
                state[rel] = f"bad: {err}"
        else:
            state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def hidden(root: Path) -> list[str]:
    """What runs left behind: hidden files and folders (locks, staging folders, temporaries)."""
    return sorted(rel for rel, _, is_hidden in _walk(root) if is_hidden)


def committed(root: Path) -> bool:
    """Whether a killed run passed its commit point (a staging folder holds its journal)."""
    return any(root.rglob(".*.publish-*/journal.json"))
