"""Random access to a TFRecord file: TFRecordFile (`source`: one file, a path or a URL; `compression` "auto"
recognises GZIP / ZLIB from the first bytes, and a named kind the file contradicts is a ValueError naming
both). An uncompressed file is memory-mapped and its index (see _index/record_index.py) gives each record's
span, so f[i] is two array lookups, one slice of the map and (with verify) two CRCs, inlined in
TFRecordFile.__getitem__. TFRecordFile holds its file's records as one of two backends
and hands them len, [i], slices, iteration, offsets and close: MappedRecords (_records/mapped_file.py) for an
uncompressed file, CompressedRecords (_records/compressed_file.py) for a GZIP / ZLIB one.
Reads keep no state, so threads can share one object; a forked child inherits the maps,
and pickling sends only the path and options (plus an in-memory index when there is no
sidecar), so a spawned worker reopens the file in O(1). An object in a store (a URL) is
read through a RemoteBuffer instead of a map (_index/remote_index.py finds its index):
slices of it are ranged reads through a block cache, and a list of records is fetched
first by a few coalesced, concurrent requests. Each kind of file is opened by one call down
into _index, which hands back its index ready (file_index.open_file_index for a local file,
remote_index.open_remote for an object, gzip_index.open_gzip_spans through
compressed_file.py): with an on_error that skips damage, a file that does not index cleanly
is indexed there over its good records (_index/tolerant.py). A file that shrinks while open:
each read of the map asks the file's size first (one fstat; one for a whole batch of records, against
the batch's furthest end) and a record past its end raises TFRecordError ("FILE changed while open:
...") instead of touching unbacked pages (SIGBUS).
"""

from __future__ import annotations

import operator
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

import numpy as np

from tfrecord_lite._compression.kinds import is_compressed, normalize_compression, read_as
from tfrecord_lite._errors import PathName, RecordTooLargeError
from tfrecord_lite._example.decode import decode_example, decode_sequence_example
from tfrecord_lite._index.file_index import open_file_index
from tfrecord_lite._index.record_index import RecordIndex
from tfrecord_lite._index.sidecar_file import IndexArg
from tfrecord_lite._records.mapped_file import MappedRecords, closed_error, int_view
from tfrecord_lite._repr import count, describe, plural
from tfrecord_lite._storage.files import display_name, read_head
from tfrecord_lite._storage.locations import StorageOptions, is_url
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError
from tfrecord_lite._wire.sniff import SNIFF_SIZE, inflates, sniff_compression

if TYPE_CHECKING:
    from tfrecord_lite._records.compressed_file import CompressedRecords


_Self = TypeVar("_Self", bound="RecordSequence")


