"""Work on threads inside the process that iterates (`num_threads=`): decoding, CRCs, inflating and a
user's transform, in input order, in bounded memory.

Strategy: the heavy steps of loading (Pillow's and simplejpeg's decode, zlib, CRC32C, numpy copies)
release the GIL, so a few threads in one process run them in parallel with no pickling and no start-up.
`ordered_map` is a generator over an input iterator: its threads start at the first `next()` (never
before a fork, never pickled: a generator is neither), each takes the next chunk of items under the
input's lock (so reading the input runs on the threads too, one at a time, in order), computes it, and
files the results under the chunk's number; the consumer hands chunks out by number, so the order is
the input's whatever thread finishes first. At most `depth` chunks are taken and not yet handed out,
which bounds memory. A chunk a thread takes aims at about 5 ms of work (its size follows the time the
last one took), so items too small to pay for a hand-over between threads share one, and heavy ones (a
JPEG decode, ~0.7 ms) do not pay one each (chunks of 1 ms cost a 256x256 JPEG workload about 10 % of
its CPU). A chunk of records, or of batches of them, holds 256 KiB at most, so that they are still
in the caches when they are decoded (a chunk of 128 64 KiB records cost more than twice the CPU of
reading and decoding them one by one). A chunk the consumer computes alone is read and computed an
item at a time as it asks for them, as a plain `map` does: nothing is held and no list is built, so
computing alone costs about what `num_threads=1` costs (chunks read ahead, computed, then handed on ran
the seed's per-item call at 0.87 times its rate, an item at a time at 0.95-0.98); such a chunk lasts
about 1 ms, the consumer's own work between items included. A pass that starts computing alone starts
no thread until a probe of the threads is due.

Threads do not always pay: work that holds the GIL (pure Python, copies of a few KiB) only adds
hand-overs, and a machine whose cores are busy has none to give. So the consumer measures, as it
sees them, items per second with the threads (0.1 s) and computing chunks alone while the threads
wait (0.05 s), keeps the faster way for 2 s (twice as long each time it wins again, up to 8 s; 8 s at
once when one way is 1.3 times the other's rate or more, where noise cannot have made the verdict, so
that a clear winner pays for few probes), and measures again; computing alone it takes the next
chunk no thread has taken, so the order and the seeds are the same either way. Work the threads cannot
share shows early: a process that uses under 1.1 CPU seconds per second while its threads run (they
take turns on the GIL, as reading and decoding large records do, or find no free core) ends their
probe after 0.05 s, and the threads lose without the consumer's probe. A `Tuning` a dataset
keeps carries the verdict to its next pass, which starts the winning way. An error, from the
input or from the work, is filed in place of the item it belongs to: the items before it come out
first, then it is raised. Closing the generator (a `break`, an exception, KeyboardInterrupt in the
consumer, garbage collection) stops the threads and joins them (each finishes the chunk in hand);
at interpreter exit, an `atexit` hook stops those still running. All shared state is read and written
under one lock (the input and its position under a second, taken first), so it is correct without a
GIL (free-threaded CPython) too; the one read outside them, whether the consumer may take the next
chunk itself, is a hint that `take` checks under the lock.

`ThreadMap` maps a list (a map-style dataset's batch of indices) on a pool it keeps: the list cut into
contiguous pieces, four per thread, which the calling thread and the pool's take in turn, so that a
thread that gets no core (a busy machine) or slow items leaves its share to the others instead of being
waited for (halves, one per thread, made a loaded 2-core machine 12 % slower than one thread); the
pool is made in the process that maps (never pickled, a new one after a fork). A list whose work the
last calls say is under two milliseconds runs on the calling thread alone, where a hand-over would
cost more than it saves.

Random augmentation stays reproducible: on threads, each item is computed with a seed of its own, a
base drawn once from `random` plus its position in the input, and `item_random()` gives that item's
generator (code that is not on threads gets the `random` module itself, as before).
"""

from __future__ import annotations

import atexit
import itertools
import os
import random
import sys
import threading
import time
import weakref
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from tfrecord_lite._cores import usable_cores
from tfrecord_lite._example.validate import check_int

