"""Apache Arrow adapter (imports pyarrow; `import tfrecord_lite` never imports this module):
Examples decoded into Arrow record batches and tables, Arrow data written as Examples.

Strategy: the work is the library's (_datasets/arrow_batches.py, which the engine adapters and
the command line use too); this module is its public face and adds nothing to it.
"""

from __future__ import annotations

from tfrecord_lite._datasets.arrow_batches import (
    arrow_type,
    decode_arrow,
    decode_sequence_arrow,
    encode_arrow,
    iter_arrow_batches,
    read_arrow,
    write_arrow,
)

__all__ = [
    "arrow_type",
    "decode_arrow",
    "decode_sequence_arrow",
    "encode_arrow",
    "iter_arrow_batches",
    "read_arrow",
    "write_arrow",
]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)
