"""decode_example(copy=False): bytes values are read-only memoryviews into the record, equal to the
copies that copy=True gives (which tests/test_codec.py checks against protobuf), for every spec kind."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tfrecord_lite as tfr

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
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [plain(v) for v in value.tolist()]
    if isinstance(value, np.ndarray):
        return value.tolist()
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
