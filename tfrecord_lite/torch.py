"""PyTorch adapters (imports torch; `import tfrecord_lite` never imports this module).

Map-style: TFRecordDataset indexes its shards (ShardedRecords, memory-mapped, reopened
in each process) so len / [i] / DataLoader(shuffle=True) / DistributedSampler just work.

Streaming: IterableTFRecordDataset gives every *consumer* (one DataLoader worker of one
torch.distributed rank; consumer = rank * num_workers + worker_id) a disjoint Share of the
records. The plan (_datasets/plan.py, torch-free) is a pure function of (record counts, shard order, consumers): every
consumer computes the same plan from the same seed and epoch, so no communication is
needed and the union is every record exactly once. Splits: whole shards ("shard"),
contiguous record ranges of the concatenated shards ("range", needs counts, i.e. the
index of uncompressed files), or "stride" (consumers sharing one compressed shard each
read it whole and keep every k-th record). Shuffling = seeded shard order + a bounded
per-consumer buffer. A resumable position is just (epoch, items yielded): the pipeline
is deterministic, so resuming replays the raw record stream (no decoding) up to the
position; without a shuffle buffer, indexed files skip straight to it.

This module holds what is torch's only: the Dataset classes, who the calling consumer is
(DataLoader worker and rank), and the state_dict protocol. The rest is torch-free: in _datasets
the records a consumer streams (streaming.py, over plan.py and segments.py) and weighted mixing
(mixing.py); in _loader what an item is (items.py, which also types the decoding parameters both
datasets take, once), batching (collate.py, re-exported here) and the workers' transport
(transport.py). Both datasets take `source` and the reader options as every reader does (docs/conventions.md).
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

try:
    import torch
    import torch.distributed as dist
    from torch.utils.data import Dataset, IterableDataset, default_collate, default_convert, get_worker_info
except ModuleNotFoundError as exc:  # still a ModuleNotFoundError, which pytest.importorskip and others expect
    raise ModuleNotFoundError(
        f"tfrecord_lite.torch needs PyTorch ({exc}): pip install 'tfrlite[torch]'", name=exc.name
    ) from exc

from tfrecord_lite._batches.columnar import placing
from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._datasets.mixing import copy_state, mixed_items, start_state
from tfrecord_lite._datasets.plan import Segment, Share, plan_shares, shard_order
from tfrecord_lite._datasets.sharded import ShardedRecords
from tfrecord_lite._datasets.streaming import ShardStream
from tfrecord_lite._errors import DataLoaderWarning, TFRecordError
from tfrecord_lite._example.validate import check_choice, check_int
from tfrecord_lite._loader.collate import Collate, collate, decode_batch, to_torch, worker_collate
from tfrecord_lite._loader.items import CollateFn, ItemDecoder, Output, RecordType, Spec, Transform, collate_for
from tfrecord_lite._loader.transport import for_transport, pack
from tfrecord_lite._records.threads import ThreadMap, Tuning, check_num_threads, ordered_map
from tfrecord_lite._repr import compression, count, describe, shown_paths
from tfrecord_lite._storage.prefetch import PREFETCH
from tfrecord_lite._storage.sources import Sources, resolve_inputs
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions
from tfrecord_lite._tfds.torch_data import SplitRecords, SplitStream

__all__ = [
    "Collate",
    "DataLoaderWarning",
    "IterableTFDSDataset",
    "IterableTFRecordDataset",
    "MixedTFRecordDataset",
    "Segment",
    "Share",
    "TFDSDataset",
    "TFRecordDataset",
    "collate",
    "plan_shares",
    "shard_order",
    "to_torch",
]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


_SHOWN_DATASETS = 3  # datasets a MixedTFRecordDataset's repr shows


def _distributed() -> tuple[int, int] | None:
    """(rank, world_size) of the initialised default process group, else None."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return None


def _worker_pass(dataset: Any) -> int:
    """How many passes this copy of `dataset` began before, in a DataLoader worker (0 in the main
    process). A persistent worker never sees set_epoch() calls made after it started, so each pass
    it begins counts as the next epoch: what set_epoch(epoch) before each pass asks for."""
    if get_worker_info() is None:
        return 0
    dataset._passes += 1
    return int(dataset._passes - 1)


