# Opening what users pass as a source or destination: a local path, a URL that
# fsspec understands (s3://, gs://, ..., imported only then), or a binary file
# object they already opened (which we then never close). Also the knobs that
# every I/O module shares: the accepted compression names, and sizes written as "4M".
from __future__ import annotations

import os
import re
from typing import IO, Any, Union, cast

PathOrFile = Union[str, "os.PathLike[str]", IO[bytes], Any]

COMPRESSIONS = ("", "gzip", "zlib")


def normalize_compression(compression: str | None, *, allow_auto: bool = False) -> str:
    """'' | 'gzip' | 'zlib' (| 'auto'), from TF-style spellings such as None, 'GZIP'."""
    allowed = COMPRESSIONS + (("auto",) if allow_auto else ())
    if compression is None:
        return ""
    if isinstance(compression, str) and compression.lower() in allowed:
        return compression.lower()
    shown = ", ".join(repr(c) for c in (None,) + allowed)
    raise ValueError(f"unknown compression {compression!r}: use one of {shown} (case-insensitive)")


def is_file_object(obj: Any) -> bool:
    return hasattr(obj, "read") or hasattr(obj, "write")


def display_name(obj: Any) -> str | None:
    """A name for error messages: the path, or a file object's name when it has one."""
    if isinstance(obj, (str, os.PathLike)):
        return os.fspath(obj)
    name = getattr(obj, "name", None)
    return name if isinstance(name, str) else None


def open_binary(target: PathOrFile, mode: str) -> tuple[IO[bytes], bool]:
    """(binary file, whether we own it) for a path, URL or open file; mode 'rb', 'wb' or 'ab'."""
    if is_file_object(target):
        return cast(IO[bytes], target), False
    path = os.fspath(cast("str | os.PathLike[str]", target))
    if isinstance(path, str) and "://" in path and not path.startswith("file://"):
        try:
            import fsspec  # optional extra "remote"
        except ImportError:
            raise ImportError(f"reading {path!r} needs fsspec: pip install 'tfrlite[remote]'") from None
        return fsspec.open(path, mode).open(), True
    if isinstance(path, str) and path.startswith("file://"):
        path = path[len("file://") :]
    return open(path, mode), True


_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}


def size_in_bytes(value: str | int) -> int:
    """'100M', '1.5G', '64k', '4096' (or an int) -> bytes (binary units); ValueError otherwise."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", value) if isinstance(value, str) else None
    if not m or m.group(2).lower() not in _SIZE_UNITS or float(m.group(1)) <= 0:
        raise ValueError(f"expected a size such as 4096, 64k, 100M or 1G, got {value!r}")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])
