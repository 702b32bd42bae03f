"""Feature values as HTML: numbers, text, bytes and arrays, each escaped and kept short.

Strategy: what a decoder gives without a spec (an int64 or float32 array, a list of bytes, None
for a Feature with no kind) is shown inline up to a few items; the rest of a long array or text
sits in a `<details>` element the reader opens, itself capped, so a record of a million values
never becomes megabytes of HTML. Bytes show as text when they decode as UTF-8 and print, else as
a short hex preview with their length. Every string passes through `html.escape`.
"""

from __future__ import annotations

import html
from typing import Any

INLINE_ITEMS = 8  # values shown before the expander
EXPANDED_ITEMS = 256  # values the expander holds at most
INLINE_CHARS = 120  # characters of one text value shown before the expander
EXPANDED_CHARS = 4096
HEX_BYTES = 32  # bytes of a binary value shown as hex


def esc(text: object) -> str:
    """`text` escaped for HTML content and quoted attribute values."""
    return html.escape(str(text), quote=True)


def _printable(text: str) -> bool:
    return all(ch.isprintable() or ch in "\n\t\r" for ch in text)


def text_of(value: bytes) -> str | None:
    """`value` as text when it is UTF-8 that prints, else None."""
    try:
        text = bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if _printable(text) else None


def _expander(shown: str, rest: str, summary: str) -> str:
    return f'{shown}<details class="more"><summary>{esc(summary)}</summary>{rest}</details>'


def bytes_html(value: bytes) -> str:
    """One bytes value: its text (long text behind an expander), or a hex preview and its length."""
    text = text_of(value)
    if text is None:
        data = bytes(value[:HEX_BYTES])
        more = "…" if len(value) > HEX_BYTES else ""
        return f'<code class="hex">{data.hex(" ")}{more}</code> <span class="note">({len(value)} bytes)</span>'
    if len(text) <= INLINE_CHARS:
        return f'<span class="text">{esc(text)}</span>'
    rest = text[INLINE_CHARS:EXPANDED_CHARS] + ("…" if len(text) > EXPANDED_CHARS else "")
    return _expander(
        f'<span class="text">{esc(text[:INLINE_CHARS])}…</span>',
        f'<span class="text">{esc(rest)}</span>',
        f"{len(text)} characters",
    )


def _number(value: Any) -> str:
    return esc(repr(float(value)) if isinstance(value, float) else value)


def items_html(items: list[str], total: int) -> str:
    """Rendered items joined; past INLINE_ITEMS, the rest (up to EXPANDED_ITEMS) behind an expander."""
    shown = ", ".join(items[:INLINE_ITEMS])
    if total <= INLINE_ITEMS:
        return shown
    rest = ", ".join(items[INLINE_ITEMS:EXPANDED_ITEMS])
    if total > EXPANDED_ITEMS:
        rest += f", … ({total - EXPANDED_ITEMS} more)"
    return _expander(shown + ", …", rest, f"{total} values")


def array_html(values: Any) -> str:
    """A numeric array (any shape, shown flat with its shape when not 1-D)."""
    flat = values.reshape(-1)
    items = [_number(v) for v in flat[:EXPANDED_ITEMS].tolist()]
    shape = "" if values.ndim == 1 else f' <span class="note">shape {esc(tuple(values.shape))}</span>'
    return f'<span class="num">{items_html(items, int(flat.size))}</span>{shape}'


def value_html(value: Any) -> str:
    """A decoded feature value as HTML: an array, a list of bytes, a scalar, None, or its repr."""
    if value is None:
        return '<span class="note">(no value kind)</span>'
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes_html(bytes(value))
    if isinstance(value, (bool, int, float, str)):
        return esc(value)
    if hasattr(value, "dtype") and hasattr(value, "reshape"):
        if value.dtype.kind in "SO":
            return value_html(value.reshape(-1).tolist())
        return array_html(value)
    if isinstance(value, (list, tuple)):
        if len(value) == 1 and isinstance(value[0], (bytes, bytearray, memoryview)):
            return bytes_html(bytes(value[0]))
        items = [value_html(v) for v in value[:EXPANDED_ITEMS]]
        return f'<span class="list">{items_html(items, len(value))}</span>'
    return f"<code>{esc(_short_repr(value))}</code>"


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= INLINE_CHARS else text[:INLINE_CHARS] + "…"
