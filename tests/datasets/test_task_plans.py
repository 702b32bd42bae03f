"""How a dataset's read tasks are planned. Spark's partitions as Spark plans its file sources
(split_bytes, split_pieces, pack_pieces): a partition's size from the dataset's bytes and the
parallelism, files larger than that cut into record ranges, and the pieces packed largest first.
Ray's and Dask's tasks when there are more files than tasks (group_pieces): runs of neighbouring
files of about equal bytes. Properties over any sizes (hypothesis), and real files."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tfrecord_lite._datasets.pieces import Piece, group_pieces, pack_pieces, split_bytes, split_pieces

from .._records import write_records

MIB = 1 << 20


def test_split_bytes_shares_the_bytes_among_the_partitions_within_its_bounds() -> None:
    # Spark's maxSplitBytes: four 13,390,000-byte files, 4 MiB open cost, 2 cores
    assert split_bytes([13_390_000] * 4, 128 * MIB, 4 * MIB, 2) == (4 * (13_390_000 + 4 * MIB)) // 2
    assert split_bytes([13_390_000] * 4, 20 * MIB, 4 * MIB, 2) == 20 * MIB  # never over maxPartitionBytes
    assert split_bytes([100] * 3, 128 * MIB, 4 * MIB, 200) == 4 * MIB  # never under the open cost
    assert split_bytes([], 128 * MIB, 4 * MIB, 0) == 4 * MIB


@given(
    sizes=st.lists(st.integers(0, 50 * MIB), max_size=40),
    max_bytes=st.integers(1, 64 * MIB),
    open_cost=st.integers(0, 8 * MIB),
)
def test_packing_takes_every_piece_once_largest_first_closing_only_when_full(
    sizes: list[int], max_bytes: int, open_cost: int
) -> None:
    pieces = [Piece(f"f{i}", size) for i, size in enumerate(sizes)]
    groups = pack_pieces(pieces, max_bytes, open_cost)
    flat = [piece for group in groups for piece in group]
    assert sorted(p.path for p in flat) == sorted(p.path for p in pieces) and all(groups)
    assert [p.size for p in flat] == sorted(sizes, reverse=True)
    for group in groups:  # ties keep their order
        same = [int(p.path[1:]) for p in group]
        assert all(a < b for a, b in itertools.pairwise(same) if sizes[a] == sizes[b])
    for group, after in itertools.pairwise(groups):
        filled = sum(p.size + open_cost for p in group)
        assert filled + after[0].size > max_bytes  # the next piece did not fit
        assert len(group) == 1 or filled - open_cost <= max_bytes  # only a lone piece exceeds


def test_small_files_share_partitions_and_a_large_one_is_cut_by_its_index(tmp_path: Path) -> None:
    small = [
        write_records(tmp_path / f"small-{i}.tfrecord", (tfr.encode_example({"i": [k]}) for k in range(50)))
        for i in range(4)
    ]
    files = [(str(path), os.path.getsize(path)) for path in small]
    largest = split_bytes([size for _, size in files], 128 * MIB, 1024, 2)
    groups = pack_pieces(split_pieces(files, largest, 10), largest, 1024)
    assert [[Path(p.path).name for p in group] for group in groups] == [
        ["small-0.tfrecord", "small-1.tfrecord"],
        ["small-2.tfrecord", "small-3.tfrecord"],
    ]
    big = write_records(tmp_path / "big.tfrecord", (tfr.encode_example({"i": [k]}) for k in range(1000)))
    size = os.path.getsize(big)
    largest = split_bytes([size], 128 * MIB, 1024, 2)
    pieces = split_pieces([(str(big), size)], largest, 10)
    groups = pack_pieces(pieces, largest, 1024)
    assert len(groups) == 2 and [(p.start, p.stop) for g in groups for p in g] == [(0, 500), (500, 1000)]
    assert (tmp_path / "big.tfrecord.tfrlidx").exists()


@given(sizes=st.lists(st.integers(0, 10 * MIB), max_size=40), wanted=st.integers(1, 12))
def test_grouping_keeps_the_order_in_at_most_the_groups_wanted(sizes: list[int], wanted: int) -> None:
    pieces = [Piece(f"f{i}", size) for i, size in enumerate(sizes)]
    groups = group_pieces(pieces, wanted)
    assert [p for group in groups for p in group] == pieces and all(groups)
    assert len(groups) <= wanted and (len(pieces) > wanted or len(groups) == len(pieces))
    if sizes and len(pieces) > wanted:  # a group holds the pieces whose middle is in its share
        weights = [max(size, 1) for size in sizes]
        share = sum(weights) / wanted
        assert all(sum(max(p.size, 1) for p in group) <= share + max(weights) for group in groups)


def test_equal_files_are_grouped_evenly_and_urls_by_count() -> None:
    pieces = [Piece(f"f{i}", 100) for i in range(6)]
    assert [[p.path for p in g] for g in group_pieces(pieces, 2)] == [["f0", "f1", "f2"], ["f3", "f4", "f5"]]
    urls = [Piece(f"s3://b/f{i}", 0) for i in range(4)]
    assert [len(g) for g in group_pieces(urls, 2)] == [2, 2]
