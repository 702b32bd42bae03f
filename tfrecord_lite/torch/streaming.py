"""`IterableTFRecordDataset`: the streaming dataset. Its consumer (DataLoader worker of a rank) asks
the torch-free ShardStream (_datasets/streaming.py) for its share of the epoch, decodes it (by
records, by batches, on threads), and keeps a resumable position (epoch, items yielded): the
pipeline is deterministic, so resuming replays the raw records up to the position."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Generator, Iterator, Mapping
from typing import Any

from torch.utils.data import IterableDataset, get_worker_info

from tfrecord_lite._batches.columnar import place_by
from tfrecord_lite._datasets.plan import Share
from tfrecord_lite._datasets.streaming import ShardStream
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._example.validate import check_int
from tfrecord_lite._loader.collate import decode_batch
from tfrecord_lite._loader.items import CollateFn, ItemDecoder, Output, RecordType, Spec, Transform, collate_for
from tfrecord_lite._loader.transport import for_transport, pack
from tfrecord_lite._records.threads import Tuning, check_num_threads, ordered_map
from tfrecord_lite._repr import compression, count, describe, shown_paths
from tfrecord_lite._storage.prefetch import PREFETCH
from tfrecord_lite._storage.sources import Sources
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions
from tfrecord_lite.torch.consumers import distributed, fetched_by, worker_pass


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
    `context_features` / `sequence_features`, TF Ranking's ExampleListWithContext (`record_type=
    "elwc"`: its context by `context_features`, each example by `features`, every example feature
    stacked over the list), a protobuf message (`record_type=` its class, generated or made by
    load_message_class: a dict of its fields), or the bytes as they are (`record_type="raw"`); `output=
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
        sharding: str = "auto",
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
        self._dist = (rank, world_size) if world_size is not None else distributed()
        self._stream = ShardStream(  # made here, in the main process: workers get the record counts with it
            source,
            shuffle=shuffle,
            shuffle_buffer=shuffle_buffer,
            seed=seed,
            sharding=sharding,
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
    sharding = _of_stream("sharding", "How records are divided among consumers.")
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
            "IterableTFRecordDataset",
            shown_paths(stream.paths),
            compression("/".join(k or "none" for k in kinds) if kinds != [""] else None),
            count(stream.known_count()),
            *self._decode.spec_parts(),
            f"batch_size={self.batch_size}" if self.batch_size is not None else None,
            f"shuffle_buffer={stream.shuffle_buffer}, seed={stream.seed}" if stream.shuffle else None,
            f"sharding={stream.sharding!r}" if stream.sharding != "auto" else None,
            f"even={stream.even!r}" if stream.even else None,
        )

    def num_records(self) -> int:
        """Records in all shards (indexes uncompressed files; one pass over each compressed one)."""
        return sum(self._stream.count_all())

    def _consumer(self) -> tuple[int, int]:
        """(consumer index, number of consumers) of the calling process: rank x DataLoader worker."""
        rank, world = self._dist if self._dist is not None else (distributed() or (0, 1))
        assert rank is not None and world is not None
        info = get_worker_info()
        wid, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        return rank * workers + wid, world * workers

    def plan(self, epoch: int, consumers: int) -> list[Share]:
        """Every consumer's Share of the records for `epoch` (the same on every rank and worker)."""
        return self._stream.plan(epoch, consumers)

    def _items(
        self, epoch: int, consumer: int, consumers: int, skip: int, packs: bool = False, views: bool = False
    ) -> Generator[tuple[int, Any], None, None]:
        """(records, item) pairs of this consumer for `epoch` from record position `skip` on: one decoded
        record each, or with batch_size a collated batch (decoded by columns unless its records are large).
        `packs` / `views`: as fetched_by says for the DataLoader worker that iterates (errors: _generate)."""
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
        packs, views = fetched_by(self)
        consumer, consumers = self._consumer()
        epoch, skip = self._epoch + worker_pass(self), 0
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
        """The items, counted in the position; an error about one record placed (ShardStream.place)."""
        position = self._position
        try:
            for n, item in items:
                position["yielded"] += n
                yield item
        except TFRecordError as err:
            at = (position["epoch"], position["consumer"], position["consumers"], position["yielded"])
            place_by(err, functools.partial(self._stream.place, *at), 0 if self.batch_size is None else None)
            raise

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
            state["_dist"] = distributed()
        return state
