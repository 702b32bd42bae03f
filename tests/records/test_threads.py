# The thread map behind num_threads= (tfrecord_lite/_records/threads.py): results in input order
# whatever thread finishes first, at most `depth` chunks read ahead of the consumer, an error (from
# the input or from the work) raised at its item after the items before it, the threads gone after a
# break, an exception, KeyboardInterrupt and at interpreter exit, per-item random draws that do not
# depend on the threads; and iter_example_batches(num_threads=) equal to one thread, damage included.
from __future__ import annotations

import gc
import os
import pickle
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._records import record_spans, write_records
from tests._threads import pool_threads, wait_for_threads
from tfrecord_lite._records.threads import ThreadMap, check_num_threads, item_random, ordered_map

pytestmark = pytest.mark.threads


def jittered(x: int) -> int:
    """x squared, after a pause that makes later items finish before earlier ones."""
    time.sleep(random.Random(x).random() * 0.002)
    return x * x


def until_error(items: Any) -> tuple[list[Any], Exception | None]:
    """The items an iterable gives before it raises, and what it raised (None: it ended)."""
    got: list[Any] = []
    try:
        for item in items:
            got.append(item)
    except Exception as exc:
        return got, exc
    return got, None


@pytest.mark.parametrize("num_threads", [2, 3, 4])
@pytest.mark.parametrize("depth", [None, 1, 5])
def test_order_is_the_input_order(num_threads: int, depth: int | None) -> None:
    assert list(ordered_map(jittered, range(300), num_threads, depth=depth)) == [x * x for x in range(300)]


def test_one_thread_is_map() -> None:
    assert isinstance(ordered_map(abs, [-1], 1), map)
    assert list(ordered_map(abs, [], 3)) == []


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "2", None])
def test_num_threads_is_checked(value: object) -> None:
    with pytest.raises((TypeError, ValueError), match="num_threads must be an int >= 1"):
        check_num_threads(value)
    with pytest.raises((TypeError, ValueError), match="num_threads must be an int >= 1"):
        ThreadMap(value)  # type: ignore[arg-type]
    assert check_num_threads(np.int64(3)) == 3


def test_read_ahead_is_bounded() -> None:
    read = []

    def source() -> Iterator[int]:
        for i in range(200):
            read.append(i)
            yield i

    def slow(x: int) -> int:
        time.sleep(0.003)  # longer than a chunk aims at: one item per chunk
        return x

    for got, x in enumerate(ordered_map(slow, source(), 2, depth=3)):
        assert x == got
        time.sleep(0.004)  # a slow consumer: the threads wait for room
        assert len(read) - got - 1 <= 3


def alone() -> Any:
    """A Tuning whose verdict is that the consumer computes alone (for a while yet)."""
    from tfrecord_lite._records.threads import Tuning

    memory = Tuning()
    memory.winner, memory.phase, memory.exploit = "inline", "exploit-inline", 60.0
    return memory


@pytest.mark.parametrize("computing_alone", [False, True])
def test_error_in_the_work_comes_at_its_item(computing_alone: bool) -> None:
    def fail_at_37(x: int) -> int:
        if x == 37:
            raise ValueError("record 37")
        return jittered(x)

    got, error = until_error(ordered_map(fail_at_37, range(100), 3, memory=alone() if computing_alone else None))
    assert isinstance(error, ValueError) and str(error) == "record 37"
    assert got == [x * x for x in range(37)]


@pytest.mark.parametrize("computing_alone", [False, True])
def test_error_in_the_input_comes_at_its_item(computing_alone: bool) -> None:
    def source() -> Iterator[int]:
        yield from range(53)
        raise tfr.CorruptRecordError("damaged after 53 records")

    got, error = until_error(ordered_map(jittered, source(), 2, memory=alone() if computing_alone else None))
    assert isinstance(error, tfr.CorruptRecordError) and "after 53" in str(error)
    assert got == [x * x for x in range(53)]


@pytest.mark.parametrize("computing_alone", [False, True])
def test_break_stops_the_threads_and_closes_the_input(computing_alone: bool) -> None:
    before = pool_threads()
    closed = []

    def source() -> Iterator[int]:
        try:
            yield from range(10_000)
        finally:
            closed.append(True)

    mapped = ordered_map(jittered, source(), 4, memory=alone() if computing_alone else None)
    for x in mapped:
        if x > 100:
            break
    assert (pool_threads() > before) is not computing_alone  # the threads wait for room; alone: none started
    del mapped  # as a DataLoader drops its iterator
    gc.collect()
    assert wait_for_threads(before) <= before
    assert closed == [True]