class RecordSequence(Sequence[bytes]):
    """Indexing shared by TFRecordFile and ShardedRecords: ints (negative too), slices, index lists."""

    def _get(self, i: int) -> bytes:  # pragma: no cover - abstract
        raise NotImplementedError

    def _take(self, positions: Iterable[int]) -> list[bytes]:
        """The records at `positions`, already checked to be in 0..len-1."""
        return [self._get(i) for i in positions]

    @overload
    def __getitem__(self, key: int) -> bytes: ...

    @overload
    def __getitem__(self, key: slice | Sequence[int] | np.ndarray) -> list[bytes]: ...

    def __getitem__(self, key: Any) -> Any:
        """f[i] -> bytes; f[a:b:c], f[[i, j]], f[int array] or f[bool mask] -> list of bytes."""
        if type(key) is int:  # the hot path
            return self._get(key)
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            return self._get(operator.index(key))
        if isinstance(key, slice):
            return self._take(range(*key.indices(len(self))))
        if isinstance(key, (str, bytes, float, bool)):
            raise TypeError(f"records are indexed by int, slice or a sequence of ints, not {type(key).__name__}")
        picks = np.asarray(key)
        if picks.dtype == np.bool_:
            if picks.shape != (len(self),):
                raise IndexError(f"a boolean mask must have shape ({len(self)},), not {picks.shape}")
            picks = np.flatnonzero(picks)
        elif picks.size == 0:
            return []
        elif picks.ndim != 1 or picks.dtype.kind not in "iu":
            raise TypeError(
                f"an index list must be a flat sequence of ints, not {picks.dtype} with shape {picks.shape}"
            )
        n = len(self)
        outside = (picks < -n) | (picks >= n)
        if outside.any():
            checked_position(int(picks[outside][0]), n)  # raises the IndexError
        return self._take(np.where(picks < 0, picks + n, picks).tolist())

    def example(self, i: int, features: dict[str, Any] | None = None) -> dict[str, Any]:
        """Record `i` decoded as a tf.train.Example (with `features`, parsed like tf.io.parse_single_example)."""
        return decode_example(self[i], features)

    def sequence_example(
        self,
        i: int,
        context_features: dict[str, Any] | None = None,
        sequence_features: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Record `i` decoded as a tf.train.SequenceExample: (context, feature_lists), with the specs
        parsed like tf.io.parse_single_sequence_example (see decode_sequence_example)."""
        return decode_sequence_example(self[i], context_features, sequence_features)

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def _compression_of(path: str, compression: Compression, damaged: bool, storage_options: StorageOptions = None) -> str:
    """What `path` (or the object at a URL) is read as: '', 'gzip' or 'zlib'. With compression "auto",
    what its first bytes say (missing files: ''; opening them says why); with `damaged` (damage is
    skipped), compressed only if it starts a stream that inflates (see require_uncompressed). A
    compression named by the caller is what the file is read as, after checking that its first bytes
    do not say otherwise (ValueError naming both)."""
    try:
        head = read_head(path, SNIFF_SIZE, storage_options)
    except OSError:  # opening it says why
        wanted = normalize_compression(compression, allow_auto=True)
        return "" if wanted == "auto" else wanted
    kind = sniff_compression(head)
    if is_compressed(kind) and damaged and not inflates(head, kind):
        kind = "unknown"  # a damaged plain file whose first bytes happen to look compressed
    return read_as(compression, kind, display_name(path) or path)


def checked_position(i: int, n: int) -> int:
    """`i` as a position in a sequence of `n` (negative counts from the end); IndexError if outside."""
    if i < 0:
        i += n
    if not 0 <= i < n:
        raise IndexError(f"record index {i if i >= 0 else i - n} is out of range for {plural(n, 'record')}")
    return i


_NO_OFFSETS = int_view(np.zeros(1, np.uint64))  # what a closed TFRecordFile indexes


class TFRecordFile(RecordSequence):
    """Random access to the records of a TFRecord file through a memory map and an index.

    `index`: None (default) uses, or builds and saves, the sidecar `<path>.tfrlidx`;
    a path names a binary sidecar or a DALI / `tfrecord` text index (built there if
    missing); False keeps the index in memory only. `verify` checks CRCs when the
    index is built and on every read. `on_stale` says what to do when the file
    changed after indexing: "rebuild" (default) or "raise" (StaleIndexError).
    A GZIP or ZLIB file is read through an index of its compressed stream (same interface;
    see _records/compressed_file.py).

    `on_error` / `max_skipped` (as iter_records'): with "skip" or a callable, a file that does
    not index cleanly is indexed over its good records only (the damage skipped and reported
    as iter_records does), so `len` counts them and `[i]` returns them; that index is held in
    memory and never saved as a sidecar (docs/reliability.md). Damage that appears after a
    file was indexed (a fresh sidecar) is found by the CRC check of `[i]`, which raises
    CorruptRecordError naming the file and offset in every mode: `len` already counted it.

    A URL (s3://, gs://, https://, ...) is read by ranged requests; its index is the sidecar
    next to the object, `index=` (path or URL), or one scan cached locally (see docs/cloud.md);
    a GZIP / ZLIB object is read from the seek points of its sidecar.
    `storage_options`: fsspec's options for it, or an fsspec filesystem.

    A file holding a record longer than `max_record_bytes` (1 GiB by default) raises
    RecordTooLargeError when it is opened, before any record is held in memory: a GZIP / ZLIB file
    while it is indexed, an uncompressed one by its index's record lengths.
    """

    # The hot path of f[i], inlined in __getitem__: the index tables and read function of an
    # uncompressed file's MappedRecords, and `_mapped`, the records they reach (0 for a
    # compressed file, which is read through _get, and when closed).
    _at: memoryview
    _ends: memoryview
    _read: Callable[[int, int], bytes]
    _mapped: int
    _records: MappedRecords | CompressedRecords | None

    def __init__(
        self,
        source: PathName,
        *,
        index: IndexArg = None,
        compression: Compression = "auto",
        verify: bool = True,
        on_stale: str = "rebuild",
        on_error: OnError = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        self._max_record_bytes = max_record_bytes
        self._setup(source, index, compression, verify, on_stale, DamagePolicy(on_error, max_skipped), storage_options)
        self._open(None)

    def _setup(
        self,
        source: PathName,
        index: IndexArg,
        compression: Compression,
        verify: bool,
        on_stale: str,
        policy: DamagePolicy,
        storage_options: StorageOptions,
    ) -> None:
        """Hold what opens the file and tell what it is read as (it starts closed)."""
        self._keep(source, index, verify, on_stale, None if policy.raises else policy, storage_options)
        # damage skipped: the first record may be damaged
        self._compression = _compression_of(self._path, compression, not policy.raises, storage_options)

    def _keep(
        self,
        path: PathName,
        index: IndexArg,
        verify: bool,
        on_stale: str,
        policy: DamagePolicy | None,
        storage_options: StorageOptions,
    ) -> None:
        """Hold what opens the file (here, or again in a worker: __setstate__); it starts closed."""
        self._path = os.fspath(path)  # type: ignore[arg-type]
        self._index_arg = os.fspath(index) if isinstance(index, (str, os.PathLike)) else index
        self._verify = verify
        self._on_stale = on_stale
        self._policy = policy
        self._storage_options = storage_options
        self._lock = threading.Lock()
        self._forget()

    def _forget(self) -> None:
        """The closed state: no records."""
        self._records = None
        self._n = self._mapped = 0
        self._at = self._ends = _NO_OFFSETS

    def _open(self, prebuilt: RecordIndex | None) -> None:
        """Open the file's records (`prebuilt`: the in-memory index an uncompressed file pickles)."""
        records: MappedRecords | CompressedRecords
        if self._compression:
            from tfrecord_lite._records.compressed_file import open_compressed

            records = open_compressed(
                self._path,
                self._compression,
                self._index_arg,
                verify=self._verify,
                on_stale=self._on_stale,
                policy=self._policy,
                storage_options=self._storage_options,
                max_record_bytes=self._max_record_bytes,
            )
        elif is_url(self._path):
            records = self._open_remote(prebuilt)
        else:
            records = self._open_mapped(prebuilt)
        if isinstance(records, MappedRecords):
            try:
                records.refuse_longer_than(self._max_record_bytes)
            except RecordTooLargeError:
                records.close()
                raise
        self._records = records
        self._n = len(records)
        if isinstance(records, MappedRecords):
            self._at, self._ends, self._read, self._mapped = records.at, records.ends, records.read, self._n

    def _open_mapped(self, prebuilt: RecordIndex | None) -> MappedRecords:
        buf, idx = open_file_index(
            self._path,
            self._index_arg,
            verify=self._verify,
            on_stale=self._on_stale,
            policy=self._policy,
            prebuilt=prebuilt,
        )
        return MappedRecords(buf, idx, self._path, self._verify)

    def _open_remote(self, prebuilt: RecordIndex | None) -> MappedRecords:
        from tfrecord_lite._index.remote_index import open_remote

        if self._policy is not None:
            raise ValueError(
                f"on_error= skips damage while indexing a local file; read {self._name} with "
                "iter_records(on_error=...) instead"
            )
        buf, idx = open_remote(
            self._path,
            self._index_arg,
            verify=self._verify,
            on_stale=self._on_stale,
            storage_options=self._storage_options,
            prebuilt=prebuilt,
        )
        return MappedRecords(buf, idx, self._path, self._verify, remote=True)  # type: ignore[arg-type]

    # -- reading

    @property
    def path(self) -> str:
        """The TFRecord file (a URL without its secrets; the raw one is kept privately, for reading)."""
        return self._name

    @property
    def index_path(self) -> str | None:
        """The binary sidecar in use, or None when the index is held in memory."""
        return self._records.location if self._records is not None else None

    @property
    def compression(self) -> str:
        """'' (uncompressed), 'gzip' or 'zlib'."""
        return self._records.compression if self._records is not None else ""

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, key: Any) -> Any:
        if type(key) is int:  # the hot path of an uncompressed file, inlined
            n = self._mapped
            i = key + n if key < 0 else key
            if 0 <= i < n:
                return self._read(self._at[i], self._ends[i])
        self._check_open()
        return super().__getitem__(key)

    def _check_open(self) -> None:
        if self.closed:
            raise closed_error(self._name)

    def _open_records(self) -> MappedRecords | CompressedRecords:
        records = self._records
        if records is None:
            raise closed_error(self._name)
        return records

    @property
    def _name(self) -> str:
        return display_name(self._path) or self._path

    def _get(self, i: int) -> bytes:
        records = self._open_records()
        return records.get(checked_position(i, self._n))

    def _take(self, positions: Iterable[int]) -> list[bytes]:
        return self._open_records().take(positions)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._open_records())

    def offset(self, i: int) -> int:
        """Byte offset of record `i` in the file (where its 12-byte header starts); in a compressed
        file, its offset in the uncompressed stream."""
        i = checked_position(i, self._n)
        return self._open_records().offset(i)

    def record_offsets(self, start: int = 0, stop: int | None = None) -> np.ndarray | None:
        """Where records start..stop - 1 (all by default) of an uncompressed local file start and, last,
        where record stop - 1 ends (the records lie back to back), a copy of that part of the index;
        None for a compressed file or an object in a store, and for an index built past damage (its
        records do not follow each other)."""
        records = self._open_records()
        if not isinstance(records, MappedRecords) or records.index.ends is not None or is_url(self._path):
            return None
        start, stop, _ = slice(start, stop).indices(self._n)
        return np.array(records.index.offsets[start : max(start, stop) + 1], dtype=np.int64)

    # -- life cycle

    def close(self) -> None:
        """Release the file (its memory maps, or what reads it); reads afterwards raise ValueError."""
        with self._lock:
            records = self._records
            self._forget()  # first: a map cannot close while views of it are held
            if records is not None:
                records.close()

    @property
    def closed(self) -> bool:
        return self._records is None

    def __repr__(self) -> str:
        if self.closed:
            return describe("TFRecordFile", repr(self._name), "closed")
        index = f"index={self.index_path!r}" if self.index_path is not None else "index in memory"
        return describe("TFRecordFile", repr(self._name), self.compression, count(self._n), index, "open")

    def _repr_html_(self) -> str:
        """The file in a notebook: its facts and its first records as a table."""
        from tfrecord_lite._records.views import file_html

        return file_html(self)

    def __getstate__(self) -> dict[str, Any]:
        records = self._records
        in_memory = None
        if isinstance(records, MappedRecords) and records.location is None:  # no sidecar to reopen: send the offsets
            idx = records.index
            in_memory = (np.asarray(idx.offsets), idx.file_size, idx.mtime_ns, idx.check, idx.verified, idx.ends)
        return {
            "path": self._path,
            "index": self._index_arg,
            "verify": self._verify,
            "on_stale": self._on_stale,
            "policy": self._policy,
            "storage_options": self._storage_options,
            "compression": self._compression,
            "max_record_bytes": self._max_record_bytes,
            "in_memory": in_memory,
            "closed": self.closed,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        path, index, verify, on_stale = state["path"], state["index"], state["verify"], state["on_stale"]
        self._keep(path, index, verify, on_stale, state.get("policy"), state.get("storage_options"))
        self._compression = state.get("compression", "")
        self._max_record_bytes = state.get("max_record_bytes", MAX_RECORD_BYTES)
        if not state["closed"]:
            prebuilt = None
            if state.get("in_memory") is not None:
                offsets, size, mtime_ns, check, verified, ends = state["in_memory"]
                prebuilt = RecordIndex(offsets, size, mtime_ns, check, verified, ends=ends)
            self._open(prebuilt)


def open_with_policy(
    source: PathName,
    policy: DamagePolicy,
    *,
    index: IndexArg = None,
    compression: Compression = "auto",
    verify: bool = True,
    on_stale: str = "rebuild",
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> TFRecordFile:
    """A TFRecordFile whose damage `policy` is shared: ShardedRecords hands each shard the same one,
    so that max_skipped counts over all of them."""
    f = TFRecordFile.__new__(TFRecordFile)
    f._setup(source, index, compression, verify, on_stale, policy, storage_options)
    f._max_record_bytes = max_record_bytes
    f._open(None)
    return f
