"""Datasets made of many TFRecord files ("shards"). Reading: ShardedRecords opens
every shard as a TFRecordFile (O(1) each with a sidecar), keeps the cumulative
record counts, and maps a global index to (shard, local index) by bisection; a list of
indices is sorted and read shard by shard in file order, then put back in the order asked.
Writing: ShardedWriter writes TensorFlow-style names, `prefix-00003-of-00010
.tfrecord`, as one publish.Publication: the shards and their index sidecars
(saved from the offsets written, without a second scan) are staged under
temporary names and appear together at close, or not at all; the prefix is
locked meanwhile, so two writers never number their shards from the same point.

Growth rule: shard numbers only ever increase, and every shard's `-of-` says
the current total. Writing more shards later (append=True) numbers them after the
highest existing one, and the old shards get the new total in the same publish
step (their number and bytes unchanged, staged as hard links: no copy), so one
glob `prefix-?????-of-00005.tfrecord` matches them all. Reading in sorted name
order keeps every old record at its global index; a reader with the old files
open keeps reading them, one that lists them again finds the new names.

A URL prefix (s3://bucket/train) uses an uploads.RemotePublication instead: each
shard is an upload to a hidden staging object that appears only when complete,
its sidecar is uploaded from the offsets written, and close() gives them their
final names. An exception cancels the open uploads and removes the staged objects.
"""

from __future__ import annotations

import bisect
import contextlib
import glob
import os
import re
import warnings
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
from crc32c import crc32c

from tfrecord_lite._compression.kinds import kind_of, normalize_compression, without_suffix
from tfrecord_lite._errors import IndexFallbackWarning, PathName
from tfrecord_lite._example.encode import encode_example, encode_sequence_example
from tfrecord_lite._example.validate import as_record
from tfrecord_lite._index.record_index import RecordIndex, record_index_bytes, save_offsets
from tfrecord_lite._index.sidecar_file import SIDECAR_SUFFIX
from tfrecord_lite._records.random_access import RecordSequence, TFRecordFile, checked_position, open_with_policy
from tfrecord_lite._records.reader import RecordIterator, iter_records
from tfrecord_lite._records.writer import TFRecordWriter
from tfrecord_lite._repr import compression, count, describe, plural, shown_paths
from tfrecord_lite._storage.locations import StorageOptions, is_url, split_options
from tfrecord_lite._storage.publish import Publication
from tfrecord_lite._storage.sources import Sources, resolve_inputs
from tfrecord_lite._storage.uploads import RemotePublication, Store
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError
from tfrecord_lite._wire.crc import masked_crc
from tfrecord_lite._wire.framing import frame_header

_SHARD_DIGITS = 5


def _tfindex_of(path: str) -> str:
    """The `tfrecord` package's index of a shard (its tools/tfrecord2idx names it so)."""
    return os.path.splitext(path)[0] + ".tfindex"


# the files beside a shard that describe it, each by where it lies for a shard's path: the index
# sidecar, DALI's text index (tfrecord-lite index --text) and the `tfrecord` package's index. Their
# offsets stay right when a shard is renamed, so they are renamed with it.
_COMPANIONS: tuple[Callable[[str], str], ...] = (
    lambda path: path + SIDECAR_SUFFIX,
    lambda path: path + ".idx",
    _tfindex_of,
)


def renamed_for(path: str, compression: str) -> str:
    """The file name of `path` with its compression ending (if any) replaced by that of `compression`."""
    return without_suffix(os.path.basename(path)) + kind_of(compression).suffix


def shard_suffix(compression: str | None) -> str:
    """File name ending of shards: '.tfrecord', '.tfrecord.gz' (GZIP) or '.tfrecord.zlib' (ZLIB)."""
    return ".tfrecord" + kind_of(normalize_compression(compression)).suffix


def shard_name(prefix: str, number: int, total: int, suffix: str = ".tfrecord") -> str:
    """TensorFlow's shard file name: `prefix-00003-of-00010.tfrecord`."""
    return f"{prefix}-{number:0{_SHARD_DIGITS}d}-of-{total:0{_SHARD_DIGITS}d}{suffix}"


def _shard_pattern(prefix: str, suffix: str) -> re.Pattern[str]:
    base = re.escape(os.path.basename(prefix))
    return re.compile(rf"{base}-(\d{{{_SHARD_DIGITS},}})-of-(\d{{{_SHARD_DIGITS},}}){re.escape(suffix)}")


