# TFRecordFile: random access must equal sequential reading (corpus and generated
# files), its index sidecar must be O(1) to reopen, detect changed files, survive
# concurrent builders, and the DALI text index must round-trip. Records are
# compared with tfr.iter_records and with an index computed here from the raw
# headers (struct), independently of tfrecord_lite's index code.
from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import struct
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests import reference
from tests._records import record_spans, write_records

SIDECAR = ".tfrlidx"
CORPUS = Path(__file__).resolve().parents[1] / "data" / "tfx"


# ----------------------------------------------------------------- helpers


def raw_index(path: Path) -> list[tuple[int, int]]:
    """(offset, framed length) of every record, from the raw headers."""
    return [(start, end - start) for start, end in record_spans(path.read_bytes())]


def flip_byte(path: Path, offset: int) -> None:
    """Change one byte in place, keeping the file's size and mtime (so only content checks can tell)."""
    st_ = path.stat()
    with open(path, "r+b") as fh:
        fh.seek(offset)
        b = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([b[0] ^ 0x01]))
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))


def payloads(n: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [rng.bytes(int(k)) for k in rng.integers(0, 200, n)]


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, list[bytes]]:
    records = payloads(50)
    return write_records(tmp_path / "small.tfrecord", records), records


# ----------------------------------------------------------------- corpus


def test_corpus_mnist_random_equals_sequential(tmp_path: Path) -> None:
    path = tmp_path / "mnist.tfrecord"
    shutil.copyfile(CORPUS / "mnist.tfrecord", path)  # the sidecar goes beside the copy
    expected = list(tfr.iter_records(path))
    assert len(expected) == 1000
    order = np.random.default_rng(7).permutation(1000).tolist()
    with tfr.TFRecordFile(path) as f:
        assert len(f) == 1000
        assert [f[i] for i in order] == [expected[i] for i in order]
        assert list(f) == expected
        for i in order[:50]:
            assert reference.same_features(f.example(i), reference.decode_example(expected[i]))
        spec = {"image_class": tfr.FixedLenFeature([], "int64"), "image_floats": tfr.FixedLenFeature([784], "float32")}
        ex = f.example(-1, spec)
        assert int(ex["image_class"]) == int(reference.decode_example(expected[-1])["image_class"][0])
        assert ex["image_floats"].shape == (784,)
    assert tfr_offsets(path).tolist() == [o for o, _ in raw_index(path)] + [path.stat().st_size]


def tfr_offsets(path: Path) -> np.ndarray:
    """The offsets stored in the binary sidecar (header of 64 bytes, then uint64 offsets)."""
    data = Path(str(path) + SIDECAR).read_bytes()
    return np.frombuffer(data, "<u8", offset=64)


@pytest.mark.parametrize("name", ["penguin-eval.tfrecord.gz", "sequence-eval.tfrecord.gz"])
def test_corpus_gzip_random_access_matches_the_sequential_reading(tmp_path: Path, name: str) -> None:
    src = tmp_path / name  # a copy: the sidecar is written beside it, never into tests/data
    src.write_bytes((CORPUS / name).read_bytes())
    expected = list(tfr.iter_records(src))
    with tfr.TFRecordFile(src) as f:
        assert len(f) == len(expected)
        order = np.random.default_rng(1).permutation(len(f))
        assert f[order] == [expected[i] for i in order]
    assert Path(str(src) + SIDECAR).exists()


def test_zlib_file_random_access(tmp_path: Path) -> None:
    path = tmp_path / "z.tfrecord"
    with tfr.TFRecordWriter(path, compression="ZLIB") as w:
        w.write(b"abc")
        w.write(b"de")
    with tfr.TFRecordFile(path) as f:
        assert f.compression == "zlib" and f[::-1] == [b"de", b"abc"]


# ----------------------------------------------------------------- indexing semantics


