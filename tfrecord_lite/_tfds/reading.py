"""The records of a TFDS split string, read from the folder's shards: `Split`, a sequence of
decoded examples in the order TFDS reads them.

Strategy: the split string becomes runs of records per shard (_tfds/split_strings.py) from the
shard lengths of dataset_info.json, and their read order (TFDS's interleave, or file order) two
block table made on first use. Random access (`split[i]`) opens each shard it needs once, lazily:
a TFRecord shard as a TFRecordFile (its index sidecar, or one scan; a URL by ranged reads), an
ArrayRecord shard through the `array-record` package (imported then; a clear error names the extra
to install when it is missing). Iteration streams: a TFRecord shard is read by iter_records from
its first record on (the runs before `skip` passed over undecoded), at most 16 shards open at once
as TFDS interleaves them, so memory stays flat whatever the split's size; with `num_threads` the
examples are decoded on that many threads (Pillow and zlib release the GIL), still in order. A shard that holds fewer
records than dataset_info.json says raises an error naming it (unless `on_error` skips damage:
then the damaged records are left out, as the streaming reader leaves them out). A Split pickles as its folder, split
string and options, so a DataLoader worker reopens what it reads.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

import numpy as np

from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._example.validate import check_int
from tfrecord_lite._records.random_access import TFRecordFile, checked_position
from tfrecord_lite._records.reader import iter_records
from tfrecord_lite._records.threads import ordered_map
from tfrecord_lite._redact import redact
from tfrecord_lite._storage.locations import StorageOptions, is_url, local_path
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError
from tfrecord_lite._tfds.decode import decode_record
from tfrecord_lite._tfds.info_files import DatasetInfo
from tfrecord_lite._tfds.split_strings import FileRun, ReadOrder, file_runs, read_blocks, resolve

ARRAY_RECORD_HINT = "pip install 'tfrlite[arrayrecord]'"


class ReaderOptions:
    """The six reader options, held together and handed to every shard opened."""

    def __init__(
        self,
        compression: Compression = "auto",
        verify: bool = True,
        on_error: OnError = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        self.compression, self.verify, self.on_error = compression, verify, on_error
        self.max_skipped, self.storage_options, self.max_record_bytes = max_skipped, storage_options, max_record_bytes

    def as_kwargs(self) -> dict[str, Any]:
        return {
            "compression": self.compression,
            "verify": self.verify,
            "on_error": self.on_error,
            "max_skipped": self.max_skipped,
            "storage_options": self.storage_options,
            "max_record_bytes": self.max_record_bytes,
        }


class Split:
    """The examples a TFDS split string selects, decoded: `len`, `[i]` (the i-th example
    `tfds.as_numpy(builder.as_dataset(split=...))` hands back), iteration in that order with flat
    memory, `info` and `decode(source)` for a record's raw bytes."""

    def __init__(
        self,
        info: DatasetInfo,
        split: str,
        *,
        decode: bool = True,
        shuffle_files: bool = False,
        seed: int | None = None,
        num_threads: int = 1,
        options: ReaderOptions | None = None,
    ) -> None:
        self.info, self.split, self._decode = info, split, decode
        self._num_threads = check_int("num_threads", num_threads, minimum=1)
        self._shuffle_files = shuffle_files
        self._seed = seed if seed is not None else random.getrandbits(63)
        self._options = options or ReaderOptions()
        self._file_runs = file_runs(resolve(split, info.splits), info.splits)
        self.runs: list[FileRun] = self.epoch_runs(0)
        self._len = sum(run.take for run in self.runs)
        self._order: ReadOrder | None = None
        self._shards: dict[str, Any] = {}

    def epoch_runs(self, epoch: int) -> list[FileRun]:
        """The runs in the order epoch `epoch` reads them: file order, or with shuffle_files an order
        drawn from seed + epoch (epoch 0: `runs`), the same wherever it is drawn."""
        if not self._shuffle_files:
            return self._file_runs
        order = np.random.default_rng(self._seed + epoch).permutation(len(self._file_runs))
        return [self._file_runs[k] for k in order.tolist()]

    @property
    def interleaved(self) -> bool:
        """Whether TFDS interleaves the shards: not with disable_shuffling, nor for ArrayRecord,
        which TFDS reads as a data source, in file order."""
        return not self.info.disable_shuffling and self.info.file_format != "array_record"

    def order(self) -> ReadOrder:
        """Where each example lies (its run, its record within the run), in reading order."""
        if self._order is None:
            self._order = ReadOrder([r.take for r in self.runs], interleave=self.interleaved)
        return self._order

    def __len__(self) -> int:
        return self._len

    def decode(self, source: bytes) -> Any:
        """One example decoded from the raw bytes of its record."""
        return decode_record(self.info.features, source, decode=self._decode)

    def record(self, i: int) -> bytes:
        """The raw bytes of example `i`."""
        i = checked_position(i, self._len)
        k, local = self.order().locate(i)
        run = self.runs[k]
        record: bytes = self._shard(run.file)[run.skip + local]
        return record

    def __getitem__(self, i: int) -> Any:
        return self.decode(self.record(i))

    def __iter__(self) -> Iterator[Any]:
        return ordered_map(self.decode, self.iter_records(), self._num_threads)

    def iter_records(self, runs: list[FileRun] | None = None, *, interleave: bool | None = None) -> Iterator[bytes]:
        """The raw records of `runs` (default: the whole split) streamed in reading order."""
        runs = self.runs if runs is None else runs
        interleave = self.interleaved if interleave is None else interleave
        if not interleave:
            for run in runs:
                yield from self._run_records(run)
            return
        open_runs: dict[int, Iterator[bytes]] = {}
        for k, first, count in read_blocks([r.take for r in runs], interleave=True):
            it = open_runs.get(k)
            if it is None:
                it = open_runs[k] = self._run_records(runs[k])
            yield from itertools.islice(it, count)
            if first + count == runs[k].take:
                del open_runs[k]

    def _run_records(self, run: FileRun) -> Iterator[bytes]:
        if self.info.file_format == "array_record":
            reader = self._shard(run.file)
            for start in range(run.skip, run.skip + run.take, 256):
                yield from reader.read_range(start, min(start + 256, run.skip + run.take))
            return
        stream = iter_records(run.file, **self._options.as_kwargs())
        got = 0
        for record in itertools.islice(stream, run.skip, run.skip + run.take):
            got += 1
            yield record
        if got < run.take and self._options.on_error == "raise":  # skipping damage makes shards shorter
            raise _short(run, run.skip + got)

    def _shard(self, file: str) -> Any:
        shard = self._shards.get(file)
        if shard is None:
            if self.info.file_format == "array_record":
                shard = ArrayRecordShard(file)
            else:
                options = self._options.as_kwargs()
                if not is_url(file):
                    options["storage_options"] = None
                shard = TFRecordFile(file, **options)
            self._shards[file] = shard
        return shard

    def close(self) -> None:
        """Close the shards opened for random access."""
        for shard in self._shards.values():
            shard.close()
        self._shards.clear()

    def __enter__(self) -> Split:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_shards"] = {}
        return state

    def __repr__(self) -> str:
        where = redact(self.info.source)
        return f"Split({self.info.name!r}, split={self.split!r}, {self._len} examples, source={where!r})"


