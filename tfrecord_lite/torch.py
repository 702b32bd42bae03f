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

This module holds the datasets only: batching is _datasets/collate.py's (re-exported here), reading a
plan's segments _datasets/segments.py's, the plan itself _datasets/plan.py's.
"""

from __future__ import annotations

import bisect
import itertools
import os
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

try:
    import torch
    import torch.distributed as dist
    from torch.utils.data import Dataset, IterableDataset, get_worker_info
except ModuleNotFoundError as exc:  # still a ModuleNotFoundError, which pytest.importorskip and others expect
    raise ModuleNotFoundError(
        f"tfrecord_lite.torch needs PyTorch ({exc}): pip install 'tfrlite[torch]'", name=exc.name
    ) from exc

from tfrecord_lite._datasets.collate import Collate, collate, decode_batch, to_torch
from tfrecord_lite._datasets.plan import (
    EVEN,
    MIXING_SALT,
    SPLITS,
    Segment,
    Share,
    choose_split,
    even_target,
    mix_seed,
    padded_positions,
    plan_shares,
    shard_order,
    shuffle_buffer,
)
from tfrecord_lite._datasets.segments import count_shard, file_kinds, read_segments, skip_segments
from tfrecord_lite._datasets.sharded import ShardedRecords
from tfrecord_lite._example.codec import decode_example, decode_sequence_example
from tfrecord_lite._example.validate import check_callable, check_choice, check_int, feature_specs
from tfrecord_lite._repr import compression, count, describe, shown_keys, shown_paths
from tfrecord_lite._storage.files import StorageOptions, normalize_compression
from tfrecord_lite._storage.prefetch import PREFETCH
from tfrecord_lite._storage.sources import Sources, resolve_inputs
from tfrecord_lite._stream.damage import DamagePolicy, OnError

__all__ = [
    "Collate",
    "IterableTFRecordDataset",
    "MixedTFRecordDataset",
    "Segment",
    "Share",
    "TFRecordDataset",
    "collate",
    "plan_shares",
    "shard_order",
    "to_torch",
]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


Paths = Sources  # a file, a list of files, a folder, a glob, a ShardedWriter prefix (docs/inputs.md)
RECORD_TYPES = ("example", "sequence_example", "raw")
_SHOWN_SOURCES = 3  # sources a MixedTFRecordDataset's repr shows


# --------------------------------------------------------------------------- small helpers


def _distributed() -> tuple[int, int] | None:
    """(rank, world_size) of the initialised default process group, else None."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return None


# --------------------------------------------------------------------------- items and collation


def _steps_array(steps: Any) -> Any:
    """A feature list decoded without a spec ([1-D array per step]) as one [steps, n] array when every
    step has the same number of numeric values; otherwise unchanged."""
    regular = isinstance(steps, list) and steps and all(isinstance(s, np.ndarray) for s in steps)
    if regular and len({s.shape for s in steps}) == 1 and steps[0].dtype.kind in "iuf":
        return np.stack(steps)
    return steps


class _Decoder:
    """Turns one serialized record into a dataset item: decode, optional tensors, then the user transform."""

    def __init__(
        self,
        record_type: str | None,
        features: Mapping[str, Any] | None,
        context_features: Mapping[str, Any] | None,
        sequence_features: Mapping[str, Any] | None,
        output: str,
        transform: Callable[[Any], Any] | None,
    ) -> None:
        if record_type is None:
            record_type = "sequence_example" if (context_features or sequence_features) else "example"
        self.record_type = check_choice("record_type", record_type, RECORD_TYPES)
        if features is not None and record_type != "example":
            raise ValueError("features= is the spec of an Example; for SequenceExamples use context_features=")
        self.features = feature_specs(features)
        self.context_features = feature_specs(context_features, "context_features")
        self.sequence_features = feature_specs(sequence_features, "sequence_features")
        self.output = check_choice("output", output, ("numpy", "torch"))
        check_callable("transform", transform, "applied to each decoded item")
        self.transform = transform

    def spec_parts(self) -> list[str | None]:
        """The repr parts of a dataset's decoding: record type, spec keys, output, transform."""
        specs = {"features": self.features, "context_features": self.context_features}
        specs["sequence_features"] = self.sequence_features
        parts: list[str | None] = [f"record_type={self.record_type!r}"]
        parts += [f"{name}={shown_keys(spec)}" for name, spec in specs.items() if spec is not None]
        parts.append(f"output={self.output!r}" if self.output != "numpy" else None)
        parts.append(f"transform={getattr(self.transform, '__name__', self.transform)!r}" if self.transform else None)
        return parts

    def __call__(self, data: bytes) -> Any:
        item: Any
        if self.record_type == "example":
            item = decode_example(data, self.features)
        elif self.record_type == "sequence_example":
            context, lists = decode_sequence_example(data, self.context_features, self.sequence_features)
            clash = context.keys() & lists.keys()
            if clash:
                raise ValueError(f"keys {sorted(clash)} are both context features and feature lists")
            item = dict(context)
            if self.sequence_features is None:  # with a spec the layout is the spec's
                lists = {k: _steps_array(v) for k, v in lists.items()}
            item.update(lists)
        else:
            item = data
        if self.output == "torch":
            item = to_torch(item)
        return self.transform(item) if self.transform is not None else item