# fewer examples than the profile's: each writes a file, builds its index and reopens it (~30 ms);
# the examples share tmp_path, each in a folder of its own
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(st.binary(max_size=300), max_size=40),
    picks=st.lists(st.integers(-60, 60), max_size=10),
    window=st.slices(45),
    data=st.data(),
)
def test_random_access_equals_sequential(
    tmp_path: Path, records: list[bytes], picks: list[int], window: slice, data: st.DataObject
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = write_records(folder / "g.tfrecord", records)
    n = len(records)
    with tfr.TFRecordFile(path) as f:
        assert len(f) == n
        assert list(f) == list(tfr.iter_records(path)) == records
        for i in picks:
            if -n <= i < n:
                assert f[i] == records[i]
                assert f[np.int64(i)] == records[i]
            else:
                with pytest.raises(IndexError):
                    f[i]
        assert f[window] == records[window]
        inside = [i for i in picks if -n <= i < n]
        assert f[inside] == [records[i] for i in inside]
        assert f[np.array(inside, dtype=np.int32)] == [records[i] for i in inside]
        mask = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
        assert f[np.array(mask, dtype=bool)] == [r for r, m in zip(records, mask, strict=False) if m]
        assert [f.offset(i) for i in range(n)] == [o for o, _ in raw_index(path)]
    tfr.write_text_index(path, destination=folder / "g.idx")  # DALI text index == the one computed from raw headers
    assert (folder / "g.idx").read_text() == "".join(f"{o} {m}\n" for o, m in raw_index(path))
    with tfr.TFRecordFile(path, index=folder / "g.idx") as f:
        assert f[:] == records
    with tfr.TFRecordFile(path, verify=False) as f:  # second open: from the sidecar
        assert f.index_path == str(path) + SIDECAR
        assert list(f) == records


def test_bad_keys(small: tuple[Path, list[bytes]]) -> None:
    path, records = small
    with tfr.TFRecordFile(path) as f:
        for key in ("1", 1.0, True, b"x"):
            with pytest.raises(TypeError):
                f[key]
        with pytest.raises(TypeError):
            f[[[1, 2]]]
        with pytest.raises(IndexError):
            f[np.zeros(3, bool)]
        with pytest.raises(IndexError):
            f[[0, len(records)]]
        assert f[[]] == []


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.tfrecord"
    path.write_bytes(b"")
    with tfr.TFRecordFile(path) as f:
        assert len(f) == 0 and list(f) == [] and f[:] == []
        with pytest.raises(IndexError):
            f[0]
    assert len(tfr_offsets(path)) == 1


@pytest.mark.parametrize("compression", [None, "gzip"])  # mapped records, compressed ones
def test_close_and_context_manager(tmp_path: Path, compression: str | None) -> None:
    records = payloads(50)
    path = write_records(tmp_path / "small.tfrecord", records, compression)
    with tfr.TFRecordFile(path) as f:
        assert f[0] == records[0] and not f.closed and f.index_path is not None
        assert pickle.loads(pickle.dumps(f))[-1] == records[-1]
    assert f.closed and f.index_path is None and len(f) == 0 and repr(f).endswith("closed)")
    for use in (lambda: f[0], lambda: f[-1], lambda: f[:1], lambda: list(f), lambda: f.example(0)):
        with pytest.raises(ValueError, match="closed"):
            use()
    f.close()  # twice is fine
    assert pickle.loads(pickle.dumps(f)).closed  # and a closed file stays closed in a worker


def test_truncated_file_raises_with_offset(tmp_path: Path) -> None:
    records = payloads(5, seed=3)
    path = write_records(tmp_path / "t.tfrecord", records)
    last_offset = raw_index(path)[-1][0]
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size - 3)
    with pytest.raises(tfr.TruncatedRecordError) as err:
        tfr.TFRecordFile(path)
    assert err.value.offset == last_offset and err.value.path == str(path)


# ----------------------------------------------------------------- integrity


