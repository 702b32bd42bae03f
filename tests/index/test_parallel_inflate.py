"""Reading indexed GZIP files with threads (_index/parallel_inflate.py): the records, the errors and what is
read before them are those of the one-thread reader, on files as TensorFlow writes them (one stream,
indexed by indexed_gzip's windows) and as TFRecordWriter(seek_every=) writes them; files it must not
take (several members, ZLIB, stale or missing sidecars, mostly stored data) read as before; and its
threads end when the iterator is closed early or dropped. TensorFlow's side is in test_tf_compat.py."""

from __future__ import annotations

import gc
import os
import threading
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._reading import read_until_error
from tfrecord_lite._index import gzip_index as _gzip_index
from tfrecord_lite._index import parallel_inflate as _parallel_inflate
from tfrecord_lite._wire.framing import frame_many

pytestmark = pytest.mark.threads

RNG = np.random.default_rng(1414)
# compressible records of mixed sizes (one longer than a segment), about 3 MiB in all
SIZES = [*RNG.integers(0, 2000, 2000).tolist(), 700_000, *RNG.integers(0, 300, 500).tolist()]
RECORDS = [RNG.integers(0, 30, n, dtype=np.uint8).tobytes() for n in SIZES]
SEGMENT = 128 << 10


@pytest.fixture(autouse=True)
def small_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parallel_inflate, "SEGMENT", SEGMENT)
    monkeypatch.setenv(_parallel_inflate.ENV_VAR, "2")


def gzipped(data: bytes) -> bytes:
    """`data` as TensorFlow's writer compresses it: level 6, memLevel 9, one member."""
    deflate = zlib.compressobj(6, zlib.DEFLATED, 31, 9)
    return deflate.compress(data) + deflate.flush()


def one_stream(tmp_path: Path, data: bytes, name: str = "tf.tfrecord.gz") -> Path:
    """`data` gzipped as TensorFlow does it, with the sidecar built by indexed_gzip."""
    pytest.importorskip("indexed_gzip")
    path = tmp_path / name
    path.write_bytes(gzipped(data))
    _gzip_index.write_gzip_index(str(path), f"{path}.tfrlidx", spacing=SEGMENT // 2)
    return path


def threaded(path: Path) -> bool:
    with tfr.iter_records(path) as records:
        return isinstance(records._stream.inflater, _parallel_inflate.ParallelInflater)


def inflating_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("tfrecord-lite-inflate")]


def read_all(path: Path, threads: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[bytes], Exception | None]:
    monkeypatch.setenv(_parallel_inflate.ENV_VAR, threads)
    return read_until_error(path)


def test_a_tensorflow_style_file_reads_in_threads(tmp_path: Path) -> None:
    path = one_stream(tmp_path, frame_many(RECORDS))
    assert threaded(path)
    assert list(tfr.iter_records(path)) == RECORDS


def test_seek_every_files_read_in_threads(tmp_path: Path) -> None:
    path = tmp_path / "seek.tfrecord.gz"
    with tfr.TFRecordWriter(path, compression="gzip", seek_every="64k") as writer:
        for record in RECORDS:
            writer.write(record)
    assert threaded(path)
    assert list(tfr.iter_records(path)) == RECORDS


