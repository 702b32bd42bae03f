"""Streaming many shards from a store without waiting on each one: while shard k is
decoded, a thread pool fetches the first block (1 MiB: all of a small shard) of shards
k+1 .. k+prefetch. Each shard then reads on from its prefetched block by ranged
requests of 8 MiB (remote.RemoteStream), so memory stays under prefetch x 1 MiB +
8 MiB, whatever the shard sizes. Local paths pass through untouched. The default
depth keeps 32 requests in flight: with 20 ms a request, 64 small shards (1 ms of
decoding each) arrive in 0.09 s with 32 threads, 0.12 s with 16 (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import collections
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from tfrecord_lite._storage.locations import StorageOptions, is_url, split_options
from tfrecord_lite._storage.remote import RemoteObject, RemoteStream, fetch_head

PREFETCH = 32  # shards fetched ahead by default
MAX_THREADS = 32


def prefetched(
    sources: Sequence[Any], prefetch: int = PREFETCH, storage_options: StorageOptions = None
) -> Iterator[Any]:
    """`sources` in order, each URL replaced by a RemoteStream whose first block was fetched ahead."""
    if prefetch < 0:
        raise ValueError(f"prefetch must be >= 0, not {prefetch!r}")
    options, fs = split_options(storage_options)
    remote = [is_url(s) for s in sources]
    if not any(remote):
        yield from sources
        return
    objects = [RemoteObject(s, options, fs) if r else None for s, r in zip(sources, remote, strict=True)]
    if prefetch == 0:
        for source, obj in zip(sources, objects, strict=True):
            yield RemoteStream(obj) if obj is not None else source
        return
    pool = ThreadPoolExecutor(min(prefetch, MAX_THREADS), thread_name_prefix="tfrecord_lite-prefetch")
    ahead: collections.deque[Future[bytes] | None] = collections.deque()
    following = 0  # the next source whose fetch is not submitted yet
    try:
        for k, source in enumerate(sources):
            while following < len(sources) and following <= k + prefetch:
                obj = objects[following]
                ahead.append(pool.submit(fetch_head, obj) if obj is not None else None)
                following += 1
            head = ahead.popleft()
            obj = objects[k]
            yield RemoteStream(obj, head=head) if obj is not None else source
    finally:
        for future in ahead:
            if future is not None:
                future.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
