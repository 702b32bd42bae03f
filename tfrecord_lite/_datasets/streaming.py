"""Streaming shards to several consumers, without torch: the raw records one consumer (one
DataLoader worker of one rank, for tfrecord_lite.torch) reads in an epoch, from a position on.

Strategy: the consumer's Share comes from the epoch's plan (plan.py), which every consumer
computes alike from the seed and the epoch. Its segments are read in order (segments.py); a
stride keeps every k-th record; equal counts pad a share by starting it over, or cut it; a
shuffle buffer seeded by (seed, epoch, consumer) mixes what comes out. The pipeline is
deterministic, so a position is a number of records: resuming replays the raw records (no
decoding) up to it, and without a shuffle buffer skips whole indexed segments unread. Record
counts are learnt only where the sharding needs them (plan.needs_counts; sharding="auto" once the
consumers are known), once (an uncompressed file's index, or one pass over a compressed one),
and kept: they travel with the object when it is pickled to the consumers. Files read through their
index stay open in the process that reads them (not pickled), so a persistent DataLoader worker
opens each sidecar once, not once an epoch. An error about one record (one that does not fit the
spec) is placed by `place`: as a resume does, the consumer's records are read again up to its
position, this time each with its file, number and byte offset, so reading costs nothing for it.
"""

from __future__ import annotations

import functools
import itertools
import os
import random
from collections.abc import Generator, Iterator
from typing import Any

from tfrecord_lite._batches.columnar import place_by
from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._datasets.plan import (
    EVEN,
    SHARDINGS,
    Segment,
    Share,
    choose_sharding,
    even_target,
    mix_seed,
    needs_counts,
    padded_positions,
    plan_shares,
    shard_order,
    shuffle_buffer,
)
from tfrecord_lite._datasets.segments import (
    Place,
    ShardOptions,
    count_shard,
    open_plain,
    read_segments,
    skip_segments,
)
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._example.validate import check_choice, check_int
from tfrecord_lite._records.random_access import TFRecordFile
from tfrecord_lite._storage.file_kinds import file_kinds
from tfrecord_lite._storage.locations import StorageOptions
from tfrecord_lite._storage.sources import Sources, resolve_inputs
from tfrecord_lite._stream.damage import DamagePolicy, OnError


