"""Apache Arrow adapter (imports pyarrow; `import tfrecord_lite` never imports this module).

Strategy: decoding is done by the batch decoder, which hands back flat columns (flat:
a flat run of values, offsets, presence); this module only wraps those buffers in Arrow
arrays of the types the spec asks for (tfx-bsl's types without one). Encoding goes the
other way: each Arrow column is flattened to numpy values plus per-row offsets, checked
for a type an Example can hold, and the records are encoded row by row by the codec.
The code is _arrow/batches.py's, where the engine adapters and the command line
use it too; this module is its public face, and the one that imports pyarrow when it is
imported (the modules of _arrow import it at their first use: _arrow/lazy.py).
"""

from __future__ import annotations

try:
    import pyarrow  # noqa: F401  # imported here so that a missing pyarrow is said at once
except ImportError as exc:  # pragma: no cover - exercised where pyarrow is missing
    raise ImportError("tfrecord_lite.arrow needs pyarrow: pip install 'tfrlite[arrow]'") from exc

from tfrecord_lite._arrow.batches import (
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