def _fetched_by(dataset: Any) -> tuple[bool, bool]:
    """(pack, view) for the dataset method that calls this, as DataLoader's worker fetcher calls it:
    pack when the fetcher hands what it returns to torch's default_convert and then to the queue
    (batch_size=None), where a transport.Packed passes untouched while a dict is walked value by
    value; view when the fetcher collates the items with the dataset's own collate_fn, which alone
    sees them, so that their bytes values may be memoryviews until transport.py copies them. Both
    False in the main process or when anything else calls (a wrapping dataset: as before). A fetcher
    that collates with torch's default_collate is given collate.worker_collate instead: the same
    values, without a shared-memory segment per tensor of every batch."""
    if get_worker_info() is None:
        return False, False
    fetcher = sys._getframe(2).f_locals.get("self")  # 0: here, 1: the dataset's method, 2: its caller
    if fetcher is None or getattr(fetcher, "dataset", None) is not dataset:
        return False, False
    collate_fn, batched = getattr(fetcher, "collate_fn", None), getattr(fetcher, "auto_collation", None)
    if batched is True and collate_fn is default_collate:  # the values of torch's, in reused shared memory
        fetcher.collate_fn = collate_fn = worker_collate
    own = collate_fn is not None and collate_fn in (getattr(dataset, "collate_fn", None), worker_collate)
    return collate_fn is default_convert and batched is False, batched is True and own


# --------------------------------------------------------------------------- map-style


def _place(records: ShardedRecords, indices: list[int], k: int) -> tuple[str | None, int, int | None]:
    """The file, number in it and byte offset of record `indices[k]` of `records` (errors name them)."""
    shard, local = records.locate(indices[k])
    return records.shards[shard].path, local, records.shards[shard].offset(local)


def _decoded(decode: ItemDecoder, record: bytes, k: int, copy: bool = True) -> Any:
    """decode(record, copy), an error marked as about record `k` of the batch (placing places it)."""
    try:
        return decode(record, copy)
    except TFRecordError as err:
        if getattr(err, "batch_record", None) is None:
            err.batch_record = k  # type: ignore[attr-defined]
        raise


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
        packs, _ = _fetched_by(self)
        indices = index.tolist() if isinstance(index, (np.ndarray, torch.Tensor)) else list(index)
        records = self._open()[indices]
        decode = self._decode
        with placing(functools.partial(_place, self._open(), indices)):
            if decode.record_type == "example" and decode.features is not None and decode.transform is None:
                if packs:
                    return pack(decode_batch(records, decode.features, self.collate_fn, copy=not decode.can_view))
                return decode_batch(records, decode.features, self.collate_fn)
            if self.num_threads > 1:
                return self.collate_fn(self._threads.map(decode, records))
            return self.collate_fn([_decoded(decode, r, k) for k, r in enumerate(records)])

    def __getitems__(self, indices: list[int]) -> list[Any]:
        """The items at `indices` (DataLoader's batched fetch with automatic batching)."""
        _, views = _fetched_by(self)
        decode, copy = self._decode, not (views and self._decode.can_view)
        with placing(functools.partial(_place, self._open(), list(indices))):
            if self.num_threads > 1:
                return self._threads.map(decode, self._open()[list(indices)], copy)
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


# --------------------------------------------------------------------------- streaming


def _of_stream(name: str, doc: str) -> Any:
    """A read-only attribute of the dataset that its ShardStream holds."""
    return property(lambda self: getattr(self._stream, name), doc=doc)