T = TypeVar("T")
R = TypeVar("R")

_CHUNK_SECONDS = 0.005  # the work a chunk of ordered_map's threads aims at
_ALONE_SECONDS = 0.001  # the time of a chunk the consumer computes alone, its own work between items included
_MAX_HERE = 1024  # items in a chunk the consumer computes alone at most (it holds none of them)
_MAX_CHUNK = 128  # items in one chunk at most (memory: depth x this many items in flight)
_CHUNK_BYTES = 256 << 10  # a chunk of records holds about this many bytes at most
_PROBE_THREADS, _PROBE_INLINE, _EXPLOIT, _EXPLOIT_MAX = 0.1, 0.05, 2.0, 8.0  # seconds: see _Modes
_PARALLEL = 1.1  # CPU seconds per second the threads must reach for their probe to go on
_CLEAR = 1.3  # a way this many times faster than the other holds for _EXPLOIT_MAX at once
_INLINE_SECONDS = 0.002  # a ThreadMap list with less work than this runs on the calling thread
_PIECES_PER_THREAD = 4  # a ThreadMap list is cut into this many pieces per thread
_local = threading.local()  # .seed: the seed of the item being computed on threads (absent: not on threads)


def check_num_threads(num_threads: Any) -> int:
    """`num_threads` as an int >= 1, or the TypeError / ValueError that says what was found."""
    return check_int("num_threads", num_threads, 1)


