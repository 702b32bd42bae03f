"""The search for the next valid record header in damaged data (resync.find_header), against
checking every offset with header_is_valid."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tfrecord_lite._wire.framing import frame, frame_header, header_is_valid
from tfrecord_lite._wire.resync import find_header


@given(st.binary(min_size=12, max_size=3000), st.integers(0, 3000))
def test_find_header_agrees_with_checking_every_offset(blob: bytes, start: int) -> None:
    data = blob + frame(blob[:50]) if start % 2 else blob
    start = min(start, len(data))
    expected = next((p for p in range(start, len(data) - 11) if header_is_valid(data, p)), -1)
    assert find_header(data, start) == expected
    fits = (p for p in range(start, len(data) - 11) if header_is_valid(data, p) and _record_end(data, p) <= len(data))
    assert find_header(data, start, end=len(data)) == next(fits, -1)


def _record_end(data: bytes, p: int) -> int:
    return p + 16 + int.from_bytes(data[p : p + 8], "little")


def test_find_header_over_zero_pages_and_small_numbers() -> None:
    record = frame(b"payload")
    fillers = (
        bytes(70_000),
        np.arange(20_000, dtype=np.int64).tobytes(),
        np.arange(300_000, dtype=np.int64).tobytes(),  # past a 64 Ki-offset block, counters above 2**16
        np.random.default_rng(0).integers(0, 50, 30_000).astype(np.int64).tobytes(),
        np.zeros(9000, np.float32).tobytes(),
    )
    for filler in fillers:
        data = bytearray(filler) + record
        for end in (None, len(data)):
            assert find_header(data, 0, end=end) == len(filler)
            assert find_header(data, len(filler) + 1, end=end) == -1
        assert find_header(data, 0, end=len(data) - 1) == -1  # the record would run past the end


def test_find_header_with_the_end_known_agrees_with_checking_every_offset() -> None:
    """Small int64s pass the zero-byte cut at one offset in eight; a valid header whose record would
    run past the end is passed over when the end is known."""
    filler = np.random.default_rng(1).integers(0, 1 << 20, 40_000).astype(np.int64).tobytes()
    data = filler[:8000] + frame_header(1 << 30) + filler + frame(b"x" * 300)
    assert find_header(data, 0) == 8000
    for end in (len(data), len(data) - 5, 1 << 20, (1 << 30) + 8016, 100):
        fits = (p for p in range(len(data) - 11) if header_is_valid(data, p) and _record_end(data, p) <= end)
        assert find_header(data, 0, end=end) == next(fits, -1), end
