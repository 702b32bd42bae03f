"""What kind of record file each input is, from its first bytes: plain (indexable), GZIP or ZLIB.

Strategy: one read of a record header's worth of bytes per file, recognised by the wire layer's
sniffer; an object of a store is asked for that range only, and the objects of a list are asked
concurrently (one round trip each). A compression given by the caller is taken as it is.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tfrecord_lite._storage.locations import StorageOptions, is_url, split_options
from tfrecord_lite._storage.remote import RemoteObject
from tfrecord_lite._wire.framing import HEADER_SIZE
from tfrecord_lite._wire.sniff import sniff_compression


def sniffed_compression(path: str, storage_options: StorageOptions = None) -> str:
    """'' | 'gzip' | 'zlib' | 'unknown': what the first bytes of a file (or an object of a store) say."""
    if is_url(path):
        head = RemoteObject(path, *split_options(storage_options)).read_range(0, HEADER_SIZE)
    else:
        with open(path, "rb") as f:
            head = f.read(HEADER_SIZE)
    return sniff_compression(head)


def file_kind(path: str, compression: str, storage_options: StorageOptions = None) -> str:
    """'' for an uncompressed file (indexable), else its compression."""
    if compression != "auto":
        return compression
    kind = sniffed_compression(path, storage_options)
    return "" if kind == "unknown" else kind  # iter_records reports the unknown kind with its path


def file_kinds(paths: list[str], compression: str, storage_options: StorageOptions) -> list[str]:
    """file_kind of each file; objects in a store are asked concurrently (one round trip each)."""
    if not any(is_url(p) for p in paths):
        return [file_kind(p, compression) for p in paths]
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda p: file_kind(p, compression, storage_options), paths))
