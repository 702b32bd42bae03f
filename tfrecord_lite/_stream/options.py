"""The reader options: one name, type, default and meaning for every function and class that reads
records, written down here once.

Every reader takes its input as `source` and these options as keywords:

- `compression`: the compression of what is read: "auto" (recognised from the content), None or ""
  (none), "gzip" or "zlib" (any case, as TensorFlow spells them);
- `verify`: check every length and payload CRC (True) or trust the bytes (False);
- `on_error`: what a damaged record does: "raise", "skip" (logged as a warning), or a callable given
  the error;
- `max_skipped`: with on_error="skip" or a callable, raise once more than this many damaged spans
  were skipped in one pass (None: no limit);
- `storage_options`: fsspec's options for a URL (credentials, endpoint, ...) or the fsspec filesystem
  to use;
- `max_record_bytes`: the longest record a reader holds in memory; a longer length field is damage.

Writers name their compression the same way (None: written uncompressed) and take `storage_options`.
`ReadOptions` types the six for code that hands them on (`**options: Unpack[ReadOptions]`);
`READ_OPTIONS` is the table the vocabulary test holds every public reader to. docs/conventions.md
explains the whole vocabulary."""

from __future__ import annotations

from typing import Any, TypedDict

from tfrecord_lite._storage.locations import StorageOptions
from tfrecord_lite._stream.damage import OnError
from tfrecord_lite._stream.scanner import MAX_RECORD_BYTES

Compression = str | None  # "auto" (readers only), None / "" (none), "gzip", "zlib"; any case


class ReadOptions(TypedDict, total=False):
    """The reader options, for code that hands them on to a reader."""

    compression: Compression
    verify: bool
    on_error: OnError
    max_skipped: int | None
    storage_options: StorageOptions
    max_record_bytes: int


# name -> (the annotation every reader writes, its default)
READ_OPTIONS: dict[str, tuple[str, Any]] = {
    "compression": ("Compression", "auto"),
    "verify": ("bool", True),
    "on_error": ("OnError", "raise"),
    "max_skipped": ("int | None", None),
    "storage_options": ("StorageOptions", None),
    "max_record_bytes": ("int", MAX_RECORD_BYTES),
}


__all__ = [
    "MAX_RECORD_BYTES",
    "READ_OPTIONS",
    "Compression",
    "OnError",
    "ReadOptions",
    "StorageOptions",
]
