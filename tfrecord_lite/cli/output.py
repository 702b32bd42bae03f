"""How records and reports look on the terminal and as JSON lines: a record decoded for
display (Example, SequenceExample or raw bytes), each feature's values shortened to
a readable line (text quoted, binary as size + hex with the image format named,
floats to 7 digits), the JSON form of the same (bytes as text or base64, NaN and
infinities as strings), and `verify`'s lines. Presentation only: the commands and
the demo call these.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from tfrecord_lite._compression.kinds import GZIP
from tfrecord_lite._datasets.schema import Decoded, value_kind
from tfrecord_lite._html.images import sniff_image_format
from tfrecord_lite._records.verify import VerifyReport
from tfrecord_lite._repr import plural


def _kind(value: bytes) -> str:
    """The format a binary value starts like, as a prefix of its view ("PNG "), or ""."""
    if GZIP.starts(value):
        return f"{GZIP.label} "
    image = sniff_image_format(value)
    return f"{image.upper()} " if image else ""


def printable(text: str) -> str:
    """Text from a file (a feature key, a file name) safe to print: as it is when every character
    is printable, else quoted with the others escaped (\u001b), so no escape sequence reaches the
    terminal and the escaped form cannot pass for another key (one that starts with a quote is
    quoted too)."""
    if text.isprintable() and not text.startswith('"'):
        return text
    return '"' + "".join(c if c.isprintable() and c not in '"\\' else json.dumps(c)[1:-1] for c in text) + '"'


def terminal_safe(line: str) -> str:
    """A line of the command's own (an error, a log line) that may quote a file name or a key:
    every character that is not printable escaped (\u001b), so no escape sequence reaches the
    terminal, whichever part of the line it came from."""
    if line.isprintable():
        return line
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in line)


def describe_bytes(value: bytes, max_chars: int = 60) -> str:
    """A safe one-line view of a bytes value: quoted text when it is printable UTF-8, else size + hex."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(c.isprintable() or c in "\t\n\r" for c in text):  # no terminal escapes
        shown = json.dumps(text if max_chars <= 0 or len(text) <= max_chars else text[:max_chars], ensure_ascii=False)
        return shown if max_chars <= 0 or len(text) <= max_chars else f"{shown}… ({len(text)} chars)"
    kind = _kind(value)
    n = len(value) if max_chars <= 0 else min(len(value), max(8, max_chars // 4))
    more = "…" if n < len(value) else ""
    return f"<{kind}{len(value)} bytes: {value[:n].hex()}{more}>"


def _float_text(x: float) -> str:
    return f"{x:.7g}"


def render_values(value: Any, max_values: int = 10, max_chars: int = 60) -> str:
    """'<kind>[n]  v1 v2 … (n values)' for one decoded feature; limits <= 0 mean no elision."""
    kind = value_kind(value)
    if kind is None:
        return "(no kind set)"
    items = list(value)
    shown = items if max_values <= 0 else items[:max_values]
    if kind == "bytes":
        parts = [describe_bytes(bytes(v), max_chars) for v in shown]
    elif kind == "float":
        parts = [_float_text(float(v)) for v in shown]
    else:
        parts = [str(int(v)) for v in shown]
    tail = f" … ({len(items)} values)" if len(shown) < len(items) else ""
    return f"{kind}[{len(items)}]  " + " ".join(parts) + tail


def _json_number(x: float) -> Any:
    return x if math.isfinite(x) else ("NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity"))


def json_values(value: Any, max_values: int = 10, max_chars: int = 60) -> dict[str, Any]:
    """{"kind", "values"[, "elided"]} for one decoded feature, JSON-safe.

    Bytes become a string when they are UTF-8 text, else {"base64", "size"}; a
    value or list cut short is marked with "elided" (limits <= 0: nothing is cut).
    """
    kind = value_kind(value)
    if kind is None:
        return {"kind": None, "values": []}
    items = list(value)
    shown = items if max_values <= 0 else items[:max_values]
    out: dict[str, Any] = {"kind": kind}
    if kind == "bytes":
        values: list[Any] = []
        for v in shown:
            b = bytes(v)
            try:
                text: str | None = b.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            cut = max_chars > 0 and len(b) > max_chars
            if text is not None and not cut:
                values.append(text)
            elif text is not None:
                values.append({"text": text[:max_chars], "size": len(b), "elided": True})
            else:
                entry: dict[str, Any] = {
                    "base64": base64.b64encode(b[:max_chars] if cut else b).decode(),
                    "size": len(b),
                }
                if cut:
                    entry["elided"] = True
                values.append(entry)
        out["values"] = values
    elif kind == "float":
        out["values"] = [_json_number(float(v)) for v in shown]
    else:
        out["values"] = [int(v) for v in shown]
    if len(shown) < len(items):
        out["elided"] = len(items) - len(shown)
    return out


def _feature_lines(features: dict[str, Any], indent: str, max_values: int, max_chars: int) -> list[str]:
    keys = {k: printable(k) for k in features}
    width = max((len(k) for k in keys.values()), default=0)
    return [
        f"{indent}{keys[k].ljust(width)}  {render_values(v, max_values, max_chars)}"
        for k, v in sorted(features.items())
    ]


def _message_lines(fields: dict[str, Any], max_chars: int) -> list[str]:
    """A message's fields, one a line, each value as JSON cut to `max_chars` (<= 0: whole)."""
    texts = {printable(k): json.dumps(v, ensure_ascii=False) for k, v in fields.items()}
    width = max((len(k) for k in texts), default=0)
    cut = {k: v if max_chars <= 0 or len(v) <= max_chars else v[:max_chars] + "…" for k, v in texts.items()}
    return [f"  {k.ljust(width)}  {terminal_safe(v)}" for k, v in cut.items()]


def render_record(dec: Decoded, title: str, max_values: int = 10, max_chars: int = 60) -> str:
    """The readable, multi-line view `head` / `cat` print for one record."""
    title = printable(title)
    if dec.kind == "raw":
        why = f" (not an Example: {dec.error})" if dec.error else ""
        return f"{title}{why}\n  {describe_bytes(dec.raw, max_chars)}"
    if dec.kind in ("example", "event"):
        lines = _feature_lines(dec.features, "  ", max_values, max_chars) or ["  (no features)"]
        return "\n".join([title + (" (TensorBoard Event)" if dec.kind == "event" else "")] + lines)
    if dec.kind == "message":
        return "\n".join([title] + (_message_lines(dec.features, max_chars) or ["  (no fields set)"]))
    if dec.kind == "elwc":
        lines = [f"{title} (ExampleListWithContext)", "  context:"]
        lines += _feature_lines(dec.features, "    ", max_values, max_chars) or ["    (none)"]
        lines.append(f"  examples: {len(dec.examples)}")
        for i, example in enumerate(dec.examples):
            lines.append(f"    [{i}]")
            lines += _feature_lines(example, "      ", max_values, max_chars) or ["      (no features)"]
        return "\n".join(lines)
    lines = [f"{title} (SequenceExample)", "  context:"]
    lines += _feature_lines(dec.features, "    ", max_values, max_chars) or ["    (none)"]
    lines.append("  feature_lists:")
    for key, steps in sorted(dec.feature_lists.items()):
        lines.append(f"    {printable(key)}  {len(steps)} steps")
        shown = steps if max_values <= 0 else steps[:max_values]
        lines += [f"      [{i}] {render_values(v, max_values, max_chars)}" for i, v in enumerate(shown)]
        if len(shown) < len(steps):
            lines.append(f"      … ({len(steps) - len(shown)} more steps)")
    return "\n".join(lines)


def record_json(dec: Decoded, path: str, index: int, max_values: int = 10, max_chars: int = 60) -> dict[str, Any]:
    """The JSON object `head --json` prints for one record."""
    out: dict[str, Any] = {"file": path, "index": index, "type": dec.kind}
    if dec.kind == "raw":
        out["size"] = len(dec.raw)
        out["base64"] = base64.b64encode(dec.raw if max_chars <= 0 else dec.raw[:max_chars]).decode()
        if dec.error:
            out["error"] = dec.error
        return out
    if dec.kind == "message":
        out["message"] = dec.features
        return out
    feats = {k: json_values(v, max_values, max_chars) for k, v in sorted(dec.features.items())}
    if dec.kind in ("example", "event"):
        out["features"] = feats
    elif dec.kind == "elwc":
        out["context"] = feats
        out["examples"] = [
            {k: json_values(v, max_values, max_chars) for k, v in sorted(ex.items())} for ex in dec.examples
        ]
    else:
        out["context"] = feats
        out["feature_lists"] = {
            k: [json_values(v, max_values, max_chars) for v in steps] for k, steps in sorted(dec.feature_lists.items())
        }
    return out


def format_report(path: str, report: VerifyReport, max_listed: int = 20) -> str:
    """`verify`'s lines for one file: 'OK  path  N records', or 'BAD ...' and a line per bad record
    (the first `max_listed` of them; <= 0 lists all)."""
    path = printable(path)
    if report.ok:
        return f"OK   {path}  {plural(report.records, 'record')}"
    where = " (offsets in the uncompressed stream)" if report.compression else ""
    bad = report.bad_records
    lines = [f"BAD  {path}  {plural(report.records, 'good record')}, {len(bad)} bad{where}:"]
    listed = bad if max_listed <= 0 else bad[:max_listed]
    lines += [f"     record #{number}, offset {offset}: {reason}" for number, offset, reason in listed]
    if len(listed) < len(bad):
        lines.append(f"     ... {len(bad) - len(listed)} more (--all lists every one)")
    return "\n".join(lines)
