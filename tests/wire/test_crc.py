"""TFRecord's masked CRC32C, one at a time and of many record lengths at once (from tables),
against the definition written out longhand."""

from __future__ import annotations

import struct

import numpy as np
from crc32c import crc32c
from hypothesis import given
from hypothesis import strategies as st

from tfrecord_lite._wire.crc import masked_crc, masked_length_crcs


def masked_crc_by_the_spec(data: bytes) -> int:
    """TFRecord's definition (tensorflow/core/lib/hash/crc32c.h: Mask), written out longhand."""
    crc = crc32c(data)
    rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    return (rotated + 0xA282EAD8) & 0xFFFFFFFF


@given(st.binary(max_size=300))
def test_masked_crc_is_the_spec(data: bytes) -> None:
    assert masked_crc(data) == masked_crc_by_the_spec(data)
    assert masked_crc(memoryview(bytearray(data))) == masked_crc_by_the_spec(data)


@given(st.lists(st.integers(0, (1 << 40) - 1), max_size=50))
def test_masked_length_crcs_are_the_crcs_of_the_length_fields(lengths: list[int]) -> None:
    edges = [0, 1, 0xFFFF, 0x10000, 0xFFFFFFFF, 1 << 32, (1 << 40) - 1]
    lengths = lengths + edges
    crcs = masked_length_crcs(np.array(lengths, np.int64))
    assert crcs.dtype == np.uint32
    assert crcs.tolist() == [masked_crc_by_the_spec(struct.pack("<Q", n)) for n in lengths]


@given(st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=50))
def test_masked_length_crcs_of_short_lengths_alone(lengths: list[int]) -> None:
    crcs = masked_length_crcs(np.array(lengths, np.int64))  # all below 2**16: the one-table path
    assert crcs.tolist() == [masked_crc_by_the_spec(struct.pack("<Q", n)) for n in lengths]