@pytest.mark.parametrize("threads", ["2", "3", "4"])
def test_the_records_are_the_one_thread_readers(tmp_path: Path, threads: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = one_stream(tmp_path, frame_many(RECORDS))
    assert read_all(path, threads, monkeypatch) == read_all(path, "1", monkeypatch) == (RECORDS, None)


def damaged(tmp_path: Path, at: float, flip: int) -> Path:
    """A one-stream file with a sidecar, then a byte at fraction `at` of it XORed with `flip`,
    its mtime kept, so that the sidecar still passes as fresh."""
    path = one_stream(tmp_path, frame_many(RECORDS), f"bad-{at}-{flip}.gz")
    st = os.stat(path)
    data = bytearray(path.read_bytes())
    data[int(len(data) * at)] ^= flip
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return path


@pytest.mark.parametrize("at", [0.3, 0.55, 0.8])
@pytest.mark.parametrize("flip", [0x01, 0x40, 0xFF])
def test_damage_reads_and_raises_as_with_one_thread(
    tmp_path: Path, at: float, flip: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = damaged(tmp_path, at, flip)
    assert threaded(path)
    got, err = read_all(path, "2", monkeypatch)
    want, want_err = read_all(path, "1", monkeypatch)
    assert got == want
    assert err is not None and want_err is not None
    assert (type(err), str(err), err.offset) == (type(want_err), str(want_err), want_err.offset)


def test_files_it_does_not_take_read_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = frame_many(RECORDS)
    half = len(data) // 2
    members = tmp_path / "members.gz"
    members.write_bytes(gzipped(data[:half]) + gzipped(data[half:]))
    tfr.write_index(members)
    zlib_file = tmp_path / "x.zz"
    with tfr.TFRecordWriter(zlib_file, compression="zlib", seek_every="64k") as writer:
        for record in RECORDS:
            writer.write(record)
    stale = one_stream(tmp_path, data, "stale.gz")
    os.utime(stale, ns=(0, 0))
    unindexed = tmp_path / "none.gz"
    unindexed.write_bytes(gzipped(data))
    stored = one_stream(tmp_path, frame_many([RNG.bytes(50_000) for _ in range(60)]), "stored.gz")
    for path in (members, zlib_file, stale, unindexed, stored):
        assert not threaded(path), path
    for path in (members, zlib_file, stale, unindexed):
        assert list(tfr.iter_records(path)) == RECORDS, path
    monkeypatch.setenv(_parallel_inflate.ENV_VAR, "1")
    assert not threaded(one_stream(tmp_path, data, "one-thread.gz"))


def test_the_threads_end_when_closed_early_or_dropped(tmp_path: Path) -> None:
    path = one_stream(tmp_path, frame_many(RECORDS))
    records = tfr.iter_records(path)
    next(records)
    assert inflating_threads()
    records.close()
    assert not inflating_threads()

    records = tfr.iter_records(path)
    next(records)
    del records
    gc.collect()
    assert not inflating_threads()

    for _ in tfr.iter_records(path):  # to the end: stopped by the reader itself
        pass
    assert not inflating_threads()


def test_dropped_in_one_of_its_own_threads(tmp_path: Path) -> None:
    # the garbage collector may finalize an inflater in any thread, its own included: it cannot wait
    # for itself there, so its threads are told to stop and end by themselves
    path = one_stream(tmp_path, frame_many(RECORDS))
    records = tfr.iter_records(path)
    next(records)
    inflater = records._stream.inflater
    assert isinstance(inflater, _parallel_inflate.ParallelInflater)
    inflater._pool.submit(inflater.close).result()
    for thread in inflating_threads():
        thread.join()
    records.close()


def test_the_thread_count_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_parallel_inflate.ENV_VAR, "many")
    with pytest.raises(ValueError, match="TFRECORD_LITE_INFLATE_THREADS"):
        _parallel_inflate.threads()
    monkeypatch.delenv(_parallel_inflate.ENV_VAR)
    assert 1 <= _parallel_inflate.threads() <= min(len(os.sched_getaffinity(0)), _parallel_inflate.MAX_THREADS)


def test_a_forked_child_reads_on_in_one_thread(tmp_path: Path) -> None:
    path = one_stream(tmp_path, frame_many(RECORDS))
    with tfr.iter_records(path) as records:
        first = [next(records) for _ in range(10)]
        with warnings.catch_warnings():  # Python 3.12+ warns of fork() in a process with threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: the rest of the records, without the parent's threads
            os._exit(0 if first + list(records) == RECORDS else 1)
        assert os.waitpid(pid, 0)[1] == 0
        assert first + list(records) == RECORDS
