"""decode_example(copy=False): bytes values are read-only memoryviews into the record, equal to the
copies that copy=True gives (which tests/example/test_codec.py checks against protobuf), for every spec kind;
and the same of decode_examples and iter_example_batches (tests/batches/test_columnar.py checks their copies)."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests.batches.test_columnar import _features_of, batches
from tests.example.test_codec import entry, example, ld
from tfrecord_lite._batches.columnar import _VIEWS, decode_records

IMAGE = bytes(range(256)) * 256
FEATURES = {"image": IMAGE, "tags": [b"a", b"", b"ccc"], "label": 7, "x": np.arange(3, dtype=np.float32)}
RECORD = tfr.encode_example(FEATURES)
SPECS = [
    None,
    {"image": tfr.FixedLenFeature([], "string"), "label": tfr.FixedLenFeature([], "int64")},
    {"tags": tfr.FixedLenFeature([3], "string"), "x": tfr.FixedLenFeature([3], "float32")},
    {"tags": tfr.VarLenFeature("string")},
    {"tags": tfr.FixedLenSequenceFeature([], "string", allow_missing=True)},
    {"none": tfr.FixedLenFeature([], "string", default_value=b"d")},
]


def plain(value: object) -> object:
    """Values with memoryviews turned into bytes, for comparing with the copying decode."""
    if isinstance(value, memoryview):
        return value.tobytes()
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tfr.Ragged):
        return plain(value.values), plain(value.row_splits)
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [plain(v) for v in value.tolist()]
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()  # NaNs compare bit for bit
    return value


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("source", [bytes, bytearray, memoryview])
def test_views_equal_the_copies(spec: dict | None, source: type) -> None:
    copied = tfr.decode_example(source(RECORD), spec)
    viewed = tfr.decode_example(source(RECORD), spec, copy=False)
    assert {k: plain(v) for k, v in viewed.items()} == {k: plain(v) for k, v in copied.items()}


def test_a_large_value_is_a_read_only_view_that_keeps_its_record_alive() -> None:
    record = bytes(RECORD)
    image = tfr.decode_example(record, SPECS[1], copy=False)["image"]
    assert isinstance(image, memoryview) and image.readonly and image.obj is record
    del record
    gc.collect()
    assert image == IMAGE  # still valid: the view holds the record
    with pytest.raises(TypeError):
        image[0] = 1  # type: ignore[index]


def views(value: object) -> list[memoryview]:
    """The memoryviews among a decoded value's bytes values (all read-only)."""
    if isinstance(value, np.ndarray) and value.dtype == object:
        return views(value.tolist())
    if isinstance(value, list):
        return [v for item in value for v in views(item)]
    if isinstance(value, memoryview):
        assert value.readonly
        return [value]
    return []


def _decoded_both_ways(records: list[Any], spec: dict[str, Any]) -> tuple[Any, Any]:
    """decode_examples with and without copies, or both errors."""
    out = []
    for copy in (True, False):
        try:
            out.append(tfr.decode_examples(records, spec, copy=copy))
        except Exception as err:
            out.append((type(err), str(err)))
    return out[0], out[1]


@given(batches(), st.integers(0, 2))
def test_batch_views_equal_the_copies(batch: Any, blobs: int) -> None:
    """Random specs and batches (tests/batches/test_columnar.py's), small, and large enough to take the
    sparse join; records the batched parser hands over to decode_example included."""
    records, spec = batch
    if blobs:
        pad = [entry(b"~blob%d" % k, ld(1, ld(1, bytes([k]) * 40_000))) for k in range(blobs)]
        records = [example(_features_of(record), *pad) for record in records]
    copied, viewed = _decoded_both_ways(records, spec)
    if isinstance(copied, tuple):
        assert viewed == copied
        return
    assert {k: plain(v) for k, v in viewed.items()} == {k: plain(v) for k, v in copied.items()}
    for column in viewed.values():
        for v in views(column):  # into its record when records are large, else into one join of them
            assert type(v.obj) is bytes and (not blobs or any(v.obj is r for r in records))


BATCH_SPEC = {
    "image": tfr.FixedLenFeature([], "string"),
    "tags": tfr.VarLenFeature("string"),
    "steps": tfr.FixedLenSequenceFeature([], "string", allow_missing=True),
    "label": tfr.FixedLenFeature([], "int64"),
}