def _collate_for(collate_fn: Any, decode: _Decoder) -> Collate:
    """A dataset's collate_fn: the given Collate (or the default) with the spec's ragged keys."""
    if collate_fn is not None and not isinstance(collate_fn, Collate):
        raise TypeError(
            f"collate_fn must be a tfrecord_lite.torch.Collate, found {type(collate_fn).__name__}: "
            "pass your own function to DataLoader(collate_fn=...) instead"
        )
    return (collate_fn or collate).for_spec(decode.features, decode.sequence_features)


# --------------------------------------------------------------------------- map-style


class TFRecordDataset(Dataset[Any]):
    """Map-style dataset over TFRecord shards (GZIP / ZLIB ones through their index): len(), [i] -> decoded
    item, picklable (each process reopens the files), for DataLoader(shuffle=True) and DistributedSampler.
    Batch its items with `collate_fn=ds.collate_fn` (a Collate that knows the spec's ragged keys).
    `on_error` / `max_skipped` are ShardedRecords': a damaged shard is indexed over its good records
    (in each process that opens it), so `len` counts them; damage found later by `[i]` raises."""

    def __init__(
        self,
        paths: Paths,
        features: Mapping[str, Any] | None = None,
        transform: Callable[[Any], Any] | None = None,
        *,
        context_features: Mapping[str, Any] | None = None,
        sequence_features: Mapping[str, Any] | None = None,
        record_type: str | None = None,
        output: str = "numpy",
        verify: bool = True,
        collate_fn: Collate | None = None,
        on_error: OnError = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
    ) -> None:
        self._decode = _Decoder(record_type, features, context_features, sequence_features, output, transform)
        self.collate_fn = _collate_for(collate_fn, self._decode)
        self.paths = resolve_inputs(paths, storage_options=storage_options)
        self.verify = verify
        self.on_error, self.max_skipped = on_error, max_skipped
        self.storage_options = storage_options
        self._records: ShardedRecords | None = None
        self._pid = -1
        self._len = len(self._open())

    def _open(self) -> ShardedRecords:
        if self._records is None or self._pid != os.getpid():
            self._records = ShardedRecords(
                self.paths,
                verify=self.verify,
                on_error=self.on_error,
                max_skipped=self.max_skipped,
                storage_options=self.storage_options,
            )
            self._pid = os.getpid()
        return self._records

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: Any) -> Any:
        """ds[i] -> one item; ds[[i, j, ...]] (a list, array or tensor of indices) -> one collated batch,
        decoded by columns when there is an Example spec and no transform (for a BatchSampler)."""
        if isinstance(index, (int, np.integer)) or (isinstance(index, torch.Tensor) and index.dim() == 0):
            return self._decode(self._open()[int(index)])
        indices = index.tolist() if isinstance(index, (np.ndarray, torch.Tensor)) else list(index)
        records = self._open()[indices]
        decode = self._decode
        if decode.record_type == "example" and decode.features is not None and decode.transform is None:
            return decode_batch(records, decode.features, self.collate_fn)
        return self.collate_fn([decode(r) for r in records])

    def __getitems__(self, indices: list[int]) -> list[Any]:
        """The items at `indices` (DataLoader's batched fetch with automatic batching)."""
        return [self._decode(r) for r in self._open()[list(indices)]]

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