def _short(run: FileRun, found: int) -> TFRecordError:
    return TFRecordError(
        f"shard {run.shard} of split {run.split!r} holds {found} records, "
        f"but dataset_info.json says at least {run.skip + run.take}",
        path=run.file,
    )


class ArrayRecordShard:
    """One ArrayRecord shard read by the `array-record` package: `[i]`, `read_range`, `len`."""

    def __init__(self, file: str) -> None:
        if is_url(file):
            raise ValueError(f"ArrayRecord shards are read from local folders only: {redact(file)}")
        try:
            from array_record.python.array_record_module import ArrayRecordReader
        except ImportError:
            raise ImportError(
                f"reading an ArrayRecord TFDS folder needs the array-record package: {ARRAY_RECORD_HINT}"
            ) from None
        self.file = file
        self._reader = ArrayRecordReader(local_path(file), "readahead_buffer_size:0")

    def __len__(self) -> int:
        return int(self._reader.num_records())

    def __getitem__(self, i: int) -> bytes:
        i = checked_position(i, len(self))
        return bytes(self._reader.read([i])[0])

    def read_range(self, start: int, stop: int) -> list[bytes]:
        if stop > len(self):
            raise TFRecordError(f"ArrayRecord shard holds {len(self)} records, not {stop}", path=self.file)
        return [bytes(r) for r in self._reader.read(start, stop)]

    def close(self) -> None:
        self._reader.close()
