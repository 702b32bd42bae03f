"""How the library's objects show themselves: `ClassName(what, detail, ..., state)`,
with the path(s), compression, count when known, open / closed and spec keys.
Long lists (many shards, many keys) are shortened to their ends and a count, so a
repr stays one readable line in a notebook or a log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from tfrecord_lite._redact import redact

_MAX_ITEMS = 6


def shown_paths(paths: Sequence[Any]) -> str:
    """One path as its repr; a few as a list; many as the first and last and how many."""
    names = [redact(p) for p in paths]
    if len(names) == 1:
        return repr(names[0])
    if len(names) <= 3:
        return repr(names)
    return f"[{names[0]!r}, ..., {names[-1]!r}] ({len(names)} files)"


def shown_keys(keys: Iterable[str] | None) -> str | None:
    """Spec keys as a short list (None without a spec)."""
    if keys is None:
        return None
    names = list(keys)
    if len(names) <= _MAX_ITEMS:
        return repr(names)
    return repr(names[:_MAX_ITEMS])[:-1] + f", ...] ({len(names)} keys)"


def count(n: int | None, unit: str = "records") -> str | None:
    """`12 records`, `1 record written`; None when the count is not known."""
    if n is None:
        return None
    return f"{n} {unit.replace('records', 'record', 1) if n == 1 else unit}"


def compression(kind: str | None) -> str | None:
    return f"compression={kind!r}" if kind else None


def describe(name: str, *parts: str | None) -> str:
    """`name(part, part, ...)`, leaving out the parts that are None or empty."""
    return f"{name}({', '.join(p for p in parts if p)})"