class ShardStream:
    """The records of TFRecord shards dealt out to consumers epoch by epoch: who reads what
    (`sharding`, `even`), in which order (`shuffle`: seeded shard order and a buffer of
    `shuffle_buffer` records), and how (`verify`, `on_error` / `max_skipped`, `prefetch`,
    `storage_options`, `max_record_bytes`). The arguments are tfrecord_lite.torch.IterableTFRecordDataset's."""

    def __init__(
        self,
        source: Sources,
        *,
        shuffle: bool,
        shuffle_buffer: int,
        seed: int,
        sharding: str,
        even: str | None,
        compression: str | None,
        verify: bool,
        storage_options: StorageOptions,
        prefetch: int,
        on_error: OnError,
        max_skipped: int | None,
        max_record_bytes: int,
    ) -> None:
        self.skipping = not DamagePolicy(on_error, max_skipped).raises  # checks them
        self.on_error, self.max_skipped = on_error, max_skipped
        self.shuffle = bool(shuffle)
        self.shuffle_buffer = check_int("shuffle_buffer", shuffle_buffer, 0) if shuffle else 0
        self.seed = check_int("seed", seed)
        self.paths = resolve_inputs(source, storage_options=storage_options)
        self.max_record_bytes = check_int("max_record_bytes", max_record_bytes, 1)
        self.storage_options = storage_options
        self.prefetch = check_int("prefetch", prefetch, 0)
        self.sharding = check_choice("sharding", sharding, SHARDINGS)
        self.even = check_choice("even", even, EVEN)
        self.verify = verify
        self.kinds = file_kinds(self.paths, normalize_compression(compression, allow_auto=True), storage_options)
        self.counts: list[int | None] = [None] * len(self.paths)
        self._opened: dict[str, TFRecordFile] = {}
        self._opened_by = os.getpid()
        if needs_counts(self.sharding, self.even):
            self.count_all()  # once, where the object is made: consumers get the counts with it

    def count_all(self) -> list[int]:
        """The record count of every shard, learnt once."""
        for i, path in enumerate(self.paths):
            if self.counts[i] is None:
                self.counts[i] = count_shard(path, self.kinds[i], self.skipping, self.verify, self._options())
        return self.counts  # type: ignore[return-value]

    def known_count(self) -> int | None:
        """The records of all shards, if every count is known yet."""
        return None if None in self.counts else sum(self.counts)  # type: ignore[arg-type]

    def plan(self, epoch: int, consumers: int) -> list[Share]:
        """Every consumer's Share of the records for `epoch` (the same for every consumer)."""
        all_indexed = not self.skipping and all(k == "" for k in self.kinds)
        sharding = choose_sharding(self.sharding, all_indexed, len(self.paths), consumers, self.even)
        if needs_counts(sharding, self.even):
            self.count_all()
        order = shard_order(len(self.paths), self.seed, epoch, self.shuffle)
        return plan_shares(self.counts, consumers, sharding, order)

    def records(self, epoch: int, consumer: int, consumers: int, skip: int, placed: bool = False) -> Iterator[Any]:
        """The raw records of `consumer` (of `consumers`) for `epoch` in yield order, from position `skip` on;
        `placed`: (record, Place) pairs, damage skipped silently (it was reported when first read)."""
        shares = self.plan(epoch, consumers)
        share = shares[consumer]
        target = even_target(shares, self.even)
        buffered = self.shuffle_buffer > 1
        pre_skip = 0 if buffered else skip
        policy = None
        if self.skipping:  # one per pass
            policy = DamagePolicy(_ignore) if placed else DamagePolicy(self.on_error, self.max_skipped)
        if target is None:
            records = self._share_records(share, pre_skip, policy, placed)
        else:
            runs = padded_positions(share.count or 0, target, pre_skip)
            records = itertools.chain.from_iterable(
                itertools.islice(self._share_records(share, start, policy, placed), take) for start, take in runs
            )
        if buffered:
            rng = random.Random(mix_seed(self.seed, epoch, consumer, consumers))
            records = shuffle_buffer(records, self.shuffle_buffer, rng)
            if skip:
                records = itertools.islice(records, skip, None)
        return records

    def located(
        self, items: Generator[tuple[int, Any], None, None], epoch: int, consumer: int, consumers: int, skip: int
    ) -> Iterator[tuple[int, Any]]:
        """`items`, (records, item) pairs made from `records(epoch, consumer, consumers, skip)`, with an error
        about one record (its number in the item's records, or the item's one record) placed by `place`."""
        position = skip  # of the next item's first record
        try:
            while True:
                try:
                    n, item = next(items)
                except StopIteration:
                    return
                except TFRecordError as err:
                    place_by(err, functools.partial(self.place, epoch, consumer, consumers, position), 0)
                    raise
                position += n
                yield n, item
        finally:
            items.close()  # stops its threads (num_threads) at once

    def place(self, epoch: int, consumer: int, consumers: int, first: int, k: int = 0) -> Place | None:
        """Where the record at position `first + k` of `consumer`'s records for `epoch` lies (file, number in
        it, byte offset), found by reading them again up to it (for an error about it; None if that fails)."""
        try:
            found = next(self.records(epoch, consumer, consumers, first + k, placed=True), None)
        except (TFRecordError, OSError):
            return None
        return None if found is None else found[1]

    def _segment_len(self, seg: Segment) -> int | None:
        """The records of `seg`, where its shard's count is known or costs no pass (an index); else None."""
        n = self.counts[seg.shard]
        if n is None and self.kinds[seg.shard] == "":
            n = self.counts[seg.shard] = count_shard(
                self.paths[seg.shard], "", self.skipping, self.verify, self._options()
            )
        if n is None:
            return None
        return (n if seg.stop is None else seg.stop) - seg.start

    def _share_records(
        self, share: Share, skip: int, policy: DamagePolicy | None, placed: bool = False
    ) -> Iterator[Any]:
        """The share's raw records from its position `skip` on; indexed segments are skipped, not read."""
        segments = list(share.segments)
        if share.step == 1:
            segments, skip = skip_segments(segments, skip, self._segment_len)
        records: Iterator[Any] = read_segments(
            self.paths, self.kinds, segments, self.verify, policy, self._options(), self.prefetch, self._open, placed
        )
        if share.step > 1:
            records = itertools.islice(records, share.offset, None, share.step)
        return itertools.islice(records, skip, None) if skip else records

    def _open(self, path: str) -> TFRecordFile:
        """The indexed file at `path`, opened once in this process and kept open."""
        if self._opened_by != os.getpid():  # forked: the parent's maps are not this process's to share
            self._opened, self._opened_by = {}, os.getpid()
        f = self._opened.get(path)
        if f is None or f.closed:
            f = self._opened[path] = open_plain(path, self.verify, self._options())
        return f

    def _options(self) -> ShardOptions:
        """ShardOptions the shards are (storage_options) and the longest record they may hold."""
        return {"storage_options": self.storage_options, "max_record_bytes": self.max_record_bytes}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_opened"] = {}
        return state


def _ignore(err: TFRecordError) -> None:
    """The on_error of reading again to place an error: the damage was reported when first read."""