def test_keyboard_interrupt_in_the_consumer_stops_the_threads() -> None:
    before = pool_threads()

    def consume() -> None:
        for x in ordered_map(jittered, range(10_000), 2):
            if x > 400:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        consume()
    gc.collect()
    assert wait_for_threads(before) <= before


def test_keyboard_interrupt_on_a_thread_reaches_the_consumer() -> None:
    def interrupted(x: int) -> int:
        if x == 5:
            raise KeyboardInterrupt
        return x

    with pytest.raises(KeyboardInterrupt):
        list(ordered_map(interrupted, range(50), 2))


def test_the_interpreter_exits_with_threads_mid_epoch(tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text(
        "import time\n"
        "from tfrecord_lite._records.threads import ordered_map\n"
        "def slow(x):\n"
        "    time.sleep(0.01)\n"
        "    return x\n"
        "mapped = ordered_map(slow, iter(range(10**9)), 2)\n"
        "assert next(mapped) == 0\n"
        "print('left running')\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "left running\n"


def draws(x: int) -> tuple[int, float]:
    """An augmentation's random draws for item x."""
    time.sleep(random.Random(x).random() * 0.001)
    rng = item_random()
    return x, rng.random()


def test_item_random_does_not_depend_on_the_threads() -> None:
    assert item_random() is random  # not on threads: the module, as before
    runs = []
    for num_threads in (2, 3, 4, 2):
        random.seed(7)
        runs.append(list(ordered_map(draws, range(500), num_threads)))
    assert runs[0] == runs[1] == runs[2] == runs[3]
    assert len({value for _, value in runs[0]}) == 500  # every item its own generator
    mapped = ThreadMap(3)
    random.seed(7)
    first = mapped.map(draws, list(range(40)))
    random.seed(7)
    assert ThreadMap(2).map(draws, list(range(40))) == first


def test_thread_map_order_errors_and_pickling() -> None:
    mapped = ThreadMap(3)
    assert mapped.map(jittered, list(range(100))) == [x * x for x in range(100)]
    assert mapped.map(pow, [2, 3], 3) == [8, 27]  # extra arguments follow each item
    assert mapped.map(jittered, []) == []

    def fail(x: int) -> int:
        if x in (41, 90):
            raise ValueError(f"item {x}")
        return x

    with pytest.raises(ValueError, match="item 41"):  # the first error in the list's order
        mapped.map(fail, list(range(100)))
    copy = pickle.loads(pickle.dumps(mapped))
    assert copy._pool is None and copy.num_threads == 3
    assert copy.map(jittered, list(range(10))) == [x * x for x in range(10)]


def test_thread_map_leaves_a_stalled_threads_share_to_the_others() -> None:
    where: list[bool] = []
    stalled = threading.Event()

    def stalling(x: int) -> int:  # the pool's thread stalls on its first item, as one without a core does
        on_main = threading.current_thread() is threading.main_thread()
        if not on_main and not stalled.is_set():
            stalled.set()
            time.sleep(0.3)
        where.append(on_main)
        return x + 1

    assert ThreadMap(2).map(stalling, list(range(80))) == list(range(1, 81))
    assert sum(where) >= 60  # the calling thread took the pieces the stalled one did not (halves: 40)


SPEC = {
    "id": tfr.FixedLenFeature([], "int64"),
    "blob": tfr.FixedLenFeature([], "bytes"),
    "var": tfr.VarLenFeature("float32"),
}


def write_examples(path: Path, n: int, blob: int) -> Path:
    records = (
        tfr.encode_example(
            {"id": i, "blob": bytes([i % 251]) * (blob + i % 7), "var": np.arange(i % 4, dtype=np.float32)}
        )
        for i in range(n)
    )
    return write_records(path, records)


def flat(batches: Iterator[dict[str, object]]) -> list[tuple[int, bytes, list[float]]]:
    out = []
    for batch in batches:
        var = batch["var"]
        for k, (i, b) in enumerate(zip(batch["id"], batch["blob"], strict=True)):  # type: ignore[call-overload]
            out.append((int(i), bytes(b), var.row(k).tolist()))  # type: ignore[attr-defined]
    return out


@pytest.mark.parametrize("blob", [10, 40_000])  # batches in the read buffer; large records as bytes
@pytest.mark.parametrize("copy", [True, False])
def test_iter_example_batches_threads_equal_one_thread(tmp_path: Path, blob: int, copy: bool) -> None:
    path = write_examples(tmp_path / "a.tfrecord", 700 if blob < 1000 else 120, blob)
    one = flat(tfr.iter_example_batches(path, features=SPEC, batch_size=32, copy=copy))
    assert [i for i, _, _ in one] == list(range(len(one)))
    for num_threads in (2, 4):
        assert (
            flat(tfr.iter_example_batches(path, features=SPEC, batch_size=32, copy=copy, num_threads=num_threads))
            == one
        )


def test_iter_example_batches_threads_damage(tmp_path: Path) -> None:
    path = write_examples(tmp_path / "a.tfrecord", 300, 10)
    data = bytearray(path.read_bytes())
    start, _ = record_spans(bytes(data))[200]
    data[start + 20] ^= 0xFF  # record 200's payload: its CRC no longer matches
    path.write_bytes(bytes(data))
    delivered = []
    for num_threads in (1, 2):
        got, error = until_error(tfr.iter_example_batches(path, features=SPEC, batch_size=64, num_threads=num_threads))
        assert isinstance(error, tfr.CorruptRecordError)
        delivered.append(flat(iter(got)))
        skipped = flat(
            tfr.iter_example_batches(path, features=SPEC, batch_size=64, num_threads=num_threads, on_error="skip")
        )
        assert [i for i, _, _ in skipped] == [i for i in range(300) if i != 200]
    assert delivered[0] == delivered[1]
    assert [i for i, _, _ in delivered[0]] == list(range(len(delivered[0])))
    with pytest.raises(ValueError, match="num_threads must be an int >= 1, found 0"):
        tfr.iter_example_batches(path, features=SPEC, num_threads=0)


def test_order_holds_while_the_consumer_and_the_threads_take_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    from tfrecord_lite._records import threads

    # short phases, so that one run measures the threads, computes alone, and goes back, many times
    monkeypatch.setattr(threads, "_PROBE_THREADS", 0.01)
    monkeypatch.setattr(threads, "_PROBE_INLINE", 0.005)
    monkeypatch.setattr(threads, "_EXPLOIT", 0.02)
    monkeypatch.setattr(threads, "_EXPLOIT_MAX", 0.02)
    where = []

    def named(x: int) -> int:
        where.append(threading.current_thread() is threading.main_thread())
        return jittered(x)

    got, error = until_error(ordered_map(named, range(2000), 3))
    assert error is None and got == [x * x for x in range(2000)]
    assert any(where) and not all(where)  # both the consumer and the threads computed items

    def fail_at_1500(x: int) -> int:
        if x == 1500:
            raise ValueError("item 1500")
        return jittered(x)

    got, error = until_error(ordered_map(fail_at_1500, range(2000), 2))
    assert isinstance(error, ValueError) and got == [x * x for x in range(1500)]


def test_iter_sequence_example_batches_threads_equal_one_thread(tmp_path: Path) -> None:
    with tfr.TFRecordWriter(tmp_path / "s.tfrecord") as w:
        for i in range(250):
            w.write_sequence_example({"id": i}, {"steps": [[float(i), float(k)] for k in range(i % 5)]})
    specs = {
        "context_features": {"id": tfr.FixedLenFeature([], "int64")},
        "sequence_features": {"steps": tfr.FixedLenSequenceFeature([2], "float32")},
    }

    def read(num_threads: int) -> list[tuple[int, list[list[float]]]]:
        out = []
        for context, lists, lengths in tfr.iter_sequence_example_batches(
            tmp_path / "s.tfrecord", batch_size=16, num_threads=num_threads, **specs
        ):
            for k, i in enumerate(context["id"]):
                out.append((int(i), lists["steps"][k][: lengths["steps"][k]].tolist()))
        return out

    one = read(1)
    assert [i for i, _ in one] == list(range(250)) and one[7][1] == [[7.0, 0.0], [7.0, 1.0]]
    assert read(3) == one


def test_a_pass_starts_the_way_the_last_one_measured() -> None:
    from tfrecord_lite._records.threads import Tuning

    where: list[bool] = []

    def named(x: int) -> int:
        where.append(threading.current_thread() is threading.main_thread())
        return x + 1

    memory = Tuning()
    memory.winner, memory.phase = "inline", "exploit-inline"  # the consumer alone: no item on a thread
    assert list(ordered_map(named, range(300), 2, memory=memory)) == list(range(1, 301))
    assert all(where)
    where.clear()
    memory.winner, memory.phase, memory.elapsed = "threads", "exploit-threads", 0.0
    assert list(ordered_map(named, range(300), 2, memory=memory)) == list(range(1, 301))
    assert not any(where)
    assert pickle.loads(pickle.dumps(memory)).winner == ""  # another process measures for itself


def test_computing_alone_starts_no_thread_and_reads_an_item_at_a_time() -> None:
    before, events = pool_threads(), []

    def source() -> Iterator[int]:
        for x in range(500):
            events.append(("read", x))
            yield x

    def work(x: int) -> int:
        events.append(("computed", x))
        assert pool_threads() == before
        return x * 2

    got = []
    for y in ordered_map(work, source(), 2, memory=alone()):
        events.append(("consumed", y // 2))
        got.append(y)
    assert got == [x * 2 for x in range(500)]
    assert events == [(what, x) for x in range(500) for what in ("read", "computed", "consumed")]


def test_passes_shorter_than_a_probe_add_up_to_a_verdict() -> None:
    from tfrecord_lite._records.threads import Tuning

    def held(x: int) -> int:  # pure Python: holds the GIL, so threads only add hand-overs
        return sum(range(x % 7 + 200))

    memory = Tuning()
    for _ in range(5000):  # passes of a millisecond or so each, as a small epoch is
        assert list(ordered_map(held, range(300), 2, memory=memory)) == [held(x) for x in range(300)]
        if memory.winner:
            break
    assert memory.winner in ("inline", "threads") and memory.threads_rate > 0


def test_pure_python_work_goes_to_the_threads_only_without_the_gil() -> None:
    """With the GIL, threads running pure Python take turns on it: they lose to the consumer computing
    alone. On free-threaded CPython they run at once, and win when two cores are free."""
    from tfrecord_lite._records.threads import Tuning

    def held(x: int) -> int:  # pure Python: with the GIL, the process uses one core
        return sum(range(x % 7 + 2000))

    memory = Tuning()
    items = ordered_map(held, range(10**6), 2, memory=memory)
    began, got = time.perf_counter(), []
    for value in items:
        got.append(value)
        if time.perf_counter() - began > 0.5:  # a probe of the threads (and of the consumer) is 0.15 s
            break
    items.close()  # type: ignore[attr-defined]  # a generator: closing it saves where the measuring stood
    assert got == [held(x) for x in range(len(got))]
    if getattr(sys, "_is_gil_enabled", lambda: True)():
        assert (memory.winner, memory.phase) == ("inline", "exploit-inline")
    else:  # the threads win where two cores are free, which a busy machine may not give them
        assert (memory.winner, memory.phase) in {("inline", "exploit-inline"), ("threads", "exploit-threads")}


def test_a_chunk_of_large_records_or_batches_of_them_is_bounded_by_bytes() -> None:
    from tfrecord_lite._records.threads import _held_bytes

    record = bytes(64 << 10)
    assert _held_bytes([record] * 3) == 3 * len(record)
    assert _held_bytes([[record] * 32, [record] * 32]) == 64 * len(record)
    assert _held_bytes([1, 2]) is None and _held_bytes([]) is None and _held_bytes([[]]) is None


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no affinity masks here")
def test_the_usable_cores_follow_the_affinity_mask_of_each_process() -> None:
    script = (
        "import os\n"
        "from tfrecord_lite._cores import usable_cores\n"
        "all_cores = usable_cores()\n"
        "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(usable_cores())\n"
        "print(all_cores, usable_cores(), os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) == len(os.sched_getaffinity(0))
    assert out[1:] == [out[0], "1"]  # asked once per process: the parent keeps its answer, the child asks anew