def test_corrupt_record_found_when_indexing(tmp_path: Path) -> None:
    records = payloads(20, seed=5)
    path = write_records(tmp_path / "c.tfrecord", records)
    offset, length = raw_index(path)[7]
    flip_byte(path, offset + 12 + (length - 16) // 2)
    with pytest.raises(tfr.CorruptRecordError) as err:
        tfr.TFRecordFile(path)
    assert err.value.offset == offset and str(offset) in str(err.value)
    assert not Path(str(path) + SIDECAR).exists()
    with tfr.TFRecordFile(path, verify=False) as f:  # not verified: the damaged payload is returned
        assert f[7] != records[7] and f[8] == records[8]


@pytest.mark.parametrize("where", ["payload", "length", "length_crc", "data_crc"])
def test_corrupt_record_read_by_index(tmp_path: Path, where: str) -> None:
    records = [bytes([i]) * (10 + i) for i in range(20)]
    path = write_records(tmp_path / "c.tfrecord", records)
    tfr.TFRecordFile(path).close()  # index while the file is intact
    offset, length = raw_index(path)[9]
    flip_byte(
        path,
        {"payload": offset + 14, "length": offset, "length_crc": offset + 9, "data_crc": offset + length - 2}[where],
    )
    with tfr.TFRecordFile(path) as f:  # size, mtime, first and last record unchanged: the sidecar is used
        assert f[8] == records[8] and f[10] == records[10]
        with pytest.raises(tfr.CorruptRecordError) as err:
            f[9]
        assert err.value.offset == offset and err.value.path == str(path)
        assert f"byte offset {offset}" in str(err.value) and str(path) in str(err.value)
        with pytest.raises(tfr.CorruptRecordError):
            list(f)
    if where in ("payload", "data_crc"):
        with tfr.TFRecordFile(path, verify=False) as f:
            assert len(f[9]) == len(records[9])


# ----------------------------------------------------------------- the sidecar


def test_sidecar_format_and_size(small: tuple[Path, list[bytes]]) -> None:
    path, records = small
    with tfr.TFRecordFile(path) as f:
        assert f.index_path == str(path) + SIDECAR
    side = Path(str(path) + SIDECAR)
    data = side.read_bytes()
    assert data[:8] == b"TFRLIDX\0"
    assert len(data) == 64 + 8 * (len(records) + 1)  # <= 16 bytes per record
    count, file_size = struct.unpack_from("<QQ", data, 16)
    assert count == len(records) and file_size == path.stat().st_size
    expected = [o for o, _ in raw_index(path)] + [file_size]
    assert tfr_offsets(path).tolist() == expected
    assert sorted(os.listdir(path.parent)) == [path.name, side.name]  # no temporary file left behind


def test_damaged_sidecar_is_rebuilt(small: tuple[Path, list[bytes]]) -> None:
    path, records = small
    tfr.TFRecordFile(path).close()
    side = Path(str(path) + SIDECAR)
    for damage in (b"junk", side.read_bytes()[:100], b"TFRLIDX\0" + b"\1" * 200):
        side.write_bytes(damage)
        with tfr.TFRecordFile(path) as f:
            assert list(f) == records
        assert tfr_offsets(path).tolist() == [o for o, _ in raw_index(path)] + [path.stat().st_size]


def test_write_index_explicit_path(small: tuple[Path, list[bytes]], tmp_path: Path) -> None:
    path, records = small
    where = tfr.write_index(path, destination=tmp_path / "elsewhere.idx")
    assert where == str(tmp_path / "elsewhere.idx") and not Path(str(path) + SIDECAR).exists()
    with tfr.TFRecordFile(path, index=where) as f:
        assert f.index_path == where and list(f) == records
    assert tfr.write_index(path) == str(path) + SIDECAR


def test_index_false_keeps_it_in_memory(small: tuple[Path, list[bytes]]) -> None:
    path, records = small
    with tfr.TFRecordFile(path, index=False) as f:
        assert f.index_path is None and f[-1] == records[-1]
        clone = pickle.loads(pickle.dumps(f))
    assert not Path(str(path) + SIDECAR).exists()
    with clone:
        assert list(clone) == records and clone.index_path is None


def _as_nobody(folder: str, path: str, out: multiprocessing.Queue[object]) -> None:
    if os.geteuid() == 0:
        os.setgid(65534)
        os.setuid(65534)
    try:
        with tfr.TFRecordFile(path) as f:
            out.put((f.index_path, list(f)))
    except BaseException as exc:  # report to the parent
        out.put(repr(exc))


def test_read_only_directory_keeps_index_in_memory() -> None:
    folder = tempfile.mkdtemp(prefix="tfrl-ro-")
    try:
        records = payloads(30, seed=2)
        path = write_records(Path(folder) / "ro.tfrecord", records)
        os.chmod(path, 0o644)
        os.chmod(folder, 0o555)  # read-only for its owner; for root, the child drops to nobody
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        proc = ctx.Process(target=_as_nobody, args=(folder, str(path), out))
        proc.start()
        result = out.get(timeout=60)
        proc.join(60)
        assert result == (None, records), result
        assert sorted(os.listdir(folder)) == ["ro.tfrecord"]
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(folder)


# ----------------------------------------------------------------- stale indexes


def test_appended_file_detected(small: tuple[Path, list[bytes]]) -> None:
    path, records = small
    tfr.TFRecordFile(path).close()
    extra = payloads(5, seed=9)
    with open(path, "ab") as fh:  # appended behind our back (not through TFRecordWriter)
        for r in extra:
            fh.write(struct.pack("<Q", len(r)))
            fh.write(_masked(struct.pack("<Q", len(r))) + r + _masked(r))
    with pytest.raises(tfr.StaleIndexError) as err:
        tfr.TFRecordFile(path, on_stale="raise")
    assert str(path) in str(err.value) and "bytes" in str(err.value)
    with tfr.TFRecordFile(path) as f:
        assert list(f) == records + extra
    assert tfr_offsets(path).tolist() == [o for o, _ in raw_index(path)] + [path.stat().st_size]
    with tfr.TFRecordFile(path, on_stale="raise") as f:  # the rebuilt sidecar is fresh
        assert len(f) == len(records) + len(extra)


def _masked(data: bytes) -> bytes:
    from crc32c import crc32c

    c = crc32c(data)
    return struct.pack("<I", (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


def test_rewritten_file_detected(tmp_path: Path) -> None:
    path = write_records(tmp_path / "r.tfrecord", [b"a" * 10, b"b" * 10, b"c" * 10])
    tfr.TFRecordFile(path).close()
    st_ = path.stat()
    write_records(path, [b"x" * 10, b"b" * 10, b"c" * 10])  # same size, different first record
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))  # and even the same mtime
    with pytest.raises(tfr.StaleIndexError, match="first or last record"):
        tfr.TFRecordFile(path, on_stale="raise")
    with tfr.TFRecordFile(path) as f:
        assert f[0] == b"x" * 10
    write_records(path, [b"1" * 5, b"2" * 41])  # same size, different layout and a new mtime
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns + 10**9))
    with pytest.raises(tfr.StaleIndexError, match="mtime"):
        tfr.TFRecordFile(path, on_stale="raise")
    with tfr.TFRecordFile(path) as f:
        assert list(f) == [b"1" * 5, b"2" * 41]


