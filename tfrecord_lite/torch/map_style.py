"""`TFRecordDataset`: the map-style dataset. Its shards are indexed once (ShardedRecords, memory-mapped,
reopened in each process after pickling), so len / [i] / DataLoader(shuffle=True) /
DistributedSampler just work; a batch of indices is read in one call (`__getitems__`), decoded by
columns when the spec allows, on threads with num_threads > 1; an error about one record is placed
at its file, number and byte offset."""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from tfrecord_lite._batches.columnar import placing
from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._datasets.sharded import ShardedRecords
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._example.validate import check_int
from tfrecord_lite._loader.collate import decode_batch
from tfrecord_lite._loader.items import CollateFn, ItemDecoder, Output, RecordType, Spec, Transform, collate_for
from tfrecord_lite._loader.transport import pack
from tfrecord_lite._records.threads import ThreadMap
from tfrecord_lite._repr import count, describe, shown_paths
from tfrecord_lite._storage.sources import Sources, resolve_inputs
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions
from tfrecord_lite.torch.consumers import fetched_by


def _place(records: ShardedRecords, indices: list[int], k: int) -> tuple[str | None, int, int | None]:
    """The file, number in it and byte offset of record `indices[k]` of `records` (errors name them)."""
    shard, local = records.locate(indices[k])
    return records.shards[shard].path, local, records.shards[shard].offset(local)


def _decoded(decode: ItemDecoder, record: bytes, k: int, copy: bool = True) -> Any:
    """decode(record, copy), an error marked as about record `k` of the batch (placing places it)."""
    try:
        return decode(record, copy)
    except TFRecordError as err:
        err.batch_record = k  # type: ignore[attr-defined]  # what the decoder said is of its one record
        raise


def _decoded_at(decode: ItemDecoder, records: list[bytes], k: int, copy: bool = True) -> Any:
    """_decoded of records[k] (for a ThreadMap, which maps over the numbers of the records)."""
    return _decoded(decode, records[k], k, copy)


class TFRecordDataset(Dataset[Any]):
    """Map-style dataset over TFRecord shards (GZIP / ZLIB ones through their index): len(), [i] -> decoded
    item, picklable (each process reopens the files), for DataLoader(shuffle=True) and DistributedSampler.
    Batch its items with `collate_fn=ds.collate_fn` (a Collate that knows the spec's ragged keys).

    `source`: a file, a list of files, a folder, a glob, a ShardedWriter prefix or URLs (docs/inputs.md).
    The decoding (`features`, `transform`, `context_features`, `sequence_features`, `record_type`,
    `output`, `collate_fn`) is IterableTFRecordDataset's. The reader options are every reader's
    (docs/conventions.md): each shard's compression is recognised from its content, and a
    `compression` given must be each shard's (ValueError naming both); `max_record_bytes` bounds
    every shard's records (RecordTooLargeError when it is opened); `on_error` /
    `max_skipped` are ShardedRecords': a damaged shard is indexed over its good records (in each
    process that opens it), so `len` counts them; damage found later by `[i]` raises. `num_threads`
    > 1 decodes (and transforms) a batch's items on that many threads of the process that fetches
    them (docs/torch.md, "Threads: num_threads")."""

    def __init__(
        self,
        source: Sources,
        *,
        features: Spec = None,
        transform: Transform = None,
        context_features: Spec = None,
        sequence_features: Spec = None,
        record_type: RecordType = None,
        output: Output = "numpy",
        collate_fn: CollateFn = None,
        num_threads: int = 1,
        compression: Compression = "auto",
        verify: bool = True,
        on_error: OnError = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        self._decode = ItemDecoder(record_type, features, context_features, sequence_features, output, transform)
        self.collate_fn = collate_for(collate_fn, self._decode)
        self._threads = ThreadMap(num_threads)  # its pool is made in the process that decodes
        self.num_threads = self._threads.num_threads
        self.compression = normalize_compression(compression, allow_auto=True)
        self.paths = resolve_inputs(source, storage_options=storage_options)
        self.verify = verify
        self.on_error, self.max_skipped = on_error, max_skipped
        self.storage_options = storage_options
        self.max_record_bytes = check_int("max_record_bytes", max_record_bytes, 1)
        self._records: ShardedRecords | None = None
        self._pid = -1
        self._len = len(self._open())

    def _open(self) -> ShardedRecords:
        if self._records is None or self._pid != os.getpid():
            records = ShardedRecords(
                self.paths,
                compression=self.compression,
                verify=self.verify,
                on_error=self.on_error,
                max_skipped=self.max_skipped,
                storage_options=self.storage_options,
                max_record_bytes=self.max_record_bytes,
            )
            self._records, self._pid = records, os.getpid()
        return self._records

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: Any) -> Any:
        """ds[i] -> one item; ds[[i, j, ...]] (a list, array or tensor of indices) -> one collated batch,
        decoded by columns when there is an Example spec and no transform (for a BatchSampler)."""
        if isinstance(index, (int, np.integer)) or (isinstance(index, torch.Tensor) and index.dim() == 0):
            with placing(functools.partial(_place, self._open(), [int(index)]), 0):
                return self._decode(self._open()[int(index)])
        packs, _ = fetched_by(self)
        indices = index.tolist() if isinstance(index, (np.ndarray, torch.Tensor)) else list(index)
        records = self._open()[indices]
        decode = self._decode
        with placing(functools.partial(_place, self._open(), indices)):
            if decode.record_type == "example" and decode.features is not None and decode.transform is None:
                if packs:
                    return pack(decode_batch(records, decode.features, self.collate_fn, copy=not decode.can_view))
                return decode_batch(records, decode.features, self.collate_fn)
            if self.num_threads > 1:
                decoded = functools.partial(_decoded_at, decode, records)
                return self.collate_fn(self._threads.map(decoded, range(len(records))))
            return self.collate_fn([_decoded(decode, r, k) for k, r in enumerate(records)])

    def __getitems__(self, indices: list[int]) -> list[Any]:
        """The items at `indices` (DataLoader's batched fetch with automatic batching)."""
        _, views = fetched_by(self)
        decode, copy = self._decode, not (views and self._decode.can_view)
        with placing(functools.partial(_place, self._open(), list(indices))):
            if self.num_threads > 1:
                records = self._open()[list(indices)]
                return self._threads.map(functools.partial(_decoded_at, decode, records), range(len(records)), copy)
            return [_decoded(decode, r, k, copy) for k, r in enumerate(self._open()[list(indices)])]

    def raw(self, index: int) -> bytes:
        """The serialized record at `index`, undecoded."""
        return self._open()[index]

    def __repr__(self) -> str:
        return describe("TFRecordDataset", shown_paths(self.paths), count(self._len), *self._decode.spec_parts())

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_records"] = None
        return state
