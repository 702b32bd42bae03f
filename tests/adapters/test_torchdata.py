# torchdata.nodes pipelines over the datasets (tfrecord_lite.torchdata.dataset_node): real files through
# ParallelMapper(method="thread"), Batcher, Prefetcher and Loader; every record exactly once per epoch,
# threads decoding what one thread decodes, epochs that advance, and a state taken mid-epoch that a new
# pipeline (over a new dataset, as after a restart) resumes with exactly the rest.
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tfrecord_lite as tfr

torch = pytest.importorskip("torch")
nodes = pytest.importorskip("torchdata.nodes")
pytestmark = [pytest.mark.torch, pytest.mark.threads]

from torch.utils.data import SequentialSampler

from tests.adapters.test_torch import SPEC, ids, write_shards
from tfrecord_lite.torch import IterableTFRecordDataset, TFRecordDataset
from tfrecord_lite.torchdata import dataset_node

TOTAL = 13 + 8 + 11


def decode(record: bytes) -> dict[str, Any]:
    return tfr.decode_example(record, SPEC)


def pipeline(node: Any, *, threads: int = 2, batch_size: int = 4) -> Any:
    """The pipeline of the docs: decode in threads, batch, prefetch."""
    if threads:
        node = nodes.ParallelMapper(node, decode, num_workers=threads, method="thread")
    else:
        node = nodes.Mapper(node, decode)
    node = nodes.Batcher(node, batch_size=batch_size, drop_last=False)
    return nodes.Loader(nodes.Prefetcher(node, prefetch_factor=2))


def batch_ids(loader: Any) -> list[int]:
    return ids(item for batch in loader for item in batch)


@pytest.fixture
def paths(tmp_path: Path) -> list[str]:
    return write_shards(tmp_path, [13, 8], compression="gzip") + write_shards(tmp_path, [11], first_id=21, name="plain")


def streaming(paths: list[str]) -> IterableTFRecordDataset:
    return IterableTFRecordDataset(paths, record_type="raw", shuffle=True, shuffle_buffer=5, seed=4)


@pytest.mark.parametrize("threads", [0, 1, 3])
def test_a_streaming_pipeline_gives_every_record_once_and_threads_decode_as_one(paths: list[str], threads: int) -> None:
    loader = pipeline(dataset_node(streaming(paths)), threads=threads)
    first, second = batch_ids(loader), batch_ids(loader)
    assert sorted(first) == sorted(second) == list(range(TOTAL))
    assert first != second  # the second iter() is the next epoch: another shuffle
    alone = pipeline(dataset_node(streaming(paths)), threads=0)
    assert batch_ids(alone) == first and batch_ids(alone) == second  # the same order, whatever decodes it
    decoded = next(iter(pipeline(dataset_node(streaming(paths)), threads=threads)))[0]
    assert set(decoded) == set(SPEC) and decoded["x"].tolist() == [decoded["id"], -decoded["id"]]


def test_a_streaming_pipeline_of_batches_decoded_by_the_dataset(paths: list[str]) -> None:
    ds = IterableTFRecordDataset(paths, features=SPEC, batch_size=5, output="torch")
    node = nodes.Prefetcher(nodes.ParallelMapper(dataset_node(ds), lambda b: b, num_workers=2, method="thread"), 2)
    batches = list(nodes.Loader(node))
    assert ids(batches) == list(range(TOTAL)) and isinstance(batches[0]["id"], torch.Tensor)


def resume(make: Callable[[], Any], taken: int) -> tuple[list[int], list[int], list[int]]:
    """(the batches of an uninterrupted epoch, the first `taken` batches, what a new pipeline loaded
    with the state taken then gives), as ids."""
    full = batch_ids(make())
    loader = make()
    it = iter(loader)
    head = ids(item for _ in range(taken) for item in next(it))
    state = loader.state_dict()
    del it
    resumed = make()
    resumed.load_state_dict(state)
    return full, head, batch_ids(resumed)


@pytest.mark.parametrize("taken", [1, 4, 7])
def test_a_streaming_pipeline_resumes_mid_epoch_with_exactly_the_rest(paths: list[str], taken: int) -> None:
    full, head, rest = resume(lambda: pipeline(dataset_node(streaming(paths))), taken)
    assert len(head) == 4 * taken and head + rest == full


def test_a_state_taken_at_the_end_of_an_epoch_resumes_with_the_next(paths: list[str]) -> None:
    loader = pipeline(dataset_node(streaming(paths)))
    first, second = batch_ids(loader), batch_ids(loader)
    _, head, rest = resume(lambda: pipeline(dataset_node(streaming(paths))), TOTAL // 4)
    assert head == first and rest == second


def test_a_resumed_pipeline_goes_on_with_the_next_epoch(paths: list[str]) -> None:
    def make() -> Any:
        return pipeline(dataset_node(streaming(paths), initial_epoch=2))

    epochs = make()
    third, fourth = batch_ids(epochs), batch_ids(epochs)
    loader = make()
    batch_ids(loader)
    it = iter(loader)  # epoch 3
    head = ids(item for _ in range(2) for item in next(it))
    state = loader.state_dict()
    resumed = make()
    resumed.load_state_dict(state)
    assert head + batch_ids(resumed) == fourth != third


@pytest.mark.parametrize("shuffle", [False, True])
def test_a_map_style_pipeline_reads_in_the_samplers_order_and_resumes(paths: list[str], shuffle: bool) -> None:
    def make() -> Any:
        node = dataset_node(TFRecordDataset(paths, record_type="raw"), shuffle=shuffle, seed=7)
        return pipeline(node, batch_size=3)

    full, head, rest = resume(make, 5)
    assert sorted(full) == list(range(TOTAL)) and (full == list(range(TOTAL))) is not shuffle
    assert head + rest == full
    assert batch_ids(make()) == full  # the order is the seed's and the epoch's, in any process
    sampled = pipeline(dataset_node(TFRecordDataset(paths, record_type="raw"), sampler=SequentialSampler(range(TOTAL))))
    assert batch_ids(sampled) == list(range(TOTAL))


def test_shuffled_map_style_epochs_differ_and_each_has_every_record(paths: list[str]) -> None:
    loader = pipeline(dataset_node(TFRecordDataset(paths, record_type="raw"), shuffle=True, seed=1))
    first, second = batch_ids(loader), batch_ids(loader)
    assert sorted(first) == sorted(second) == list(range(TOTAL)) and first != second


def test_what_does_not_fit_is_refused(paths: list[str]) -> None:
    with pytest.raises(ValueError, match="shuffles itself"):
        dataset_node(streaming(paths), shuffle=True)
    with pytest.raises(ValueError, match="not both"):
        dataset_node(TFRecordDataset(paths), sampler=SequentialSampler(range(TOTAL)), shuffle=True)
    with pytest.raises(TypeError, match="not list"):
        dataset_node(paths)  # type: ignore[arg-type]