def test_bad_on_stale_value(small: tuple[Path, list[bytes]]) -> None:
    with pytest.raises(ValueError, match="on_stale"):
        tfr.TFRecordFile(small[0], on_stale="ignore")


# ----------------------------------------------------------------- concurrent builders


def _build(path: str, barrier: multiprocessing.synchronize.Barrier, out: multiprocessing.Queue[object]) -> None:
    barrier.wait()
    with tfr.TFRecordFile(path) as f:
        out.put(len(f))


def test_two_processes_build_one_index(tmp_path: Path) -> None:
    records = [bytes([i % 251]) * (i % 40) for i in range(20000)]
    path = write_records(tmp_path / "race.tfrecord", records)
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_build, args=(str(path), barrier, out)) for _ in range(2)]
    for p in procs:
        p.start()
    counts = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert counts == [len(records)] * 2
    assert sorted(os.listdir(tmp_path)) == ["race.tfrecord", "race.tfrecord" + SIDECAR]  # no temp files left
    assert tfr_offsets(path).tolist() == [o for o, _ in raw_index(path)] + [path.stat().st_size]
    with tfr.TFRecordFile(path, on_stale="raise") as f:
        assert f[12345] == records[12345]


# ----------------------------------------------------------------- DALI / tfrecord text index


def test_text_index_round_trip(tmp_path: Path) -> None:
    records = payloads(40, seed=11)
    path = write_records(tmp_path / "d.tfrecord", records)
    text = tmp_path / "d.idx"
    tfr.write_text_index(path, destination=text)
    independent = "".join(f"{o} {n}\n" for o, n in raw_index(path))
    assert text.read_text() == independent
    with tfr.TFRecordFile(path, index=text) as f:  # read back through the text index
        assert list(f) == records and f[-3] == records[-3]
    hand = tmp_path / "hand.idx"  # as DALI's tfrecord2idx writes it; tolerate a missing final newline
    hand.write_text(independent.rstrip("\n"))
    with tfr.TFRecordFile(path, index=hand) as f:
        assert f[[0, 39]] == [records[0], records[39]]
    assert text.read_text() == independent  # never overwritten


