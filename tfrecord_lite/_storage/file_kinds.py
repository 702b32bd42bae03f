"""What kind of record file each input is, from its first bytes: plain (indexable), GZIP or ZLIB.

Strategy: one read of a record header's worth of bytes per file (sniff_file); an object of a store
is asked for that range only, and the objects of a list are asked concurrently (one round trip
each). A compression given by the caller is held to those bytes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tfrecord_lite._compression.kinds import read_as
from tfrecord_lite._storage.files import sniff_file
from tfrecord_lite._storage.locations import StorageOptions, is_url, redact


def file_kind(path: str, compression: str, storage_options: StorageOptions = None) -> str:
    """'' for an uncompressed file (indexable), else its compression: what its first bytes say, or
    the one given, held to them (ValueError naming both); an unknown kind is read as uncompressed,
    and iter_records reports it with its path."""
    return read_as(compression, sniff_file(path, storage_options), redact(path))


def file_kinds(paths: list[str], compression: str, storage_options: StorageOptions) -> list[str]:
    """file_kind of each file; objects in a store are asked concurrently (one round trip each)."""
    if not any(is_url(p) for p in paths):
        return [file_kind(p, compression) for p in paths]
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda p: file_kind(p, compression, storage_options), paths))