def prefix_store(prefix: str, storage_options: StorageOptions = None) -> Store | None:
    """The store of a URL prefix (None for a local one): where its existing shards are listed."""
    return Store(prefix, *split_options(storage_options)) if is_url(prefix) else None


def existing_shards(prefix: str, suffix: str = ".tfrecord", store: Any = None) -> list[tuple[int, str]]:
    """(shard number, path) of the shards named `prefix-NNNNN-of-MMMMM<suffix>`, by number
    (objects of a store when `store`, an uploads.Store, is given)."""
    pattern = _shard_pattern(prefix, suffix)
    found = []
    listed = store.glob(prefix + "-*-of-*" + suffix) if store is not None else None
    for path in listed if listed is not None else glob.glob(glob.escape(prefix) + "-*-of-*" + glob.escape(suffix)):
        match = pattern.fullmatch(os.path.basename(path))
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


_Self = TypeVar("_Self", bound="ShardedWriter")


class ShardedRecords(RecordSequence):
    """Many TFRecord files read as one sequence: `len` is the total, `[i]` finds the record's shard.

    `source` is a file, a list of files, a folder, a glob or a ShardedWriter prefix (see
    docs/inputs.md); a folder, glob or prefix is taken in natural name order. Each shard is a
    TFRecordFile, so the options `compression`, `verify`, `on_stale` and `max_record_bytes` are
    passed on to them. URLs work too
    (their shards are opened concurrently), with `storage_options` for fsspec.
    `on_error` / `max_skipped`: a shard that does not index cleanly is indexed over its good
    records, as TFRecordFile does; max_skipped counts the damaged spans of all the shards.
    `max_record_bytes` is each shard's TFRecordFile's.
    """

    def __init__(
        self,
        source: Sources,
        *,
        compression: Compression = "auto",
        verify: bool = True,
        on_stale: str = "rebuild",
        on_error: OnError = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        self.paths = resolve_inputs(source, storage_options=storage_options)
        self._verify, self._storage_options = verify, storage_options
        self._compression, self._max_record_bytes = compression, max_record_bytes
        self.shards: list[TFRecordFile] = []
        policy = DamagePolicy(on_error, max_skipped)  # one for all the shards

        def open_shard(path: str) -> TFRecordFile:
            return open_with_policy(
                path,
                policy,
                compression=compression,
                verify=verify,
                on_stale=on_stale,
                storage_options=storage_options if is_url(path) else None,
                max_record_bytes=max_record_bytes,
            )

        try:
            with _one_fallback_warning(len(self.paths)):
                if any(is_url(p) for p in self.paths):  # each open waits on a few requests: open them together
                    with ThreadPoolExecutor(8) as pool:
                        futures = [pool.submit(open_shard, p) for p in self.paths]
                        for future in futures:
                            self.shards.append(future.result())
                else:
                    self.shards.extend(open_shard(p) for p in self.paths)
        except BaseException:
            self.close()
            raise
        self._ends: list[int] = []
        total = 0
        for shard in self.shards:
            total += len(shard)
            self._ends.append(total)

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def locate(self, i: int) -> tuple[int, int]:
        """(shard number, index within that shard) of global record `i`."""
        i = checked_position(i, len(self))
        k = bisect.bisect_right(self._ends, i)
        return k, i - (self._ends[k - 1] if k else 0)

    def _get(self, i: int) -> bytes:
        k, local = self.locate(i)
        return self.shards[k]._get(local)

    def _take(self, positions: Iterable[int]) -> list[bytes]:
        """The records at `positions` (in range), read shard by shard in file order (one pass
        forward through each memory map or store), then put back in the order asked."""
        wanted = np.fromiter(positions, np.int64)
        if len(wanted) < 2:
            return [self._get(int(i)) for i in wanted]
        order = np.argsort(wanted, kind="stable")
        ordered = wanted[order]
        ends = np.asarray(self._ends, np.int64)
        shard_of = np.searchsorted(ends, ordered, side="right")
        starts = np.concatenate(([0], ends[:-1]))
        read: list[bytes] = []
        for k in np.unique(shard_of).tolist():
            local = ordered[shard_of == k] - starts[k]
            read.extend(self.shards[k]._take(local.tolist()))
        out: list[bytes] = [b""] * len(read)
        for target, record in zip(order.tolist(), read, strict=True):
            out[target] = record
        return out

    def __iter__(self) -> Iterator[bytes]:
        for shard in self.shards:
            yield from shard

    def stream(self, *, on_error: OnError = "raise", max_skipped: int | None = None) -> RecordIterator:
        """The records of every shard in order, read as a stream by iter_records (not through
        the indexes), so that damage found since the shards were indexed can be skipped:
        `on_error` and `max_skipped` are iter_records', over all the shards."""
        return iter_records(
            self.paths,
            compression=self._compression,
            verify=self._verify,
            on_error=on_error,
            max_skipped=max_skipped,
            storage_options=self._storage_options,
            max_record_bytes=self._max_record_bytes,
        )

    def close(self) -> None:
        """Close every shard."""
        for shard in self.shards:
            shard.close()

    def __repr__(self) -> str:
        closed = bool(self.shards) and all(shard.closed for shard in self.shards)
        return describe("ShardedRecords", shown_paths(self.paths), count(len(self)), "closed" if closed else "open")


@contextlib.contextmanager
def _one_fallback_warning(shards: int) -> Iterator[None]:
    """The IndexFallbackWarnings of the shards opened in the block, as one warning (other
    warnings pass through)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IndexFallbackWarning)
        yield
    fallbacks = [w for w in caught if issubclass(w.category, IndexFallbackWarning)]
    for w in caught:
        if w not in fallbacks:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if fallbacks:
        warnings.warn(
            f"{len(fallbacks)} of {plural(shards, 'shard')} use an in-memory index, their sidecar being unreadable; "
            f"the first: {fallbacks[0].message}",
            IndexFallbackWarning,
            stacklevel=4,
        )


class _Shard:
    """One shard being written: its writer, temporary path and (uncompressed) record offsets."""

    def __init__(self, temp: str, compression: str | None, track: bool, storage_options: StorageOptions) -> None:
        self.temp = temp
        self.writer = TFRecordWriter(temp, compression=compression, buffered=True, storage_options=storage_options)
        self.offsets: array[int] | None = array("Q", [0]) if track else None
        self.records = 0
        self.bytes = 0
        self.first = self.last = b""  # for the sidecar's edge check of an uploaded shard

    def write(self, record: bytes) -> None:
        self.writer.write(record)
        if not self.records:
            self.first = record
        self.last = record
        self.records += 1
        self.bytes += len(record) + 16
        if self.offsets is not None:
            self.offsets.append(self.bytes)

    def sidecar(self) -> bytes:
        """The sidecar of this (finished, uncompressed) shard, from what was written."""
        assert self.offsets is not None
        edges = b"".join(frame_header(len(r)) + masked_crc(r).to_bytes(4, "little") for r in (self.first, self.last))
        offsets = np.frombuffer(self.offsets, np.uint64)
        check = crc32c(edges) if self.records else 0
        return record_index_bytes(RecordIndex(offsets, self.bytes, 0, check, True))


class ShardedWriter:
    """Write records into TensorFlow-style shards `prefix-00000-of-00010.tfrecord`, with index sidecars.

    Split by `num_shards` (records dealt round-robin) or by `max_records` /
    `max_bytes` per shard (a new shard when the next record would pass either; a
    record larger than `max_bytes` gets a shard of its own); with none of them, one
    shard. Shards appear under their final names at close (`.paths`), all in one
    atomic step (a killed writer publishes nothing; see docs/reliability.md); on an
    exception inside the `with` block nothing is published. Existing shards of the
    same prefix raise FileExistsError unless `append=True`, which adds new shards
    after them and renames the old ones to the new total in the same step (see the
    growth rule in docs/sharding.md), or `overwrite=True`, which
    replaces them at close. Compressed shards get no index. The prefix is locked
    while the writer is open: a second writer of it raises OutputLockedError.
    The prefix's folder is created when it does not exist yet.
    `publication`: an open Publication to join (its owner commits it, together
    with other files such as a label map); by default the writer has its own.
    """

    def __init__(
        self,
        prefix: PathName,
        *,
        num_shards: int | None = None,
        max_records: int | None = None,
        max_bytes: int | None = None,
        compression: Compression = None,
        index: bool = True,
        append: bool = False,
        overwrite: bool = False,
        suffix: str = ".tfrecord",
        publication: Publication | RemotePublication | None = None,
        storage_options: StorageOptions = None,
    ) -> None:
        for name, value in (("num_shards", num_shards), ("max_records", max_records), ("max_bytes", max_bytes)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive int, not {value!r}")
        if num_shards is not None and (max_records is not None or max_bytes is not None):
            raise ValueError("give either num_shards or max_records / max_bytes, not both")
        if append and overwrite:
            raise ValueError("give append=True (add shards) or overwrite=True (replace them), not both")
        self.prefix = os.fspath(prefix)  # type: ignore[arg-type]
        self.suffix = suffix
        self._storage_options = storage_options
        self._store = prefix_store(self.prefix, storage_options)
        self.compression = compression
        self._track = index and not compression
        self._max_records = max_records
        self._max_bytes = max_bytes
        self._owned = publication is None
        if publication is None:
            options, fs = split_options(storage_options)
            publication = RemotePublication(self.prefix, options, fs) if self._store else Publication(self.prefix)
        self.publication = publication
        try:
            old = existing_shards(self.prefix, suffix, self._store)
            if old and not (append or overwrite):
                raise FileExistsError(
                    f"{len(old)} shards named {os.path.basename(old[0][1])}... already exist: pass append=True "
                    "to add new shards after them, overwrite=True to replace them, or remove them first"
                )
        except BaseException:
            self._release()
            raise
        for _, path in old if overwrite else ():
            self.publication.delete(path + SIDECAR_SUFFIX)  # first: a sidecar never outlives its shard
            self.publication.delete(path)
        self._first = old[-1][0] + 1 if old and append else 0
        self._append = append
        self._old = old if append else []
        self._rewrites: dict[str, Callable[[], Iterable[bytes]]] = {}
        self._done: list[_Shard] = []
        self._open: list[_Shard] = []
        self._turn = 0
        self.paths: list[str] = []
        self.closed = False
        for _ in range(num_shards or 0):
            self._open.append(self._new_shard())
        self._round_robin = num_shards is not None

    def _new_shard(self) -> _Shard:
        number = self._first + len(self._done) + len(self._open)
        temp = self.publication.temp(f"{number:0{_SHARD_DIGITS}d}{self.suffix}")
        return _Shard(temp, self.compression, self._track, self._storage_options)

    def _release(self) -> None:
        if self._owned:
            self.publication.abort()

    def write(self, record: Any) -> None:
        """Write one record (any bytes-like object) to the shard whose turn it is."""
        if self.closed:
            raise ValueError("write to a closed ShardedWriter")
        data = as_record(record)
        if self._round_robin:
            shard = self._open[self._turn]
            self._turn = (self._turn + 1) % len(self._open)
        else:
            current = self._open[-1] if self._open else None
            if current is None or self._full(current, len(data)):
                if current is not None:
                    current.writer.close()
                    self._done.append(self._open.pop())
                self._open.append(self._new_shard())
            shard = self._open[-1]
        shard.write(data)

    def _full(self, shard: _Shard, size: int) -> bool:
        if shard.records == 0:
            return False
        if self._max_records is not None and shard.records >= self._max_records:
            return True
        return self._max_bytes is not None and shard.bytes + size + 16 > self._max_bytes

    def write_example(self, values: Mapping[str, Any]) -> None:
        """Encode `values` (a dict of feature values) as a tf.train.Example and write it."""
        self.write(encode_example(values))

    def write_sequence_example(self, context: Mapping[str, Any], feature_lists: Mapping[str, Any]) -> None:
        """Encode `context` and `feature_lists` ({key: [value per step]}) as a tf.train.SequenceExample
        and write it."""
        self.write(encode_sequence_example(context, feature_lists))

    def close(self) -> None:
        """Finish every shard and its index sidecar, and publish them all under their final names."""
        if self.closed:
            return
        try:
            if not self._done and not self._open and not self._append:
                self._open.append(self._new_shard())  # an empty dataset is one empty shard
            shards = self._done + self._open
            for shard in self._open:
                shard.writer.close()
            total = self._first + len(shards)
            finals = [shard_name(self.prefix, number, total, self.suffix) for number in range(self._first, total)]
            for shard, final in zip(shards, finals, strict=True):
                self.publication.move(shard.temp, final)
                if shard.offsets is not None and self._save_sidecar(shard):
                    self.publication.move(shard.temp + SIDECAR_SUFFIX, final + SIDECAR_SUFFIX)
            self._renumber_old(total)
            if self._owned:
                self.publication.commit()
        except BaseException as exc:
            self._abort_for(exc)
            raise
        self.closed = True
        self.paths.extend(finals)

    def _renumber_old(self, total: int) -> None:
        """The existing shards (and their sidecars) renamed to say the new total, in the same step;
        those given to rewrite_existing written anew."""
        for number, path in self._old:
            final = shard_name(self.prefix, number, total, self.suffix)
            if path in self._rewrites:
                self._write_old(number, path, final, self._rewrites[path]())
                continue
            if path == final:
                continue
            self.publication.link(path, final)  # the shard before its sidecars appear, and
            for companion in _COMPANIONS:
                sidecar = companion(path)
                if self._store.exists(sidecar) if self._store is not None else os.path.isfile(sidecar):
                    self.publication.link(sidecar, companion(final))
                    self.publication.delete(sidecar)  # the sidecars before their shard goes
            self.publication.delete(path)

    def _write_old(self, number: int, path: str, final: str, records: Iterable[bytes]) -> None:
        shard = _Shard(
            self.publication.temp(f"{number:0{_SHARD_DIGITS}d}-new{self.suffix}"),
            self.compression,
            self._track,
            self._storage_options,
        )
        for record in records:
            shard.write(record)
        shard.writer.close()
        self.publication.move(shard.temp, final)
        for companion in _COMPANIONS:  # first: a sidecar never outlives its shard
            self.publication.delete(companion(path))
        self.publication.delete(path)
        if shard.offsets is not None and self._save_sidecar(shard):
            self.publication.move(shard.temp + SIDECAR_SUFFIX, final + SIDECAR_SUFFIX)

    def _save_sidecar(self, shard: _Shard) -> bool:
        """Write the sidecar of a finished shard next to its temporary file (or object)."""
        assert shard.offsets is not None
        if self._store is not None:
            self._store.put(shard.temp + SIDECAR_SUFFIX, shard.sidecar())
            return True
        return save_offsets(shard.temp, np.frombuffer(shard.offsets, np.uint64), verified=True)

    def abort(self) -> None:
        """Drop everything written: stop the shards (cancelling uploads) and publish none of them."""
        self.closed = True
        for shard in self._done + self._open:
            try:
                shard.writer.abort()
            except OSError:  # a full disk: the file is dropped anyway
                pass
        self._release()

    def _abort_for(self, exc: BaseException) -> None:
        """abort() because of `exc`; a full disk raises an error about the output, not a temporary file."""
        self.abort()
        clearer = self.publication.abort_for(exc) if self._owned else None
        if clearer is not None:
            raise clearer from exc

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        if exc is None:
            self.close()
        else:
            self._abort_for(exc)

    @property
    def records_written(self) -> int:
        """How many records were written so far."""
        return sum(shard.records for shard in self._done + self._open)

    def __repr__(self) -> str:
        split = f"num_shards={len(self._open)}" if self._round_robin else None
        limits = [f"{k}={v}" for k, v in (("max_records", self._max_records), ("max_bytes", self._max_bytes)) if v]
        shards = plural(len(self.paths), "shard") if self.closed else None
        return describe(
            "ShardedWriter",
            repr(self.prefix),
            split,
            *limits,
            compression(self.compression),
            count(self.records_written, "records written"),
            shards,
            "closed" if self.closed else "open",
        )


def rewrite_existing(writer: ShardedWriter, shard: str, contents: Callable[[], Iterable[bytes]]) -> None:
    """With append=True: have `writer` publish its existing `shard` with the records `contents()` gives
    instead of its own (read at close, before the shard is replaced), in the same step as the new
    shards, with a new sidecar; its number stays (images.remove_images and pack_images' append)."""
    if shard not in {old for _, old in writer._old}:
        raise ValueError(f"{shard} is not an existing shard of {writer.prefix}")
    writer._rewrites[shard] = contents


def open_shard_writer(
    prefix: str,
    num_shards: int | None = None,
    max_records: int | None = None,
    max_bytes: int | None = None,
    compression: str | None = None,
    index: bool = True,
    append: bool = False,
    overwrite: bool = False,
    publication: Publication | RemotePublication | None = None,
    storage_options: StorageOptions = None,
) -> ShardedWriter:
    """A ShardedWriter for `prefix`, shards named '.tfrecord[.gz|.zlib]'."""
    return ShardedWriter(
        prefix,
        num_shards=num_shards,
        max_records=max_records,
        max_bytes=max_bytes,
        compression=compression,
        index=index and not compression,
        append=append,
        overwrite=overwrite,
        suffix=shard_suffix(compression),
        publication=publication,
        storage_options=storage_options,
    )
