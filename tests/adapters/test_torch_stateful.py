# Resuming through torchdata's StatefulDataLoader (skipped when torchdata is not installed;
# it is optional: the datasets' own state_dict() / load_state_dict() need nothing else).
# A checkpoint taken after some batches, loaded into a new loader, must give exactly the
# batches the uninterrupted run would have given next — with 0 and 2 workers.
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sdl = pytest.importorskip("torchdata.stateful_dataloader")

from tests.adapters.test_torch import ids, write_shards
from tfrecord_lite.torch import IterableTFRecordDataset, MixedTFRecordDataset, collate


def resume_through_loader(make_ds: Callable[[], Any], workers: int, batches: int) -> tuple:
    def make() -> Any:
        return sdl.StatefulDataLoader(make_ds(), batch_size=3, num_workers=workers, collate_fn=collate)

    full = ids(make())
    first = make()
    it = iter(first)
    head = ids(next(it) for _ in range(batches))
    state = first.state_dict()
    del it
    second = make()
    second.load_state_dict(state)
    return head, ids(second), full


@pytest.mark.parametrize("workers", [0, 2])
def test_stateful_dataloader_resume(tmp_path: Path, workers: int) -> None:
    paths = write_shards(tmp_path, [13, 8, 11], compression="gzip")
    head, rest, full = resume_through_loader(
        lambda: IterableTFRecordDataset(paths, shuffle=True, shuffle_buffer=5, seed=9), workers, 4
    )
    assert sorted(head + rest) == list(range(32))
    assert head + rest == full


def test_stateful_dataloader_resume_mixed(tmp_path: Path) -> None:
    a = write_shards(tmp_path, [10, 6], name="a")
    b = write_shards(tmp_path, [9], first_id=1000, name="b", compression="gzip")

    def make() -> MixedTFRecordDataset:
        return MixedTFRecordDataset(
            [IterableTFRecordDataset(a, shuffle=True), IterableTFRecordDataset(b, shuffle=True)], weights=[1, 2], seed=2
        )

    head, rest, full = resume_through_loader(make, 2, 3)
    assert head + rest == full
    assert sorted(full) == list(range(16)) + list(range(1000, 1009))