class IterableTFRecordDataset(IterableDataset[Any]):
    """Streaming dataset over TFRecord shards (compressed or not). Across DataLoader workers and
    torch.distributed ranks every record is yielded exactly once per epoch; seeded shuffling (shard
    order + a bounded buffer) that set_epoch() changes; optional equal counts per consumer (even=
    "drop" / "pad"); state_dict() / load_state_dict() to resume mid-epoch. With batch_size it yields
    whole batches decoded by columns (fastest; use DataLoader(batch_size=None)); otherwise batch its
    items with `collate_fn=ds.collate_fn`.

    `source`: a file, a list of files, a folder, a glob, a ShardedWriter prefix or URLs (docs/inputs.md).
    Decoding: an Example by `features` (a spec; None: every feature as stored), a SequenceExample by
    `context_features` / `sequence_features`, or the bytes as they are (`record_type="raw"`); `output=
    "torch"` makes tensors of the values, then `transform` is applied to each item (with batch_size,
    to each batch); `collate_fn` is the Collate that `ds.collate_fn` holds. The reader options are
    iter_records' (docs/conventions.md): skipped damage is counted per pass of each DataLoader worker,
    and a callable `on_error` must be picklable for spawned workers. `num_threads` > 1 reads, decodes
    and transforms records (or batches) on that many threads of the process that iterates, in the
    order of num_threads=1 (docs/torch.md, "Threads: num_threads")."""

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
        batch_size: int | None = None,
        drop_last: bool = False,
        shuffle: bool = False,
        shuffle_buffer: int = 1024,
        seed: int = 0,
        split: str = "auto",
        even: str | None = None,
        rank: int | None = None,
        world_size: int | None = None,
        prefetch: int = PREFETCH,
        num_threads: int = 1,
        compression: Compression = "auto",
        verify: bool = True,
        on_error: OnError = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        self._decode = ItemDecoder(record_type, features, context_features, sequence_features, output, transform)
        if batch_size is not None:
            check_int("batch_size", batch_size, 1)
            if features is None or self._decode.record_type != "example":
                raise ValueError("batch_size= decodes Examples by columns: it needs features= (a spec)")
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.num_threads = check_num_threads(num_threads)
        self._tuning = Tuning()  # whether threads paid in the last pass of this process
        self.collate_fn = collate_for(collate_fn, self._decode)
        if (rank is None) != (world_size is None):
            raise ValueError("give both rank and world_size, or neither (then torch.distributed decides)")
        if world_size is not None and not 0 <= rank < world_size:  # type: ignore[operator]
            raise ValueError(f"rank {rank} is not in range(world_size={world_size})")
        self._dist = (rank, world_size) if world_size is not None else _distributed()
        self._stream = ShardStream(  # made here, in the main process: workers get the record counts with it
            source,
            shuffle=shuffle,
            shuffle_buffer=shuffle_buffer,
            seed=seed,
            split=split,
            even=even,
            compression=compression,
            verify=verify,
            storage_options=storage_options,
            prefetch=prefetch,
            on_error=on_error,
            max_skipped=max_skipped,
            max_record_bytes=max_record_bytes,
        )
        self._epoch = 0
        self._passes = 0  # passes begun by this copy in a DataLoader worker
        self._resume: dict[str, int] | None = None
        self._position: dict[str, int] = {"epoch": 0, "yielded": 0}

    paths = _of_stream("paths", "The input files, as resolve_inputs gave them.")
    shuffle = _of_stream("shuffle", "Whether shard order and records are shuffled.")
    shuffle_buffer = _of_stream("shuffle_buffer", "Records in the shuffle buffer (0 without shuffle).")
    seed = _of_stream("seed", "The seed of every epoch's shuffle (with the epoch).")
    split = _of_stream("split", "How records are split among consumers.")
    even = _of_stream("even", "How consumers get equal counts (None: as they come).")
    verify = _of_stream("verify", "Whether payload CRCs are checked.")
    storage_options = _of_stream("storage_options", "fsspec options, or a filesystem, for URLs.")
    prefetch = _of_stream("prefetch", "Shards fetched ahead from a store.")
    on_error = _of_stream("on_error", "What a damaged record does: iter_records' on_error.")
    max_skipped = _of_stream("max_skipped", "How many damaged spans a pass may skip.")
    max_record_bytes = _of_stream("max_record_bytes", "The longest record read; a longer one is damage.")

    def __repr__(self) -> str:
        stream = self._stream
        kinds = sorted(set(stream.kinds))
        return describe(
            "IterableTFDSDataset",
            "IterableTFRecordDataset",
            shown_paths(stream.paths),
            compression("/".join(k or "none" for k in kinds) if kinds != [""] else None),
            count(stream.known_count()),
            *self._decode.spec_parts(),
            f"batch_size={self.batch_size}" if self.batch_size is not None else None,
            f"shuffle_buffer={stream.shuffle_buffer}, seed={stream.seed}" if stream.shuffle else None,
            f"split={stream.split!r}" if stream.split != "auto" else None,
            f"even={stream.even!r}" if stream.even else None,
        )

    def num_records(self) -> int:
        """Records in all shards (indexes uncompressed files; one pass over each compressed one)."""
        return sum(self._stream.count_all())

    def _consumer(self) -> tuple[int, int]:
        """(consumer index, number of consumers) of the calling process: rank x DataLoader worker."""
        rank, world = self._dist if self._dist is not None else (_distributed() or (0, 1))
        assert rank is not None and world is not None
        info = get_worker_info()
        wid, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        return rank * workers + wid, world * workers

    def plan(self, epoch: int, consumers: int) -> list[Share]:
        """Every consumer's Share of the records for `epoch` (the same on every rank and worker)."""
        return self._stream.plan(epoch, consumers)

    def _items(
        self, epoch: int, consumer: int, consumers: int, skip: int, packs: bool = False, views: bool = False
    ) -> Iterator[tuple[int, Any]]:
        """(records, item) pairs of this consumer for `epoch` from record position `skip` on: one decoded
        record each, or with batch_size a collated batch (decoded by columns unless its records are large).
        `packs` / `views`: as _fetched_by says for the DataLoader worker that iterates."""
        raw = self._stream.records(epoch, consumer, consumers, skip)
        if self.num_threads > 1:
            yield from self._threaded(raw, packs, views)
            return
        decode = self._decode
        if self.batch_size is None:
            copy = not (views and decode.can_view)
            for data in raw:
                yield 1, decode(data, copy)
            return
        spec, size, transform = decode.features, self.batch_size, decode.transform
        packs = packs and transform is None
        copy = not (packs and decode.can_view)
        while True:
            records = list(itertools.islice(raw, size))
            if not records or (self.drop_last and len(records) < size):
                return
            batch = decode_batch(records, spec, self.collate_fn, copy=copy)  # type: ignore[arg-type]
            if transform is not None:
                yield len(records), for_transport(transform(batch))
            else:
                yield len(records), pack(batch) if packs else batch

    def _threaded(self, raw: Iterator[bytes], packs: bool, views: bool) -> Iterator[tuple[int, Any]]:
        """_items on num_threads threads: reading, decoding and the transform of each record (or batch)
        run on them in order; a batch is packed for transport here, in the thread that yields it."""
        decode, size = self._decode, self.batch_size
        if size is None:
            copy = not (views and decode.can_view)
            yield from ordered_map(lambda data: (1, decode(data, copy)), raw, self.num_threads, memory=self._tuning)
            return
        spec, transform, drop_last = decode.features, decode.transform, self.drop_last
        packs = packs and transform is None
        copy = not (packs and decode.can_view)

        def batches() -> Iterator[list[bytes]]:
            while True:
                records = list(itertools.islice(raw, size))
                if not records or (drop_last and len(records) < size):
                    return
                yield records

        def decoded(records: list[bytes]) -> tuple[int, Any]:
            batch = decode_batch(records, spec, self.collate_fn, copy=copy)  # type: ignore[arg-type]
            return len(records), (transform(batch) if transform is not None else batch)

        for n, batch in ordered_map(decoded, batches(), self.num_threads, memory=self._tuning):
            yield n, for_transport(batch) if transform is not None else pack(batch) if packs else batch

    def __iter__(self) -> Iterator[Any]:
        packs, views = _fetched_by(self)
        consumer, consumers = self._consumer()
        epoch, skip = self._epoch + _worker_pass(self), 0
        if self._resume is not None:
            resume, self._resume = self._resume, None
            if (resume["consumer"], resume["consumers"]) != (consumer, consumers):
                raise ValueError(
                    f"this state was saved by consumer {resume['consumer']} of {resume['consumers']} "
                    f"(rank x DataLoader worker), but it is being loaded by consumer {consumer} of {consumers}: "
                    "resume with the same world size and num_workers"
                )
            epoch, skip = resume["epoch"], resume["yielded"]
        self._position = {"epoch": epoch, "yielded": skip, "consumer": consumer, "consumers": consumers}
        return self._generate(self._items(epoch, consumer, consumers, skip, packs, views))

    def _generate(self, items: Iterator[tuple[int, Any]]) -> Iterator[Any]:
        position = self._position
        for n, item in items:
            position["yielded"] += n
            yield item

    # -- epochs and state

    def set_epoch(self, epoch: int) -> None:
        """Use `epoch` for the next iteration: a new, reproducible shard order and shuffle."""
        self._epoch = int(epoch)
        if self._resume is not None and self._resume["epoch"] != self._epoch:
            self._resume = None

    def state_dict(self) -> dict[str, Any]:
        """Where this consumer is: epoch and items yielded (with who it is, to check a resume)."""
        if self._resume is not None:
            return dict(self._resume)
        state = dict(self._position)
        if "consumer" not in state:
            state["consumer"], state["consumers"] = self._consumer()
        state["seed"] = self._stream.seed
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Make the next iteration continue right after the position that `state` records."""
        seed = self._stream.seed
        if state.get("seed", seed) != seed:
            raise ValueError(f"this state was saved with seed {state['seed']}, the dataset has seed {seed}")
        self._epoch = int(state["epoch"])
        self._resume = {k: int(state[k]) for k in ("epoch", "yielded", "consumer", "consumers")}
        self._resume["seed"] = seed

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if state["_dist"] is None:  # pickled for a spawned worker: it will not see the process group
            state["_dist"] = _distributed()
        return state


# --------------------------------------------------------------------------- mixing


class MixedTFRecordDataset(IterableDataset[Any]):
    """Draws items from several IterableTFRecordDatasets at random with the given weights (each dataset
    split across workers and ranks on its own). Finite: stop="all" goes on with the remaining datasets
    when one ends, stop="first" ends with the first exhausted dataset; infinite=True restarts an exhausted
    dataset with its next epoch and never ends (unless every dataset is empty)."""

    def __init__(
        self,
        datasets: Sequence[IterableTFRecordDataset],
        *,
        weights: Sequence[float] | None = None,
        seed: int = 0,
        stop: str = "all",
        infinite: bool = False,
    ) -> None:
        if isinstance(datasets, IterableDataset):
            raise TypeError("datasets must be a list of IterableTFRecordDatasets ([ds1, ds2]), found one dataset")
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("no datasets to mix")
        for i, dataset in enumerate(self.datasets):
            if not isinstance(dataset, IterableTFRecordDataset):
                raise TypeError(f"datasets[{i}] must be an IterableTFRecordDataset, found {type(dataset).__name__}")
        if any(dataset.batch_size is not None for dataset in self.datasets):
            raise ValueError("mix datasets of single records (no batch_size): batch the mixture in the DataLoader")
        w = [1.0] * len(self.datasets) if weights is None else [float(x) for x in weights]
        if len(w) != len(self.datasets) or any(not x >= 0 for x in w) or sum(w) <= 0:
            raise ValueError(f"weights must be {len(self.datasets)} non-negative numbers, not all zero: {weights!r}")
        self.weights = w
        self.seed = check_int("seed", seed)
        self.stop = check_choice("stop", stop, ("all", "first"))
        self.infinite = bool(infinite)
        self._epoch = 0
        self._passes = 0  # passes begun by this copy in a DataLoader worker
        self._resume: dict[str, Any] | None = None
        self._state: dict[str, Any] = {}

    def __repr__(self) -> str:
        shown = ", ".join(repr(dataset) for dataset in self.datasets[:_SHOWN_DATASETS])
        more = f", ... ({len(self.datasets)} datasets)" if len(self.datasets) > _SHOWN_DATASETS else ""
        mode = "infinite" if self.infinite else f"stop={self.stop!r}"
        return describe("MixedTFRecordDataset", f"[{shown}{more}]", f"weights={self.weights}", mode)

    def set_epoch(self, epoch: int) -> None:
        """Use `epoch` for the next iteration (the datasets start at it too)."""
        self._epoch = int(epoch)
        if self._resume is not None and self._resume["epoch"] != self._epoch:
            self._resume = None

    def __iter__(self) -> Iterator[Any]:
        consumer, consumers = self.datasets[0]._consumer()
        state = self._resume
        self._resume = None
        if state is None:
            state = start_state(self.seed, self._epoch + _worker_pass(self), self.weights, consumer, consumers)
        elif (state["consumer"], state["consumers"]) != (consumer, consumers):
            raise ValueError(
                "this state was saved by another consumer (rank x DataLoader worker): resume with "
                "the same world size and num_workers"
            )
        self._state = state = {**state, "consumer": consumer, "consumers": consumers}
        state["sources"] = [dict(s) for s in state["sources"]]
        return self._generate(state)

    def _start(self, consumer: int, consumers: int) -> dict[str, Any]:
        """The state at the start of the current epoch."""
        return start_state(self.seed, self._epoch, self.weights, consumer, consumers)

    def _generate(self, state: dict[str, Any]) -> Iterator[Any]:
        consumer, consumers = state["consumer"], state["consumers"]

        def open_source(i: int, epoch: int, skip: int) -> Iterator[tuple[int, Any]]:
            return self.datasets[i]._items(epoch, consumer, consumers, skip)

        return mixed_items(state, self.weights, open_source, stop=self.stop, infinite=self.infinite)

    def state_dict(self) -> dict[str, Any]:
        """The mixing position: RNG state and each dataset's epoch and items yielded (under "sources")."""
        if self._resume is not None:
            return copy_state(self._resume)
        return copy_state(self._state or self._start(*self.datasets[0]._consumer()))

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Make the next iteration continue right after the position that `state` records."""
        if len(state["sources"]) != len(self.datasets):
            raise ValueError(f"this state mixes {len(state['sources'])} datasets, this mixture {len(self.datasets)}")
        self._epoch = int(state["epoch"])
        self._resume = copy_state(state)


class TFDSDataset(SplitRecords, Dataset):  # type: ignore[type-arg]
    """A TFDS split (tfrecord_lite.tfds.load) map-style: `[i]` as tfds.as_numpy hands it, then `transform`."""


class IterableTFDSDataset(SplitStream, IterableDataset):  # type: ignore[type-arg]
    """A TFDS split streamed: each record once over DataLoader workers and ranks, then `transform`."""

    _world, _worker_info = staticmethod(_distributed), staticmethod(get_worker_info)