def test_bad_text_index(small: tuple[Path, list[bytes]], tmp_path: Path) -> None:
    path, records = small
    entries = raw_index(path)
    bad = tmp_path / "bad.idx"
    for content, what in (
        ("0 16\nx y\n", "integers"),
        ("0\n", "pair"),
        ("".join(f"{o} {n}\n" for o, n in entries[1:]), "line 1"),
        ("".join(f"{o} {n + (k == 3)}\n" for k, (o, n) in enumerate(entries)), "line 5"),
    ):
        bad.write_text(content)
        with pytest.raises(ValueError, match=what):
            tfr.TFRecordFile(path, index=bad)
    short = tmp_path / "short.idx"  # a text index of an older, shorter version of the file
    short.write_text("".join(f"{o} {n}\n" for o, n in entries[:-1]))
    with pytest.raises(tfr.StaleIndexError):
        tfr.TFRecordFile(path, index=short, on_stale="raise")
    with tfr.TFRecordFile(path, index=short) as f:
        assert list(f) == records
    assert short.read_text().count("\n") == len(entries) - 1


# ----------------------------------------------------------------- threads and processes


def test_two_threads_share_one_file(tmp_path: Path) -> None:
    records = payloads(2000, seed=4)
    path = write_records(tmp_path / "th.tfrecord", records)
    errors: list[BaseException] = []
    with tfr.TFRecordFile(path) as f:

        def work(seed: int) -> None:
            try:
                for i in np.random.default_rng(seed).integers(-2000, 2000, 5000).tolist():
                    assert f[i] == records[i]
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(s,)) for s in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


def _read_some(args: tuple[tfr.TFRecordFile, list[int]]) -> list[bytes]:
    f, picks = args
    return f[picks]


_INHERITED: list[tfr.TFRecordFile] = []


def _read_inherited(picks: list[int], out: multiprocessing.Queue[object]) -> None:
    out.put(_INHERITED[0][picks])


@pytest.mark.parametrize("method", ["fork", "spawn"])
@pytest.mark.parametrize("index", [None, False])
def test_worker_processes(tmp_path: Path, method: str, index: object) -> None:
    records = payloads(300, seed=6)
    path = write_records(tmp_path / "mp.tfrecord", records)
    ctx = multiprocessing.get_context(method)
    with tfr.TFRecordFile(path, index=index) as f:
        jobs = [(f, list(range(k, 300, 3))) for k in range(3)]
        with ctx.Pool(2) as pool:  # each job pickles f: the worker reopens the file
            results = pool.map(_read_some, jobs)
        assert results == [records[k::3] for k in range(3)]
        if method == "fork":  # DataLoader-style: the child inherits the open object, no pickling
            _INHERITED[:] = [f]
            out = ctx.Queue()
            proc = ctx.Process(target=_read_inherited, args=([0, -1, 150], out))
            proc.start()
            assert out.get(timeout=60) == [records[0], records[-1], records[150]]
            proc.join(60)
            _INHERITED.clear()


class _RecordsDataset:
    """A minimal map-style dataset over a TFRecordFile, as a user would write one for a DataLoader."""

    def __init__(self, f: tfr.TFRecordFile) -> None:
        self.f = f

    def __len__(self) -> int:
        return len(self.f)

    def __getitem__(self, i: int) -> bytes:
        return self.f[i]


@pytest.mark.torch
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_torch_dataloader_workers(tmp_path: Path, method: str) -> None:
    from torch.utils.data import DataLoader

    records = payloads(64, seed=8)
    path = write_records(tmp_path / "dl.tfrecord", records)
    with tfr.TFRecordFile(path) as f:
        loader = DataLoader(
            _RecordsDataset(f),
            batch_size=8,
            shuffle=True,
            num_workers=2,
            multiprocessing_context=method,
            collate_fn=list,
        )
        seen = [r for batch in loader for r in batch]
    assert sorted(seen) == sorted(records) and len(seen) == len(records)
