# The DataFrames of the Spark tests as plain Python (no pyspark), so the TensorFlow test of the
# environment without Spark checks the files Spark wrote from them (tests/data/spark/, made by
# `python -m tests.spark.make_files` in the engines environment) against the same rows.
from __future__ import annotations

from typing import Any

# every Spark type the "tfrecord" source maps, as scalars and arrays, with nulls and empty lists;
# floats and doubles exact in float32, since a FloatList holds float32
TYPES_DDL = (
    "l long, i int, s short, b byte, t boolean, f float, d double, str string, bin binary, "
    "al array<long>, ai array<int>, at array<boolean>, af array<float>, ad array<double>, "
    "astr array<string>, abin array<binary>"
)
TYPES_ROWS: list[tuple[Any, ...]] = [
    (
        1,
        -2,
        3,
        -4,
        True,
        1.5,
        -2.25,
        "été",
        b"\x00\xff",
        [1, 2],
        [-3],
        [True, False],
        [0.5],
        [1.0, 2.0],
        ["a", "bc"],
        [b"x"],
    ),
    (
        -(2**62),
        2**31 - 1,
        -(2**15),
        127,
        False,
        -0.0,
        2.0**40,
        "",
        b"",
        [],
        [0, 7],
        [],
        [1.25, -1.5],
        [],
        [""],
        [b"", b"\x01"],
    ),
    (None,) * 16,
]

# a SequenceExample per row: a context of two features, two feature lists (steps of varied length)
SEQUENCE_DDL = "id long, label string, tokens array<array<long>>, frames array<array<float>>"
SEQUENCE_ROWS: list[tuple[Any, ...]] = [
    (0, "a", [[1, 2], [3], []], [[0.5, 1.5]]),
    (1, "b", [[4]], [[2.0], [], [3.0, 4.0, 5.0]]),
    (2, None, [], None),
]

# recordType ByteArray: each row one raw record
BYTE_ROWS: list[tuple[Any, ...]] = [(b"first",), (b"",), (bytes(range(256)),)]
