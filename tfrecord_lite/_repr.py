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
    return f"[{names[0]!r}, ..., {names[-1]!r}] ({plural(len(names), 'file')})"


def shown_keys(keys: Iterable[str] | None) -> str | None:
    """Spec keys as a short list (None without a spec)."""
    if keys is None:
        return None
    names = list(keys)
    if len(names) <= _MAX_ITEMS:
        return repr(names)
    return repr(names[:_MAX_ITEMS])[:-1] + f", ...] ({len(names)} keys)"


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """`1 file`, `0 files`, `2 classes`: a count and its noun, singular only for one. The plural
    is `noun` + 's' ('es' after s, x, ch, sh) unless `nouns` spells it."""
    if n == 1:
        return f"{n} {noun}"
    if nouns is None:
        nouns = noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")
    return f"{n} {nouns}"


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


_BYTES_SHOWN = 16  # bytes a long bytes value shows of itself
_VALUES_SHOWN = 8  # values a long list or row shows


def shown_value(value: Any) -> str:
    """A value's repr, kept short: long bytes as their first bytes and length, long lists and
    arrays (as lists) as their first items and a count; anything else as its repr."""
    if isinstance(value, (bytes, bytearray)) and len(value) > _BYTES_SHOWN:
        return f"{bytes(value[:_BYTES_SHOWN])!r}...({len(value)} bytes)"
    if isinstance(value, (list, tuple)):
        items = [shown_value(v) for v in value[:_VALUES_SHOWN]]
        more = f", ... ({len(value)} items)" if len(value) > _VALUES_SHOWN else ""
        return f"[{', '.join(items)}{more}]"
    return repr(value)


def shown_items(items: Sequence[Any], limit: int = 3) -> str:
    """The first `limit` items' reprs and how many there are in all."""
    shown = ", ".join(repr(item) for item in items[:limit])
    return f"[{shown}, ... ({len(items)} in all)]" if len(items) > limit else f"[{shown}]"
