# Fuzz targets for what a hostile dataset folder or store can plant beside the records (run by
# fuzz.py, which describes every target):
#
#   journal  a publish journal planted in an output folder (the input damages a valid one, or is
#            the journal): a reader listing the folder and a writer replacing its shards return
#            or raise a library error, and nothing outside the folder is written or deleted.
#   sidecar  the default sidecar beside a plain file and beside a GZIP file replaced by damaged
#            bytes: every record read (TFRecordFile, count_records, iter_records through the
#            seek points) is the true one, or a library error.
#   remote   the bodies the remote index loader parses (a sidecar uploaded beside an object, a
#            text index named by index=): offsets that rise from 0, or a library error; with
#            fsspec installed, also read through an object of its in-memory store.
from __future__ import annotations

import itertools
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

import tfrecord_lite as tfr

logging.getLogger("tfrecord_lite").addHandler(logging.NullHandler())  # refused journals are logged: not here


def damage(good: bytes, data: bytes) -> bytes:
    """`good` changed by `data`: pairs (position, xor) flip bytes; the first byte may cut it."""
    out = bytearray(good)
    for k in range(1, len(data) - 1, 2):
        if out:
            out[data[k] * len(out) // 256] ^= data[k + 1] or 1
    return bytes(out[: len(out) * (data[0] + 1) // 256] if data and data[0] < 64 else out)


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


# ---------------------------------------------------------------- journal


class _JournalFolder:
    """A dataset folder (copied afresh for each input), a victim folder beside it, and a valid
    journal to damage."""

    def __init__(self) -> None:
        self.root = tempfile.mkdtemp(prefix="tfrl-fuzz-journal-")
        self.template = os.path.join(self.root, "template")
        os.mkdir(self.template)
        with tfr.ShardedWriter(os.path.join(self.template, "train"), num_shards=2) as w:
            for i in range(6):
                w.write(b"record %d" % i)
        moves = [["k", "train-00000-of-00002.tfrecord", 4]]
        self.good = json.dumps({"moves": moves, "deletes": ["train-00001-of-00002.tfrecord"]}).encode()

    def check(self, journal: bytes) -> None:
        work, victim = os.path.join(self.root, "work"), os.path.join(self.root, "victim")
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(victim, ignore_errors=True)
        shutil.copytree(self.template, work)
        os.mkdir(victim)
        Path(victim, "keep").write_bytes(b"keep")
        staging = os.path.join(work, ".train.publish-X")
        os.mkdir(staging)
        Path(staging, "k").write_bytes(b"evil")
        Path(staging, "journal.json").write_bytes(journal)
        try:
            list(tfr.iter_records(os.path.join(work, "train-*")))
        except tfr.TFRecordError:
            pass
        try:
            with tfr.ShardedWriter(os.path.join(work, "train"), num_shards=2, overwrite=True) as w:
                w.write(b"new")
        except tfr.TFRecordError:
            pass
        _expect(os.listdir(victim) == ["keep"] and Path(victim, "keep").read_bytes() == b"keep", "victim touched")
        _expect(sorted(os.listdir(self.root)) == ["template", "victim", "work"], "wrote beside the folder")


_journal: _JournalFolder | None = None


def fuzz_journal(data: bytes) -> None:
    global _journal
    if _journal is None:
        _journal = _JournalFolder()
    _journal.check(damage(_journal.good, data))
    _journal.check(data)


# ---------------------------------------------------------------- sidecars beside the files


class _Sidecars:
    """A plain and a GZIP file with their default sidecars, and the good sidecars' bytes."""

    def __init__(self) -> None:
        import numpy as np

        self.folder = tempfile.mkdtemp(prefix="tfrl-fuzz-sidecar-")
        self.plain = os.path.join(self.folder, "data.tfrecord")
        self.records = [bytes([i]) * (i * 7 % 50) for i in range(12)]
        with tfr.TFRecordWriter(self.plain) as w:
            for r in self.records:
                w.write(r)
        self.plain_sidecar = Path(tfr.write_index(self.plain)).read_bytes()
        self.gz = os.path.join(self.folder, "data.tfrecord.gz")
        rng = np.random.default_rng(1)  # seek points with windows
        self.gz_records = [rng.integers(0, 30, int(n), np.uint8).tobytes() for n in rng.integers(0, 60_000, 20)]
        with tfr.TFRecordWriter(self.gz, compression="gzip") as w:
            for r in self.gz_records:
                w.write(r)
        self.gz_sidecar = Path(tfr.write_index(self.gz)).read_bytes()

    def check_plain(self, sidecar: bytes) -> None:
        Path(self.plain + ".tfrlidx").write_bytes(sidecar)
        try:
            count = tfr.count_records(self.plain, verify=False)  # through the sidecar
            _expect(count == len(self.records), f"count_records gave {count} through sidecar {sidecar!r}")
        except tfr.TFRecordError:
            pass
        Path(self.plain + ".tfrlidx").write_bytes(sidecar)
        try:
            with tfr.TFRecordFile(self.plain) as f:
                _expect(list(f) == self.records, f"wrong records through sidecar {sidecar!r}")
        except tfr.TFRecordError:
            pass

    def check_gz(self, sidecar: bytes) -> None:
        Path(self.gz + ".tfrlidx").write_bytes(sidecar)
        try:
            _expect(list(tfr.iter_records(self.gz)) == self.gz_records, "wrong records through seek points")
        except tfr.TFRecordError:
            pass
        Path(self.gz + ".tfrlidx").write_bytes(sidecar)
        try:
            with tfr.TFRecordFile(self.gz) as f:
                for i in sorted({0, len(f) // 2, len(f) - 1}):
                    _expect(f[i] == self.gz_records[i], f"record {i} is wrong through a damaged GZIP sidecar")
        except tfr.TFRecordError:
            pass


_sidecars: _Sidecars | None = None


def fuzz_sidecar(data: bytes) -> None:
    global _sidecars
    if _sidecars is None:
        _sidecars = _Sidecars()
    _sidecars.check_plain(damage(_sidecars.plain_sidecar, data))
    _sidecars.check_plain(data)
    _sidecars.check_gz(damage(_sidecars.gz_sidecar, data))


# ---------------------------------------------------------------- remote index bodies


class _Store:
    """An object in fsspec's in-memory store (when fsspec is installed), its good sidecar's and
    text index's bytes, and a cache folder of its own for the indexes of objects."""

    def __init__(self) -> None:
        local = tempfile.mkdtemp(prefix="tfrl-fuzz-remote-")
        path = os.path.join(local, "data.tfrecord")
        self.records = [bytes([i]) * (i * 3 % 20) for i in range(9)]
        with tfr.TFRecordWriter(path) as w:
            for r in self.records:
                w.write(r)
        self.sidecar = Path(tfr.write_index(path)).read_bytes()
        tfr.write_text_index(path, destination=os.path.join(local, "data.idx"))
        self.text = Path(local, "data.idx").read_bytes()
        self.url = "memory://tfrl-fuzz/data.tfrecord"
        try:
            import fsspec
        except ImportError:
            self.fs = None
            return
        os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tfrl-fuzz-cache-")
        self.fs = fsspec.filesystem("memory")
        self.fs.pipe("/tfrl-fuzz/data.tfrecord", Path(path).read_bytes())

    def parse(self, body: bytes) -> None:
        """What the loader makes of a body fetched from a store: an index whose offsets rise from
        0 by a record's overhead at least, or a library error."""
        from tfrecord_lite._index.record_index import is_record_index, parse_text_index, record_index_from_buffer

        try:
            if is_record_index(body):
                offsets = record_index_from_buffer(body, "memory://body").offsets
            else:
                offsets = parse_text_index(body, "memory://body")
        except tfr.TFRecordError:
            return
        rises = all(int(b) - int(a) >= 16 for a, b in itertools.pairwise(offsets))
        _expect(int(offsets[0]) == 0 and rises, f"the index body {body!r} gave offsets {offsets.tolist()}")

    def check(self, body: bytes, named: bool) -> None:
        self.parse(body)
        if self.fs is None:
            return
        target = "/tfrl-fuzz/named.idx" if named else "/tfrl-fuzz/data.tfrecord.tfrlidx"
        self.fs.pipe(target, body)
        shutil.rmtree(os.environ["XDG_CACHE_HOME"], ignore_errors=True)
        try:
            with tfr.TFRecordFile(self.url, index="memory:/" + target if named else None) as f:
                _expect(list(f) == self.records, f"wrong records through the remote index {body!r}")
        except tfr.TFRecordError:
            pass


_store: _Store | None = None


def fuzz_remote(data: bytes) -> None:
    global _store
    if _store is None:
        _store = _Store()
    _store.check(damage(_store.sidecar, data), named=False)
    _store.check(data, named=False)
    _store.check(damage(_store.text, data), named=True)