def _rows(count: int, size: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(size)
    return [
        {
            "image": rng.bytes(size + i % 7),
            "tags": [b"t%d" % i] * (i % 3 + 1),
            "steps": [b"s"] * (i % 4 + 1),
            "label": i,
        }
        for i in range(count)
    ]


@pytest.mark.parametrize("size", [10, 6000, 40_000])
def test_batch_views_keep_their_records_alive(size: int) -> None:
    """Small records (joined afresh), records of a few KiB (joined into the reused scratch buffer)
    and large ones (their long values left out of the join): the views outlive the records."""
    records = [tfr.encode_example(row) for row in _rows(20, size)]
    copied = tfr.decode_examples(records, BATCH_SPEC)
    viewed = tfr.decode_examples(records, BATCH_SPEC, copy=False)
    assert len(views(list(viewed.values()))) == sum(1 + (i % 3 + 1) + (i % 4 + 1) for i in range(20))
    into_records = all(any(v.obj is r for r in records) for v in views(viewed["image"]))
    assert into_records == (size > 4096) and {type(v.obj) for v in views(viewed["image"])} == {bytes}
    del records
    gc.collect()
    tfr.decode_examples([tfr.encode_example(row) for row in _rows(20, size + 1)], BATCH_SPEC)  # reuses memory
    assert {k: plain(v) for k, v in viewed.items()} == {k: plain(v) for k, v in copied.items()}


@pytest.mark.parametrize("size", [10, 6000, 40_000])
def test_batch_views_of_other_buffers_are_into_copies_of_them(size: int) -> None:
    buffers = [bytearray(tfr.encode_example(row)) for row in _rows(6, size)]
    copied = tfr.decode_examples(buffers, BATCH_SPEC)
    viewed = tfr.decode_examples([memoryview(b) for b in buffers[:3]] + buffers[3:], BATCH_SPEC, copy=False)
    for buffer in buffers:
        buffer[:] = bytes(len(buffer))  # the views do not see it
    assert {k: plain(v) for k, v in viewed.items()} == {k: plain(v) for k, v in copied.items()}
    assert {type(v.obj) for v in views(viewed["image"])} == {bytes}


def test_records_decoded_one_by_one_give_views_too() -> None:
    """A record outside the canonical layout (its label unpacked) is decoded by decode_example:
    with copy=False its values are views as well."""
    records = [tfr.encode_example(row) for row in _rows(4, 100)]
    odd = example(entry(b"image", ld(1, ld(1, b"odd"))), entry(b"label", ld(3, b"\x08\x05")))
    spec = {"image": BATCH_SPEC["image"], "label": BATCH_SPEC["label"]}
    assert decode_records([*records, odd], spec, _VIEWS)[1] == [4]  # the rows decode_example decoded
    got = tfr.decode_examples([*records, odd], spec, copy=False)
    assert [bytes(v) for v in views(got["image"])][-1] == b"odd" and got["label"][-1] == 5
    assert len(views(got["image"])) == 5


@pytest.mark.parametrize("compression", [None, "gzip"])
@pytest.mark.parametrize("size", [10, 40_000])
def test_iter_example_batches_views_outlive_the_read_buffer(tmp_path: Any, compression: str | None, size: int) -> None:
    """All batches held to the end: views of the small path are into a copy of each batch, not
    into the reader's buffer, which later batches are read into (the files are 3+ buffers long)."""
    count = 2000 if size < 100 else 120
    path = str(tmp_path / "x.tfrecord")
    with tfr.TFRecordWriter(path, compression=compression) as w:
        for row in _rows(count, size):
            w.write_example(row)
    copied = list(tfr.iter_example_batches(path, features=BATCH_SPEC, batch_size=64))
    viewed = list(tfr.iter_example_batches(path, features=BATCH_SPEC, batch_size=64, copy=False))
    assert len(viewed) == len(copied) == -(-count // 64)
    for a, b in zip(viewed, copied, strict=True):
        assert {k: plain(v) for k, v in a.items()} == {k: plain(v) for k, v in b.items()}
        assert len(views(a["image"])) == len(b["image"]) and len(views(a["tags"])) == sum(map(len, b["tags"]))


def test_iter_example_batches_copy_false_without_bytes_features(tmp_path: Any) -> None:
    path = str(tmp_path / "x.tfrecord")
    with tfr.TFRecordWriter(path) as w:
        for row in _rows(100, 10):
            w.write_example(row)
    spec = {"label": BATCH_SPEC["label"]}
    got = [
        n for b in tfr.iter_example_batches(path, features=spec, batch_size=30, copy=False) for n in b["label"].tolist()
    ]
    assert got == list(range(100))