class IterableTFRecordDataset(IterableDataset[Any]):
    """Streaming dataset over TFRecord shards (compressed or not). Across DataLoader workers and
    torch.distributed ranks every record is yielded exactly once per epoch; seeded shuffling (shard
    order + a bounded buffer) that set_epoch() changes; optional equal counts per consumer (even=
    "drop" / "pad"); state_dict() / load_state_dict() to resume mid-epoch. With batch_size it yields
    whole batches decoded by columns (fastest; use DataLoader(batch_size=None)); otherwise batch its
    items with `collate_fn=ds.collate_fn`. `on_error` / `max_skipped` are iter_records' (skipped damage
    is counted per pass of each DataLoader worker; a callable must be picklable for spawned workers)."""

    def __init__(
        self,
        paths: Paths,
        features: Mapping[str, Any] | None = None,
        transform: Callable[[Any], Any] | None = None,
        *,
        context_features: Mapping[str, Any] | None = None,
        sequence_features: Mapping[str, Any] | None = None,
        record_type: str | None = None,
        output: str = "numpy",
        shuffle: bool = False,
        shuffle_buffer: int = 1024,
        seed: int = 0,
        split: str = "auto",
        even: str | None = None,
        rank: int | None = None,
        world_size: int | None = None,
        compression: str | None = "auto",
        verify: bool = True,
        batch_size: int | None = None,
        drop_last: bool = False,
        collate_fn: Collate | None = None,
        storage_options: StorageOptions = None,
        prefetch: int = PREFETCH,
        on_error: OnError = "raise",
        max_skipped: int | None = None,
    ) -> None:
        self._decode = _Decoder(record_type, features, context_features, sequence_features, output, transform)
        self._skipping = not DamagePolicy(on_error, max_skipped).raises  # checks them
        self.on_error, self.max_skipped = on_error, max_skipped
        if batch_size is not None:
            check_int("batch_size", batch_size, 1)
            if features is None or self._decode.record_type != "example":
                raise ValueError("batch_size= decodes Examples by columns: it needs features= (a spec)")
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.collate_fn = _collate_for(collate_fn, self._decode)
        self.shuffle = bool(shuffle)
        self.shuffle_buffer = check_int("shuffle_buffer", shuffle_buffer, 0) if shuffle else 0
        self.seed = check_int("seed", seed)
        self.paths = resolve_inputs(paths, storage_options=storage_options)
        self.storage_options = storage_options
        self.prefetch = check_int("prefetch", prefetch, 0)
        self.split = check_choice("split", split, SPLITS)
        self.even = check_choice("even", even, EVEN)
        if (rank is None) != (world_size is None):
            raise ValueError("give both rank and world_size, or neither (then torch.distributed decides)")
        if world_size is not None and not 0 <= rank < world_size:  # type: ignore[operator]
            raise ValueError(f"rank {rank} is not in range(world_size={world_size})")
        self._dist = (rank, world_size) if world_size is not None else _distributed()
        self.verify = verify
        comp = normalize_compression(compression, allow_auto=True)
        self._kinds = file_kinds(self.paths, comp, storage_options)
        self._counts: list[int | None] = [None] * len(self.paths)
        if self.split == "range" or self.even is not None:
            self._count_all()  # once, here in the main process: workers get the counts with the dataset
        self._epoch = 0
        self._resume: dict[str, int] | None = None
        self._position: dict[str, int] = {"epoch": 0, "yielded": 0}

    # -- counts and plan

    def _count_all(self) -> list[int]:
        for i, path in enumerate(self.paths):
            if self._counts[i] is None:
                self._counts[i] = count_shard(path, self._kinds[i], self._skipping, self.verify, self.storage_options)
        return self._counts  # type: ignore[return-value]

    def __repr__(self) -> str:
        kinds = sorted(set(self._kinds))
        known = None if None in self._counts else sum(self._counts)  # type: ignore[arg-type]
        return describe(
            "IterableTFRecordDataset",
            shown_paths(self.paths),
            compression("/".join(k or "none" for k in kinds) if kinds != [""] else None),
            count(known),
            *self._decode.spec_parts(),
            f"batch_size={self.batch_size}" if self.batch_size is not None else None,
            f"shuffle_buffer={self.shuffle_buffer}, seed={self.seed}" if self.shuffle else None,
            f"split={self.split!r}" if self.split != "auto" else None,
            f"even={self.even!r}" if self.even else None,
        )

    def num_records(self) -> int:
        """Records in all shards (indexes uncompressed files; one pass over each compressed one)."""
        return sum(self._count_all())

    def _consumer(self) -> tuple[int, int]:
        """(consumer index, number of consumers) of the calling process: rank x DataLoader worker."""
        rank, world = self._dist if self._dist is not None else (_distributed() or (0, 1))
        assert rank is not None and world is not None
        info = get_worker_info()
        wid, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        return rank * workers + wid, world * workers

    def plan(self, epoch: int, consumers: int) -> list[Share]:
        """Every consumer's Share of the records for `epoch` (the same on every rank and worker)."""
        all_indexed = not self._skipping and all(k == "" for k in self._kinds)
        split = choose_split(self.split, all_indexed, len(self.paths), consumers, self.even)
        if split == "range":
            self._count_all()
        order = shard_order(len(self.paths), self.seed, epoch, self.shuffle)
        return plan_shares(self._counts, consumers, split, order)

    # -- the record pipeline

    def _segment_len(self, seg: Segment) -> int | None:
        n = self._counts[seg.shard]
        if n is None and self._kinds[seg.shard] == "":
            n = self._counts[seg.shard] = count_shard(
                self.paths[seg.shard], "", self._skipping, self.verify, self.storage_options
            )
        if n is None:
            return None
        return (n if seg.stop is None else seg.stop) - seg.start

    def _share_records(self, share: Share, skip: int, policy: DamagePolicy | None) -> Iterator[bytes]:
        """The share's raw records from its position `skip` on; indexed segments are skipped, not read."""
        segments = list(share.segments)
        if share.step == 1:
            segments, skip = skip_segments(segments, skip, self._segment_len)
        records: Iterator[bytes] = read_segments(
            self.paths, self._kinds, segments, self.verify, policy, self.storage_options, self.prefetch
        )
        if share.step > 1:
            records = itertools.islice(records, share.offset, None, share.step)
        return itertools.islice(records, skip, None) if skip else records

    def _raw(self, epoch: int, consumer: int, consumers: int, skip: int) -> Iterator[bytes]:
        """This consumer's raw records for `epoch` in yield order, from position `skip` on."""
        shares = self.plan(epoch, consumers)
        share = shares[consumer]
        target = even_target(shares, self.even)
        buffered = self.shuffle_buffer > 1
        pre_skip = 0 if buffered else skip
        policy = DamagePolicy(self.on_error, self.max_skipped) if self._skipping else None  # one per pass
        if target is None:
            records = self._share_records(share, pre_skip, policy)
        else:
            runs = padded_positions(share.count or 0, target, pre_skip)
            records = itertools.chain.from_iterable(
                itertools.islice(self._share_records(share, start, policy), take) for start, take in runs
            )
        if buffered:
            rng = random.Random(mix_seed(self.seed, epoch, consumer, consumers))
            records = shuffle_buffer(records, self.shuffle_buffer, rng)
            if skip:
                records = itertools.islice(records, skip, None)
        return records

    def _items(self, epoch: int, consumer: int, consumers: int, skip: int) -> Iterator[tuple[int, Any]]:
        """(records, item) pairs of this consumer for `epoch` from record position `skip` on: one decoded
        record each, or with batch_size a collated batch (decoded by columns unless its records are large)."""
        raw = self._raw(epoch, consumer, consumers, skip)
        if self.batch_size is None:
            decode = self._decode
            for data in raw:
                yield 1, decode(data)
            return
        spec, size, transform = self._decode.features, self.batch_size, self._decode.transform
        while True:
            records = list(itertools.islice(raw, size))
            if not records or (self.drop_last and len(records) < size):
                return
            batch = decode_batch(records, spec, self.collate_fn)  # type: ignore[arg-type]
            yield len(records), transform(batch) if transform is not None else batch

    def __iter__(self) -> Iterator[Any]:
        consumer, consumers = self._consumer()
        epoch, skip = self._epoch, 0
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
        return self._generate(self._items(epoch, consumer, consumers, skip))

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
        state["seed"] = self.seed
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Make the next iteration continue right after the position that `state` records."""
        if state.get("seed", self.seed) != self.seed:
            raise ValueError(f"this state was saved with seed {state['seed']}, the dataset has seed {self.seed}")
        self._epoch = int(state["epoch"])
        self._resume = {k: int(state[k]) for k in ("epoch", "yielded", "consumer", "consumers")}
        self._resume["seed"] = self.seed

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if state["_dist"] is None:  # pickled for a spawned worker: it will not see the process group
            state["_dist"] = _distributed()
        return state


# --------------------------------------------------------------------------- mixing


class MixedTFRecordDataset(IterableDataset[Any]):
    """Draws items from several IterableTFRecordDatasets at random with the given weights (each source
    split across workers and ranks on its own). Finite: stop="all" goes on with the remaining sources
    when one ends, stop="first" ends with the first exhausted source; infinite=True restarts an exhausted
    source with its next epoch and never ends (unless every source is empty)."""

    def __init__(
        self,
        sources: Sequence[IterableTFRecordDataset],
        weights: Sequence[float] | None = None,
        *,
        seed: int = 0,
        stop: str = "all",
        infinite: bool = False,
    ) -> None:
        if isinstance(sources, IterableDataset):
            raise TypeError("sources must be a list of IterableTFRecordDatasets ([ds1, ds2]), found one dataset")
        self.sources = list(sources)
        if not self.sources:
            raise ValueError("no sources to mix")
        for i, src in enumerate(self.sources):
            if not isinstance(src, IterableTFRecordDataset):
                raise TypeError(f"sources[{i}] must be an IterableTFRecordDataset, found {type(src).__name__}")
        if any(src.batch_size is not None for src in self.sources):
            raise ValueError("mix sources of single records (no batch_size): batch the mixture in the DataLoader")
        w = [1.0] * len(self.sources) if weights is None else [float(x) for x in weights]
        if len(w) != len(self.sources) or any(not x >= 0 for x in w) or sum(w) <= 0:
            raise ValueError(f"weights must be {len(self.sources)} non-negative numbers, not all zero: {weights!r}")
        self.weights = w
        self.seed = check_int("seed", seed)
        self.stop = check_choice("stop", stop, ("all", "first"))
        self.infinite = bool(infinite)
        self._epoch = 0
        self._resume: dict[str, Any] | None = None
        self._state: dict[str, Any] = {}

    def __repr__(self) -> str:
        sources = ", ".join(repr(src) for src in self.sources[:_SHOWN_SOURCES])
        more = f", ... ({len(self.sources)} sources)" if len(self.sources) > _SHOWN_SOURCES else ""
        mode = "infinite" if self.infinite else f"stop={self.stop!r}"
        return describe("MixedTFRecordDataset", f"[{sources}{more}]", f"weights={self.weights}", mode)

    def set_epoch(self, epoch: int) -> None:
        """Use `epoch` for the next iteration (sources start at it too)."""
        self._epoch = int(epoch)
        if self._resume is not None and self._resume["epoch"] != self._epoch:
            self._resume = None

    def __iter__(self) -> Iterator[Any]:
        consumer, consumers = self.sources[0]._consumer()
        state = self._resume
        self._resume = None
        if state is None:
            state = self._start(consumer, consumers)
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
        return {
            "epoch": self._epoch,
            "rng": random.Random(mix_seed(self.seed, self._epoch, consumer, consumers, MIXING_SALT)).getstate(),
            "sources": [{"epoch": self._epoch, "yielded": 0, "active": w > 0} for w in self.weights],
            "consumer": consumer,
            "consumers": consumers,
        }

    def _generate(self, state: dict[str, Any]) -> Iterator[Any]:
        rng = random.Random()
        rng.setstate(_as_rng_state(state["rng"]))
        srcs = state["sources"]
        consumer, consumers = state["consumer"], state["consumers"]
        iters: list[Iterator[Any] | None] = [None] * len(srcs)
        fresh = [False] * len(srcs)
        while True:
            active = [i for i, s in enumerate(srcs) if s["active"]]
            if not active:
                return
            cum = list(itertools.accumulate(self.weights[i] for i in active))
            i = active[bisect.bisect_right(cum, rng.random() * cum[-1])]
            src = srcs[i]
            if iters[i] is None:
                iters[i] = self.sources[i]._items(src["epoch"], consumer, consumers, src["yielded"])
                fresh[i] = src["yielded"] == 0
            try:
                _, item = next(iters[i])  # type: ignore[arg-type]
            except StopIteration:
                iters[i] = None
                if self.infinite and not fresh[i]:
                    src["epoch"] += 1
                    src["yielded"] = 0
                elif self.stop == "first" and not self.infinite:
                    state["rng"] = rng.getstate()
                    return
                else:
                    src["active"] = False  # finite "all", or a source with nothing for this consumer
                state["rng"] = rng.getstate()
                continue
            fresh[i] = False
            src["yielded"] += 1
            state["rng"] = rng.getstate()
            yield item

    def state_dict(self) -> dict[str, Any]:
        """The mixing position: RNG state and each source's epoch and items yielded."""
        if self._resume is not None:
            return _copy_state(self._resume)
        return _copy_state(self._state or self._start(*self.sources[0]._consumer()))

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Make the next iteration continue right after the position that `state` records."""
        if len(state["sources"]) != len(self.sources):
            raise ValueError(f"this state mixes {len(state['sources'])} sources, the dataset {len(self.sources)}")
        self._epoch = int(state["epoch"])
        self._resume = _copy_state(state)


def _copy_state(state: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(state)
    out["sources"] = [dict(s) for s in state["sources"]]
    return out


def _as_rng_state(state: Any) -> tuple[Any, ...]:
    """random.Random state back from a checkpoint (which may have turned its tuples into lists)."""
    version, internal, gauss = state
    return (version, tuple(internal), gauss)
