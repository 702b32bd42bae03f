"""PyTorch adapters (imports torch; `import tfrecord_lite` never imports this module).

Map-style: TFRecordDataset indexes its shards (ShardedRecords, memory-mapped, reopened
in each process) so len / [i] / DataLoader(shuffle=True) / DistributedSampler just work.

Streaming: IterableTFRecordDataset gives every *consumer* (one DataLoader worker of one
torch.distributed rank; consumer = rank * num_workers + worker_id) a disjoint Share of the
records. The plan (_datasets/plan.py, torch-free) is a pure function of (record counts, shard order, consumers): every
consumer computes the same plan from the same seed and epoch, so no communication is
needed and the union is every record exactly once. Sharding: whole shards ("shard"),
contiguous record ranges of the concatenated shards ("range", needs counts, i.e. the
index of uncompressed files), or "stride" (consumers sharing one compressed shard each
read it whole and keep every k-th record). Shuffling = seeded shard order + a bounded
per-consumer buffer. A resumable position is just (epoch, items yielded): the pipeline
is deterministic, so resuming replays the raw record stream (no decoding) up to the
position; without a shuffle buffer, indexed files skip straight to it.

This package holds what is torch's only, a module per dataset (map_style.py, streaming.py,
mixing.py, tfds.py) and who the calling consumer is (consumers.py: DataLoader worker and rank, the
fetcher's collation). The rest is torch-free: in _datasets the records a consumer streams
(streaming.py, over plan.py and segments.py) and weighted mixing (mixing.py); in _loader what an
item is (items.py, which also types the decoding parameters both datasets take, once), batching
(collate.py, re-exported here) and the workers' transport (transport.py). Every dataset takes
`source` and the reader options as every reader does (docs/conventions.md).
"""

from __future__ import annotations

try:
    import torch  # noqa: F401  (the error below names the extra to install)
except ModuleNotFoundError as exc:  # still a ModuleNotFoundError, which pytest.importorskip and others expect
    raise ModuleNotFoundError(
        f"tfrecord_lite.torch needs PyTorch ({exc}): pip install 'tfrlite[torch]'", name=exc.name
    ) from exc

from tfrecord_lite._datasets.plan import Segment, Share, plan_shares, shard_order
from tfrecord_lite._errors import DataLoaderWarning
from tfrecord_lite._loader.collate import Collate, collate, to_torch
from tfrecord_lite.torch.map_style import TFRecordDataset
from tfrecord_lite.torch.mixing import MixedTFRecordDataset
from tfrecord_lite.torch.streaming import IterableTFRecordDataset
from tfrecord_lite.torch.tfds import IterableTFDSDataset, TFDSDataset

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