def thread_budget(num_threads: int) -> int:
    """The threads `num_threads` comes to in this process: in a DataLoader worker at most its share
    of the cores (usable_cores() // num_workers, at least 1), since the workers keep every core busy
    already and more threads would only take turns; elsewhere `num_threads`. torch is asked only
    when it is imported (a worker has imported it)."""
    data = sys.modules.get("torch.utils.data") if num_threads > 1 else None
    worker = data.get_worker_info() if data is not None else None
    if worker is None:
        return num_threads
    workers: int = worker.num_workers
    return max(1, min(num_threads, usable_cores() // max(1, workers)))


def item_random() -> Any:
    """The random number generator of the item being computed: with num_threads > 1 a
    `random.Random` seeded for that item (so its draws do not depend on the thread that runs it);
    otherwise the `random` module, whose functions have the same names."""
    state = _local.__dict__
    seed = state.get("seed")
    if seed is None:
        return random
    rng = state.get("rng")
    if rng is None or state["rng_seed"] != seed:
        rng = state["rng"] = random.Random(seed)
        state["rng_seed"] = seed
    return rng


def _held_bytes(items: list[Any]) -> int | None:
    """The bytes a chunk of records holds (of lists of records, as batches are: estimated from the
    first), or None for other items."""
    if not items:
        return None
    first = items[0]
    if isinstance(first, bytes):
        return sum(map(len, items))
    if isinstance(first, list) and first and isinstance(first[0], bytes):
        return sum(map(len, first)) * len(items)
    return None


def _computed(
    fn: Callable[..., R], items: Sequence[Any], seed: int, args: tuple[Any, ...]
) -> tuple[list[R], BaseException | None]:
    """fn(item, *args) for each item, item k seeded with seed + k: (results, None), or the results
    before the first error and that error."""
    results: list[R] = []
    state = _local.__dict__  # item_random's seed, one dict store an item
    try:
        for k, item in enumerate(items):
            state["seed"] = seed + k
            results.append(fn(item, *args))
    except BaseException as exc:  # filed for the consumer, who raises it at its item
        return results, exc
    finally:
        state["seed"] = None
    return results, None


# --------------------------------------------------------------------------- ordered_map


_pipelines: weakref.WeakSet[_Pipeline] = weakref.WeakSet()  # running, stopped at interpreter exit


class _Pipeline:
    """The state ordered_map's threads and its consumer share, all of it under `lock` (the input
    under `reading`)."""

    def __init__(self, fn: Callable[[Any], Any], items: Iterator[Any], num_threads: int, depth: int) -> None:
        self.fn, self.items, self.num_threads, self.depth = fn, items, num_threads, depth
        self.lock = threading.Lock()
        self.space = threading.Condition(self.lock)  # threads wait here for room under depth
        self.ready = threading.Condition(self.lock)  # the consumer waits here for its next chunk
        self.reading = threading.Lock()  # one thread reads the input at a time, in chunk order
        self.done: dict[int, tuple[list[Any], BaseException | None, bool]] = {}
        self.taken = self.handed = 0  # chunks reserved by threads / handed to the consumer
        self.chunk, self.stopped = 1, False  # items in a threads' chunk
        self.alone_here = 1  # items in a chunk the consumer computes alone (its own: read and written by it only)
        self.inline = False  # the consumer computes the chunks itself (threads do not pay)
        self.most = _MAX_CHUNK  # items in a threads' chunk at most (fewer for large records)
        self.next_chunk = self.position = 0  # under `reading`: the next chunk's number, items read
        self.ended = False  # under `reading`: the input is exhausted or failed
        self.seed = random.getrandbits(62)
        self.pid = os.getpid()
        self.threads: list[threading.Thread] = []

    def start(self) -> None:
        """Start the threads, unless they are running or the consumer computes alone (a pass that
        begins, and stays, computing alone starts none)."""
        if self.threads or self.inline:
            return
        for n in range(self.num_threads):
            thread = threading.Thread(target=self.work, name=f"tfrecord_lite-{n}", daemon=True)
            self.threads.append(thread)
            thread.start()
        _pipelines.add(self)

    def work(self) -> None:
        while True:
            with self.lock:
                while not self.stopped and (self.inline or self.taken - self.handed >= self.depth):
                    self.space.wait()
                if self.stopped:
                    return
                self.taken += 1
                size = self.chunk
            chunk = self.take(size)
            if chunk is None:
                return
            number, start, items, error, last = chunk
            results, failed = self.compute(items, start)
            with self.lock:
                self.done[number] = (results, failed or error, last)
                self.ready.notify()
            if last:
                return

    def take(self, size: int) -> tuple[int, int, list[Any], BaseException | None, bool] | None:
        """The next chunk of the input for a thread: (number, position of its first item, items, the
        error that cut it short, whether it is the last), or None when the input has ended."""
        with self.reading:
            if self.ended:
                return None
            number, start = self.next_chunk, self.position
            items: list[Any] = []
            error: BaseException | None = None
            try:
                items.extend(itertools.islice(self.items, size))
            except BaseException as exc:  # the input's error belongs to the item after those read
                error = exc
            last = self.ended = error is not None or len(items) < size
            self.next_chunk, self.position = number + 1, start + len(items)
            held = _held_bytes(items)
            if held is not None:  # records (or lists of them): a chunk's bytes stay in the caches
                most = max(1, _CHUNK_BYTES * len(items) // max(1, held))
                with self.lock:  # always taken after `reading`, never before
                    self.most = most
            return number, start, items, error, last

    def compute(self, items: list[Any], start: int) -> tuple[list[Any], BaseException | None]:
        """fn over a chunk's items; the chunk size then follows the time they took."""
        began = time.perf_counter()
        results, failed = _computed(self.fn, items, self.seed + start, ())
        each = (time.perf_counter() - began) / max(1, len(items))
        if items and failed is None:
            with self.lock:
                self.chunk = max(1, min(self.most, int(_CHUNK_SECONDS / each) if each > 0 else self.most))
        return results, failed

    def next_results(self, number: int) -> tuple[list[Any], BaseException | None, bool] | None:
        """Chunk `number` as a thread filed it (results, error, whether it is the last), or None when
        the consumer is to compute it itself (inline, and no thread has taken it)."""
        with self.lock:
            while number not in self.done:
                if self.inline and self.next_chunk == number:  # read without `reading`: a hint, checked later
                    return None
                self.ready.wait()
            found = self.done.pop(number)
            self.handed += 1
            self.space.notify()
            return found

    def computed_here(self, number: int) -> Generator[Any, None, tuple[int, bool] | None]:
        """Chunk `number` read and computed by the consumer, an item at a time as it asks for them,
        just as a plain `map` would (nothing held, each record decoded while it is in the caches):
        returns (items, whether it was the last), or None when a thread took the chunk first. The
        input stays under `reading` until the chunk ends (threads that wait for it are not taking
        chunks: they only do so when the consumer does not compute)."""
        with self.reading:
            if self.ended or number != self.next_chunk:
                return None
            size, start, fn, state = self.alone_here, self.position, self.fn, _local.__dict__
            base = self.seed + start
            seed, began = base - 1, time.perf_counter()
            try:
                for seed, item in zip(itertools.count(base), itertools.islice(self.items, size)):
                    state["seed"] = seed
                    yield fn(item)
            except BaseException:
                self.ended = True  # an error of the input or of fn, raised at its item
                raise
            finally:
                state["seed"] = None
                count = seed + 1 - base  # the items yielded (or failed)
                self.next_chunk, self.position = number + 1, start + count
            last = self.ended = count < size
        if count:  # the chunk's time includes the consumer's own work between items (the consumer's alone)
            each = (time.perf_counter() - began) / count
            self.alone_here = max(1, min(_MAX_HERE, int(_ALONE_SECONDS / each) if each > 0 else _MAX_HERE))
        return count, last

    def set_inline(self, inline: bool) -> None:
        with self.lock:
            self.inline = inline
            self.space.notify_all()
        self.start()

    def stop(self) -> None:
        """Stop the threads, wait for them (each finishes the chunk in hand), close the input."""
        if self.pid != os.getpid():  # a copy in a forked child: its threads were never there
            return
        with self.lock:
            self.stopped = True
            self.space.notify_all()
        current = threading.current_thread()
        for thread in self.threads:
            if thread is not current:
                thread.join()
        _pipelines.discard(self)
        close = getattr(self.items, "close", None)
        if close is not None and not any(thread.is_alive() for thread in self.threads):
            close()


def _stop_all() -> None:
    for pipeline in list(_pipelines):
        pipeline.stop()


atexit.register(_stop_all)


class Tuning:
    """Where ordered_map's measuring stood when a pass ended (the phase, its items and seconds so far,
    the threads' rate, the last winner), for the next pass over the same work to go on from: a pass
    shorter than a probe (a small epoch) still adds to it, so the verdict comes after a few passes. A
    dataset keeps one per process (it pickles empty)."""

    def __init__(self) -> None:
        self.winner, self.exploit = "", _EXPLOIT
        self.phase, self.items, self.elapsed, self.threads_rate = "threads", 0, 0.0, 0.0

    def __getstate__(self) -> dict[str, Any]:
        return Tuning().__dict__


def ordered_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    num_threads: int,
    *,
    depth: int | None = None,
    memory: Tuning | None = None,
) -> Iterator[R]:
    """fn(item) for each of `items`, in their order, computed on `num_threads` threads started at the
    first next() (with 1, plain `map`): at most `depth` chunks of items (default 2 x num_threads) are
    computed ahead of the consumer. An error raised by the input or by fn comes out at the item it
    belongs to, after the items before it; closing the iterator stops and joins the threads. `memory`
    carries whether the threads paid from one pass to the next."""
    num_threads = thread_budget(num_threads)
    if num_threads == 1:
        return map(fn, items)
    return _ordered(fn, iter(items), num_threads, depth or 2 * num_threads, memory)


def _ordered(
    fn: Callable[[T], R], items: Iterator[T], num_threads: int, depth: int, memory: Tuning | None
) -> Iterator[R]:
    pipeline = _Pipeline(fn, items, num_threads, depth)
    modes = _Modes(pipeline, memory)
    try:
        pipeline.start()
        number = 0
        while True:
            found = pipeline.next_results(number)
            if found is None:
                here = yield from pipeline.computed_here(number)
                if here is None:  # a thread took it first after all
                    continue
                count, last = here
                modes.count(count, True)
            else:
                results, error, last = found
                modes.count(len(results), False)
                yield from results
                del results
                if error is not None:
                    raise error
            if last:
                return
            number += 1
    finally:
        modes.save()
        pipeline.stop()


class _Modes:
    """Whether the threads pay, measured as the consumer sees it: items per second with the threads
    (_PROBE_THREADS seconds) against items computed by the consumer alone (_PROBE_INLINE seconds),
    then the faster way (computing alone only when 5 % faster: the threads' measure starts from an
    empty pipeline, which they fill first) for
    _EXPLOIT seconds, doubled each time the same way wins again (up to _EXPLOIT_MAX; at once when it
    won by _CLEAR or more), and measured
    again. Work that holds the GIL (pure Python, copies of large records) or a machine whose cores are
    busy make the threads lose; then the consumer computes the chunks itself, in the same order, and
    the threads wait. Such work shows early: the process then uses under _PARALLEL CPU seconds per
    second with its threads running, so after _PROBE_INLINE seconds of that the threads lose at once,
    without the rest of their probe nor the consumer's (a probe at the threads' lower rate is what
    a losing verdict costs)."""

    def __init__(self, pipeline: _Pipeline, memory: Tuning | None) -> None:
        self.pipeline, self.memory = pipeline, memory
        self.phase, self.began, self.items = "threads", time.perf_counter(), 0
        self.threads_rate = 0.0
        self.exploit, self.winner = _EXPLOIT, ""
        self.first = True  # the next chunk is the first of a phase
        self.carried = 0.0  # seconds of the current phase measured by earlier passes
        self.wall, self.cpu = self.began, time.process_time()  # this pass's part of the phase: from when
        if memory is not None:  # an earlier pass measured: go on from where it stood
            self.exploit, self.winner, self.threads_rate = memory.exploit, memory.winner, memory.threads_rate
            self.phase, self.items, self.carried = memory.phase, memory.items, memory.elapsed
            self.began -= self.carried
            pipeline.inline = self.phase in ("inline", "exploit-inline")

    def save(self) -> None:
        """Leave where the measuring stands to the next pass (a Tuning given)."""
        if self.memory is None:
            return
        memory = self.memory
        memory.winner, memory.exploit, memory.threads_rate = self.winner, self.exploit, self.threads_rate
        memory.phase, memory.items = self.phase, self.items
        memory.elapsed = self.carried if self.first else time.perf_counter() - self.began

    def count(self, n: int, here: bool) -> None:
        now = time.perf_counter()
        if (self.phase == "inline" and not here) or (self.phase == "threads" and self.first and not self.items):
            self.began, self.first = now - self.carried, False  # the threads' start, or chunks they
            self.wall, self.cpu = now, time.process_time()  # computed before a switch, are neither way's rate
            return
        self.items, self.first = self.items + n, False
        elapsed = now - self.began
        if self.phase == "threads" and elapsed >= _PROBE_THREADS:
            self.threads_rate = self.items / elapsed
            self.switch("inline", now)
        elif self.phase == "threads" and now - self.wall >= _PROBE_INLINE and self.serial(now):
            self.threads_rate = self.items / elapsed
            self.decide("inline", now, clear=False)
        elif self.phase == "inline" and elapsed >= _PROBE_INLINE:
            rate, threads = self.items / elapsed, self.threads_rate
            winner = "inline" if rate > 1.05 * threads else "threads"
            self.decide(winner, now, clear=max(rate, threads) >= _CLEAR * max(1e-9, min(rate, threads)))
        elif self.phase.startswith("exploit") and elapsed >= self.exploit:
            self.switch("threads", now)

    def serial(self, now: float) -> bool:
        """Whether the process used under _PARALLEL CPU seconds per second in this pass's part of the
        threads' probe: then its threads took turns (the GIL) or found no free core."""
        return time.process_time() - self.cpu < _PARALLEL * (now - self.wall)

    def decide(self, winner: str, now: float, clear: bool) -> None:
        """Keep `winner`'s way for a while: _EXPLOIT seconds after a change of way, twice as long each
        time the same way wins again, _EXPLOIT_MAX when it won clearly (a probe is what it costs)."""
        if clear:
            self.exploit = _EXPLOIT_MAX
        else:
            self.exploit = min(2 * self.exploit, _EXPLOIT_MAX) if winner == self.winner else _EXPLOIT
        self.winner = winner
        self.switch("exploit-" + winner, now)

    def switch(self, phase: str, now: float) -> None:
        self.phase, self.began, self.items, self.first, self.carried = phase, now, 0, True, 0.0
        self.wall, self.cpu = now, time.process_time()
        self.pipeline.set_inline(phase in ("inline", "exploit-inline"))


# --------------------------------------------------------------------------- ThreadMap


class ThreadMap:
    """fn(item, *args) over a list, in order, on `num_threads` threads (the calling one among them) of a
    pool made at first use in the process that maps, and dropped when pickled."""

    def __init__(self, num_threads: int) -> None:
        self.num_threads = check_num_threads(num_threads)
        self._pool: ThreadPoolExecutor | None = None
        self._pid = -1
        self._each: float | None = None  # seconds an item took in the last call

    def __getstate__(self) -> dict[str, Any]:
        return {"num_threads": self.num_threads, "_pool": None, "_pid": -1, "_each": None}

    def __repr__(self) -> str:
        return f"ThreadMap(num_threads={self.num_threads})"

    def map(self, fn: Callable[..., R], items: Sequence[Any], *args: Any) -> list[R]:
        """[fn(item, *args) for item in items], computed on the threads; the first error raised."""
        threads = thread_budget(self.num_threads)
        pieces = self._pieces(len(items), threads)
        seed = random.getrandbits(62)
        if pieces == 1:
            return self._timed(fn, items, seed, args)
        shared = _Pieces(fn, items, pieces, seed, args)
        futures = [self._executor().submit(shared.run) for _ in range(min(threads, pieces) - 1)]
        spent, count = shared.run()
        for future in futures:  # all end before a raise
            future.result()
        if count:
            self._each = spent / count
        out: list[R] = []
        for part in shared.done:
            assert part is not None  # the pieces before a failed one were all taken before it
            out += part[0]
            if part[1] is not None:
                raise part[1]
        return out

    def _pieces(self, n: int, threads: int) -> int:
        """How many pieces a list of n items is cut into: _PIECES_PER_THREAD per thread, unless there
        is one thread or the last call says that the list's work is too small to share."""
        if n < 2 or threads == 1:
            return 1
        if self._each is not None and self._each * n < _INLINE_SECONDS:
            return 1
        return min(_PIECES_PER_THREAD * threads, n)

    def _timed(self, fn: Callable[..., R], items: Sequence[Any], seed: int, args: tuple[Any, ...]) -> list[R]:
        began = time.perf_counter()
        results, error = _computed(fn, items, seed, args)
        if error is not None:
            raise error
        if items:
            self._each = (time.perf_counter() - began) / len(items)
        return results

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None or self._pid != os.getpid():
            self._pool = ThreadPoolExecutor(self.num_threads - 1, thread_name_prefix="tfrecord_lite")
            self._pid = os.getpid()
        return self._pool


class _Pieces:
    """A list cut into contiguous pieces that threads take in turn (under `lock`), each filed under its
    number; after a failed piece no more are taken."""

    def __init__(
        self, fn: Callable[..., Any], items: Sequence[Any], pieces: int, seed: int, args: tuple[Any, ...]
    ) -> None:
        self.fn, self.items, self.seed, self.args = fn, items, seed, args
        self.bounds = [len(items) * k // pieces for k in range(pieces + 1)]
        self.done: list[tuple[list[Any], BaseException | None] | None] = [None] * pieces
        self.lock = threading.Lock()
        self.next, self.failed = 0, False

    def run(self) -> tuple[float, int]:
        """Take and compute pieces until none is left: (seconds spent computing, items computed)."""
        spent, count = 0.0, 0
        while True:
            with self.lock:
                k = self.next
                if k >= len(self.done) or self.failed:
                    return spent, count
                self.next = k + 1
            start, stop = self.bounds[k], self.bounds[k + 1]
            began = time.perf_counter()
            part = _computed(self.fn, self.items[start:stop], self.seed + start, self.args)
            spent, count = spent + time.perf_counter() - began, count + stop - start
            with self.lock:
                self.done[k] = part
                self.failed = self.failed or part[1] is not None
