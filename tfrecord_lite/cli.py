# The `tfrecord-lite` command line (also `python -m tfrecord_lite`).
#
# Strategy: argparse sub-commands, each a thin `cmd_*` function over reusable
# operations defined here (expand_inputs, verify_file, collect_schema,
# render_record, ...) that the demo calls too. Inputs are files, globs or
# directories, compression is recognised from the content. Expected failures
# (missing files, corrupt data, bad options) end as one line
# `tfrecord-lite: error: ...` with exit status 1 (data) or 2 (usage); a
# traceback means a bug. Progress bars come from tqdm, only when stderr is a
# terminal, only for jobs that run longer than a second, and only if tqdm is
# installed (imported lazily; without it the command runs the same, silently).
from __future__ import annotations

import argparse
import base64
import contextlib
import glob
import itertools
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from ._codec import decode_example, decode_sequence_example
from ._errors import DecodeError, TFRecordError
from ._files import normalize_compression
from ._framing import HEADER_SIZE
from ._reader import iter_records, sniff_compression
from ._sharded import COMPRESSION_SUFFIX, open_shard_writer, replacing_shards, shard_suffix
from ._sidecar import SIDECAR_SUFFIX
from ._verify import VerifyReport, verify_file
from ._writer import TFRecordWriter

PROG = "tfrecord-lite"
EXIT_DATA = 1  # the data is bad (corrupt record, undecodable image, verification failed)
EXIT_USAGE = 2  # the command is wrong (unknown option, missing file, bad value)

# Files in a directory that are never TFRecord data (sidecars, label maps, text indexes, notes).
_NOT_RECORDS = (SIDECAR_SUFFIX, ".json", ".idx", ".index", ".txt", ".csv", ".md", ".tmp", ".lock", ".py")
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "PNG"), (b"\xff\xd8\xff", "JPEG"), (b"GIF8", "GIF"), (b"BM", "BMP"),
          (b"RIFF", "RIFF/WebP"), (b"\x1f\x8b", "GZIP"))  # fmt: skip


class UsageError(Exception):
    """A problem with the command line itself (exit status 2)."""


# ---------------------------------------------------------------- inputs


def expand_inputs(specs: Sequence[str], stdin: bool = False) -> list[str]:
    """Files for the given files, globs and directories, in order (directories and globs sorted).

    A directory stands for the record files directly inside it (index sidecars,
    label maps, text indexes and hidden files are left out); '-' is standard input
    where `stdin` allows it. Raises UsageError for a path that does not exist or a
    pattern that matches nothing.
    """
    out: list[str] = []
    for spec in specs:
        if spec == "-":
            if not stdin:
                raise UsageError("this command cannot read standard input ('-'): give files")
            out.append(spec)
        elif os.path.isdir(spec):
            found = sorted(
                os.path.join(spec, n)
                for n in os.listdir(spec)
                if not n.startswith(".") and not n.endswith(_NOT_RECORDS) and os.path.isfile(os.path.join(spec, n))
            )
            if not found:
                raise UsageError(f"no TFRecord files in directory {spec}")
            out += found
        elif os.path.exists(spec) or "://" in spec:
            out.append(spec)
        elif glob.has_magic(spec):
            found = sorted(p for p in glob.glob(spec) if os.path.isfile(p) and not p.endswith(_NOT_RECORDS))
            if not found:
                raise UsageError(f"no files match {spec}")
            out += found
        else:
            raise UsageError(f"no such file or directory: {spec}")
    return out


def _compression_arg(value: str) -> str:
    """argparse type: auto | none | gzip | zlib (any case) -> the library's spelling."""
    if value.lower() == "none":
        return ""
    try:
        return normalize_compression(value, allow_auto=True)
    except ValueError:
        raise argparse.ArgumentTypeError(f"unknown compression {value!r} (use auto, none, gzip or zlib)") from None


def _out_compression_arg(value: str) -> str:
    result = _compression_arg(value)
    if result == "auto":
        raise argparse.ArgumentTypeError("an output compression must be none, gzip or zlib")
    return result


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return n


_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}


def parse_size(value: str) -> int:
    """'100M', '1.5G', '64k', '4096' -> bytes (binary units)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", value)
    if not m or m.group(2).lower() not in _SIZE_UNITS or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"expected a size such as 4096, 64k, 100M or 1G, got {value!r}")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


# ---------------------------------------------------------------- progress


def _tqdm(quiet: bool) -> Any:
    """tqdm's class when a bar should be shown (stderr is a terminal, tqdm installed), else None."""
    if quiet or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


def progress(
    iterable: Iterable[Any], total: int | None = None, desc: str = "", unit: str = "rec", quiet: bool = False
) -> Iterable[Any]:
    """`iterable` wrapped in a tqdm bar when stderr is a terminal and tqdm is installed; else itself.

    The bar appears only once the job has run for a second, so short commands stay clean.
    """
    tqdm = _tqdm(quiet)
    if tqdm is None:
        return iterable
    return tqdm(
        iterable, total=total or None, desc=desc, unit=unit, delay=1.0, leave=False, file=sys.stderr, dynamic_ncols=True
    )


# ---------------------------------------------------------------- showing records


def describe_bytes(value: bytes, max_chars: int = 60) -> str:
    """A safe one-line view of a bytes value: quoted text when it is printable UTF-8, else size + hex."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(c.isprintable() or c in "\t\n\r" for c in text):  # no terminal escapes
        shown = json.dumps(text if max_chars <= 0 or len(text) <= max_chars else text[:max_chars], ensure_ascii=False)
        return shown if max_chars <= 0 or len(text) <= max_chars else f"{shown}… ({len(text)} chars)"
    kind = next((name + " " for magic, name in _MAGIC if value.startswith(magic)), "")
    n = len(value) if max_chars <= 0 else min(len(value), max(8, max_chars // 4))
    more = "…" if n < len(value) else ""
    return f"<{kind}{len(value)} bytes: {value[:n].hex()}{more}>"


def _kind(value: Any) -> str | None:
    """'int64' | 'float' | 'bytes' | None (a Feature with no kind) for a value decoded without spec."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return "int64" if value.dtype.kind in "iu" else "float"
    return "bytes"


def _float_text(x: float) -> str:
    return f"{x:.7g}"


def render_values(value: Any, max_values: int = 10, max_chars: int = 60) -> str:
    """'<kind>[n]  v1 v2 … (n values)' for one decoded feature; limits <= 0 mean no elision."""
    kind = _kind(value)
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
    kind = _kind(value)
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


@dataclass
class Decoded:
    """A record decoded for display: an Example, a SequenceExample, or raw bytes that are neither."""

    kind: str  # "example" | "sequence" | "raw"
    features: dict[str, Any] = field(default_factory=dict)  # Example features or SequenceExample context
    feature_lists: dict[str, list[Any]] = field(default_factory=dict)
    raw: bytes = b""
    error: str = ""


def decode_record(record: bytes, mode: str = "auto") -> Decoded:
    """Decode a record for display. mode 'auto' tells a SequenceExample (it has feature lists)
    from an Example; 'example' / 'sequence' force one; 'raw' keeps the bytes."""
    if mode == "raw":
        return Decoded("raw", raw=record)
    try:
        if mode in ("auto", "sequence"):
            context, lists = decode_sequence_example(record)
            if lists or mode == "sequence":
                return Decoded("sequence", context, lists)
        return Decoded("example", decode_example(record))
    except DecodeError as err:
        return Decoded("raw", raw=record, error=err.reason)


def _feature_lines(features: dict[str, Any], indent: str, max_values: int, max_chars: int) -> list[str]:
    width = max((len(k) for k in features), default=0)
    return [f"{indent}{k.ljust(width)}  {render_values(v, max_values, max_chars)}" for k, v in sorted(features.items())]


def render_record(dec: Decoded, title: str, max_values: int = 10, max_chars: int = 60) -> str:
    """The readable, multi-line view `head` / `cat` print for one record."""
    if dec.kind == "raw":
        why = f" (not an Example: {dec.error})" if dec.error else ""
        return f"{title}{why}\n  {describe_bytes(dec.raw, max_chars)}"
    if dec.kind == "example":
        lines = _feature_lines(dec.features, "  ", max_values, max_chars) or ["  (no features)"]
        return "\n".join([title] + lines)
    lines = [f"{title} (SequenceExample)", "  context:"]
    lines += _feature_lines(dec.features, "    ", max_values, max_chars) or ["    (none)"]
    lines.append("  feature_lists:")
    for key, steps in sorted(dec.feature_lists.items()):
        lines.append(f"    {key}  {len(steps)} steps")
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
    feats = {k: json_values(v, max_values, max_chars) for k, v in sorted(dec.features.items())}
    if dec.kind == "example":
        out["features"] = feats
    else:
        out["context"] = feats
        out["feature_lists"] = {
            k: [json_values(v, max_values, max_chars) for v in steps] for k, steps in sorted(dec.feature_lists.items())
        }
    return out


# ---------------------------------------------------------------- reading many files


def _source(path: str) -> Any:
    """What to open for an input name: the path, or the standard input's bytes for '-'."""
    return sys.stdin.buffer if path == "-" else path


def iter_file_records(
    paths: Sequence[str], compression: str = "auto", verify: bool = True
) -> Iterator[tuple[str, int, bytes]]:
    """(path, index in file, record) over several files in order ('-' is standard input)."""
    for path in paths:
        with iter_records(_source(path), compression=compression, verify=verify) as records:
            for i, record in enumerate(records):
                yield path, i, record


def count_file(path: str, compression: str = "auto", verify: bool = False) -> int:
    """Number of records in one file (payload CRCs are checked only with `verify`)."""
    with iter_records(_source(path), compression=compression, verify=verify) as records:
        return sum(1 for _ in records)


# ---------------------------------------------------------------- verify


def _head_compression(path: str) -> str:
    """'' | 'gzip' | 'zlib' | 'unknown', from the first bytes of a local file."""
    with open(path, "rb") as f:
        return sniff_compression(f.read(HEADER_SIZE))


# ---------------------------------------------------------------- schema


@dataclass
class FeatureStats:
    """What `schema` learns about one key: kinds seen, value counts, how many records have it."""

    key: str
    section: str  # "features" | "context" | "feature_lists"
    kinds: set[str] = field(default_factory=set)
    present: int = 0
    min_values: int | None = None
    max_values: int | None = None

    def add(self, value: Any) -> None:
        """Count one occurrence; for a feature list, value counts are per step."""
        steps = value if self.section == "feature_lists" else [value]
        self.present += 1
        for v in steps:
            kind = _kind(v)
            self.kinds.add(kind or "none")
            n = 0 if v is None else len(v)
            self.min_values = n if self.min_values is None else min(self.min_values, n)
            self.max_values = n if self.max_values is None else max(self.max_values, n)


@dataclass
class Schema:
    """Feature statistics over the first `records` records of some files."""

    records: int = 0
    raw: int = 0  # records that are not Examples
    complete: bool = True  # every record was read
    features: dict[tuple[str, str], FeatureStats] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per key (section, key, kind, present %, min/max values), sorted by key."""
        out = []
        for (section, key), st in sorted(self.features.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            out.append(
                {
                    "key": key,
                    "section": section,
                    "kind": "|".join(sorted(st.kinds)),
                    "present": st.present,
                    "present_pct": round(100.0 * st.present / self.records, 2) if self.records else 0.0,
                    "min_values": st.min_values if st.min_values is not None else 0,
                    "max_values": st.max_values if st.max_values is not None else 0,
                }
            )
        return out


def collect_schema(records: Iterable[bytes], limit: int | None = 1000, mode: str = "auto") -> Schema:
    """Feature keys, kinds, min/max value counts and presence over the first `limit` records (None: all)."""
    schema = Schema()
    it = iter(records)
    for record in it:
        if limit is not None and schema.records >= limit:
            schema.complete = False
            break
        schema.records += 1
        dec = decode_record(record, mode)
        if dec.kind == "raw":
            schema.raw += 1
            continue
        groups = [("features" if dec.kind == "example" else "context", dec.features)]
        if dec.kind == "sequence":
            groups.append(("feature_lists", dec.feature_lists))
        for section, feats in groups:
            for key, value in feats.items():
                st = schema.features.get((section, key))
                if st is None:
                    st = schema.features[(section, key)] = FeatureStats(key, section)
                st.add(value)
    return schema


def format_schema(schema: Schema) -> str:
    """The table `schema` prints."""
    rows = schema.rows()
    sequence = any(r["section"] != "features" for r in rows)
    scope = "all" if schema.complete else "the first"
    head = [f"scanned {scope} {schema.records} records" + (f" ({schema.raw} not Examples)" if schema.raw else "")]
    if not rows:
        return "\n".join(head + ["no features"])
    names = [r["key"] + (" [list]" if r["section"] == "feature_lists" else "") for r in rows]
    width = max(len("key"), *(len(n) for n in names))
    kwidth = max(len("kind"), *(len(r["kind"]) for r in rows))
    unit = "values (per step for lists)" if sequence else "values"
    lines = head + [f"{'key'.ljust(width)}  {'kind'.ljust(kwidth)}  present  {unit}"]
    for name, r in zip(names, rows, strict=False):
        span = str(r["min_values"]) if r["min_values"] == r["max_values"] else f"{r['min_values']}..{r['max_values']}"
        lines.append(f"{name.ljust(width)}  {r['kind'].ljust(kwidth)}  {r['present_pct']:6.1f}%  {span}")
    return "\n".join(lines)


# ---------------------------------------------------------------- writing


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int | None, desc: str, unit: str = "B", quiet: bool = False) -> Any:
    """A tqdm bar to `update(n)` by hand (bytes by default), or a do-nothing stand-in (see `progress`)."""
    tqdm = _tqdm(quiet)
    if tqdm is None:
        return _NoBar()
    return tqdm(total=total or None, desc=desc, unit=unit, unit_scale=True, delay=1.0, leave=False, file=sys.stderr)


def _check_new(paths: Iterable[str], force: bool, inputs: Sequence[str]) -> None:
    """Refuse to overwrite existing outputs unless --force, and an input always."""
    sources = {os.path.abspath(p) for p in inputs}
    for p in paths:
        if os.path.abspath(p) in sources:
            raise UsageError(f"{p} is an input and an output: write to another file")
        if os.path.exists(p) and not force:
            raise UsageError(f"{p} already exists (use --force to overwrite it)")


def _replacing(
    prefix: str, suffix: str, force: bool, inputs: Sequence[str] = (), hint: str = "--force to replace them"
) -> contextlib.ExitStack[bool | None]:
    """replacing_shards, its refusals as usage errors (with the option that overrides them)."""
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(replacing_shards(prefix, suffix, replace=force, inputs=inputs))
    except FileExistsError as err:
        raise UsageError(f"{err} (use {hint})") from None
    except ValueError as err:
        raise UsageError(str(err)) from None
    return stack


def _shard_writer(args: argparse.Namespace, prefix: str) -> Any:
    """A ShardedWriter for --shards / --max-records / --max-bytes (one shard when none is given)."""
    if args.shards is None and args.max_records is None and args.max_bytes is None:
        args.shards = 1
    return open_shard_writer(prefix, args.shards, args.max_records, args.max_bytes, args.to or None, not args.no_index)


def _records(args: argparse.Namespace, paths: Sequence[str], desc: str) -> Iterator[bytes]:
    """The records of all inputs, with a progress bar on long jobs."""
    for _, _, record in progress(iter_file_records(paths, args.compression), None, desc, "rec", args.quiet):
        yield record


def _say(args: argparse.Namespace, text: str) -> None:
    """A summary line on stderr (data goes to stdout); silent with --quiet."""
    if not args.quiet:
        print(text, file=sys.stderr)


# ---------------------------------------------------------------- commands


def cmd_count(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    counts = {
        p: count_file(p, args.compression, verify=args.verify)
        for p in progress(paths, len(paths), "files", "file", args.quiet)
    }
    total = sum(counts.values())
    if args.json:
        print(json.dumps({"files": counts, "total": total}))
        return 0
    if args.per_file:
        width = len(str(total))
        for p, n in counts.items():
            print(f"{str(n).rjust(width)}  {p}")
    print(total)
    return 0


def _select(dec: Decoded, keys: list[str] | None) -> Decoded:
    if keys:
        dec.features = {k: v for k, v in dec.features.items() if k in keys}
        dec.feature_lists = {k: v for k, v in dec.feature_lists.items() if k in keys}
    return dec


def cmd_show(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    limit = args.n if args.command == "head" else None
    max_values, max_chars = (0, 0) if args.full else (args.max_values, args.max_chars)
    keys = [k for spec in args.keys or [] for k in spec.split(",") if k]
    shown = 0
    for index, (path, i, record) in enumerate(iter_file_records(paths, args.compression)):
        if index < args.skip:
            continue
        if limit is not None and shown >= limit:
            break
        dec = _select(decode_record(record, args.mode), keys)
        if args.json:
            print(json.dumps(record_json(dec, path, i, max_values, max_chars), ensure_ascii=False))
        else:
            print(("\n" if shown else "") + render_record(dec, f"{path} #{i}", max_values, max_chars))
        shown += 1
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    records = (r for _, _, r in iter_file_records(paths, args.compression))
    schema = collect_schema(
        progress(records, None, "records", "rec", args.quiet), None if args.all else args.n, args.mode
    )
    if args.json:
        print(
            json.dumps(
                {
                    "records": schema.records,
                    "complete": schema.complete,
                    "not_examples": schema.raw,
                    "features": schema.rows(),
                }
            )
        )
    else:
        print(format_schema(schema))
    return 0


def format_report(path: str, report: VerifyReport, max_listed: int = 20) -> str:
    """`verify`'s lines for one file: 'OK  path  N records', or 'BAD ...' and a line per bad record
    (the first `max_listed` of them; <= 0 lists all)."""
    if report.ok:
        return f"OK   {path}  {report.records} records"
    where = " (offsets in the uncompressed stream)" if report.compression else ""
    lines = [f"BAD  {path}  {report.records} good records, {len(report.bad)} bad{where}:"]
    listed = report.bad if max_listed <= 0 else report.bad[:max_listed]
    lines += [f"     offset {offset}: {reason}" for offset, reason in listed]
    if len(listed) < len(report.bad):
        lines.append(f"     ... {len(report.bad) - len(listed)} more (--all lists every one)")
    return "\n".join(lines)


def cmd_verify(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    plain = all(os.path.isfile(p) and _head_compression(p) == "" for p in paths)
    total = sum(os.path.getsize(p) for p in paths) if plain else None  # the bar counts uncompressed bytes
    bar = progress_bar(total, "verify", quiet=args.quiet)
    bad_files = 0
    try:
        for p in paths:
            report = verify_file(_source(p), args.compression, on_progress=bar.update)
            if not report.ok:
                bad_files += 1
            if args.json:
                print(
                    json.dumps(
                        {
                            "file": p,
                            "ok": report.ok,
                            "records": report.records,
                            "bad": [{"offset": o, "reason": r} for o, r in report.bad],
                        }
                    )
                )
            elif not report.ok or not args.quiet:
                print(format_report(p, report, 0 if args.all else 20))
    finally:
        bar.close()
    if bad_files:
        print(f"{PROG}: error: {bad_files} of {len(paths)} files have bad records", file=sys.stderr)
        return EXIT_DATA
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    from ._random_access import TFRecordFile
    from ._sidecar import write_text_index

    paths = expand_inputs(args.inputs)
    for p in progress(paths, len(paths), "index", "file", args.quiet):
        f = TFRecordFile(p, verify=not args.no_verify)
        try:
            line = f"{p}: {len(f)} records, index {f.index_path or '(in memory: the folder is read-only)'}"
        finally:
            f.close()
        if args.text or args.text_dir:
            folder = args.text_dir or os.path.dirname(p)
            out = os.path.join(folder, os.path.basename(p) + ".idx")
            os.makedirs(folder or ".", exist_ok=True)
            write_text_index(p, out)
            line += f", text index {out}"
        print(line)
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    _check_new([args.output], args.force, paths)
    out_compression = _output_compression(args.to, args.output)
    n = 0
    with TFRecordWriter(args.output, out_compression or None) as writer:
        for record in _records(args, paths, "merge"):
            writer.write(record)
            n += 1
    _say(args, f"wrote {n} records from {len(paths)} files to {args.output}")
    return 0


def cmd_reshard(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    n = 0
    with (
        _replacing(args.output, shard_suffix(args.to), args.force, paths),
        _shard_writer(args, args.output) as writer,
    ):
        for record in _records(args, paths, "reshard"):
            writer.write(record)
            n += 1
    out = list(writer.paths)
    _say(args, f"wrote {n} records to {len(out)} shards: {out[0] if out else ''}{' ...' if len(out) > 1 else ''}")
    return 0


def _output_compression(to: str | None, path: str) -> str:
    """--to if given, else from the output's extension (.gz -> gzip, .zz / .zlib -> zlib, else none)."""
    if to is not None:
        return to
    lower = path.lower()
    return "gzip" if lower.endswith(".gz") else "zlib" if lower.endswith((".zz", ".zlib")) else ""


def cmd_convert(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    if len(paths) > 1 or os.path.isdir(args.output) or args.output.endswith(os.sep):
        if args.to is None:
            raise UsageError("converting several files into a folder needs --to none|gzip|zlib")
        os.makedirs(args.output, exist_ok=True)
        stem = re.compile(r"(\.gz|\.zz|\.zlib)$", re.IGNORECASE)
        targets = [
            os.path.join(args.output, stem.sub("", os.path.basename(p)) + COMPRESSION_SUFFIX[args.to]) for p in paths
        ]
    else:
        targets = [args.output]
    _check_new(targets, args.force, paths)
    for src, dst in zip(paths, targets, strict=False):
        to = _output_compression(args.to, dst)
        with TFRecordWriter(dst, to or None) as writer:
            for record in _records(args, [src], "convert"):
                writer.write(record)
        _say(args, f"{src} -> {dst} ({to or 'uncompressed'}, {writer.records_written} records)")
    return 0


def parse_parts(text: str, what: str) -> list[float]:
    """'90/10', '0.8/0.1/0.1', '1000/200' -> [90.0, 10.0] ...; every part positive."""
    try:
        parts = [float(x) for x in text.split("/")]
    except ValueError:
        parts = []
    if not parts or any(p < 0 or not math.isfinite(p) for p in parts) or sum(parts) <= 0:
        raise UsageError(f"{what} must look like 90/10 or 80/10/10, got {text!r}")
    return parts


def split_sizes(total: int, ratio: list[float] | None, counts: list[float] | None) -> list[int]:
    """Records per part: ratios are rounded so the parts add up to `total`; counts are taken
    in order, and one count more than given parts ... the last part gets the rest."""
    if ratio is not None:
        cum, acc, bounds = sum(ratio), 0.0, [0]
        for r in ratio:
            acc += r
            bounds.append(round(total * acc / cum))
        return [b - a for a, b in itertools.pairwise(bounds)]
    assert counts is not None
    sizes = [int(c) for c in counts]
    if sum(sizes) > total:
        raise UsageError(f"--count asks for {sum(sizes)} records, but the inputs hold {total}")
    return sizes


def cmd_split(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs)
    ratio = parse_parts(args.ratio, "--ratio") if args.ratio else None
    counts = parse_parts(args.count, "--count") if args.count else None
    if counts is not None and any(c != int(c) for c in counts):
        raise UsageError(f"--count takes whole numbers, got {args.count!r}")
    n_parts = len(ratio or counts or [])
    names = (
        args.names.split(",")
        if args.names
        else (["train", "val", "test"][:n_parts] if n_parts <= 3 else [f"part{i}" for i in range(n_parts)])
    )
    if len(names) != n_parts or len(set(names)) != n_parts:
        raise UsageError(f"--names needs {n_parts} different names for {n_parts} parts, got {args.names!r}")
    total = sum(count_file(p, args.compression) for p in paths)
    sizes = split_sizes(total, ratio, counts)
    folder = os.path.isdir(args.output) or args.output.endswith(("/", os.sep))
    ext = shard_suffix(args.to)
    targets = [os.path.join(args.output, n + ext) if folder else f"{args.output}-{n}{ext}" for n in names]
    _check_new(targets, args.force, paths)
    part = np.repeat(np.arange(n_parts), sizes)
    part = np.concatenate([part, np.full(total - len(part), -1)])  # --count may leave records out
    if args.shuffle:
        np.random.default_rng(args.seed).shuffle(part)
    if folder:
        os.makedirs(args.output, exist_ok=True)
    writers = [TFRecordWriter(t, args.to or None) for t in targets]
    try:
        for k, record in enumerate(_records(args, paths, "split")):
            if k < total and part[k] >= 0:
                writers[part[k]].write(record)
    finally:
        for w in writers:
            w.close()
    for t, w in zip(targets, writers, strict=False):
        _say(args, f"{t}: {w.records_written} records")
    return 0


def cmd_pack_images(args: argparse.Namespace) -> int:
    from . import images

    def report(path: str, err: Exception) -> None:
        print(f"{PROG}: warning: skipped {path}: {getattr(err, 'reason', err)}", file=sys.stderr)

    if not os.path.exists(args.source):
        raise UsageError(f"no such file or directory: {args.source}")
    hint = "--append to add images, --force to replace them"
    guard = (
        contextlib.nullcontext()
        if args.append
        else _replacing(args.output, shard_suffix(args.to), args.force, hint=hint)
    )
    try:
        with guard:
            result = _pack(args, report)
    except images.ImageDecodeError as err:
        raise images.ImageDecodeError(err.reason + " (--skip-bad skips such images)", path=err.path) from None
    _say(
        args,
        f"packed {result.written} images into {len(result.paths)} shards ({result.paths[0] if result.paths else '-'}{' ...' if len(result.paths) > 1 else ''})",
    )
    _say(
        args,
        f"label map: {result.label_map_path} ({len(result.label_map)} classes"
        + (f", new: {', '.join(result.new_classes)})" if args.append and result.new_classes else ")"),
    )
    if result.skipped:
        _say(args, f"skipped {len(result.skipped)} images that cannot be decoded")
    return 0


def _pack(args: argparse.Namespace, report: Callable[[str, Exception], None]) -> Any:
    from . import images

    return images.pack_images(
        args.source,
        args.output,
        num_shards=args.shards,
        max_records=args.max_records,
        max_bytes=args.max_bytes,
        shuffle=not args.no_shuffle,
        seed=args.seed,
        label_map=args.label_map,
        resize=args.resize,
        format=args.format,
        quality=args.quality,
        on_error=report if args.skip_bad else "raise",
        append=args.append,
        compression=args.to or None,
        index=not args.no_index,
        progress=lambda items, total: progress(items, total, "pack", "img", args.quiet),
        workers=args.workers,
    )


def cmd_unpack_images(args: argparse.Namespace) -> int:
    from . import images

    paths = expand_inputs(args.inputs)
    n = images.unpack_images(
        paths,
        args.output,
        compression=args.compression,
        progress=lambda it, total: progress(it, total, "unpack", "img", args.quiet),
    )
    _say(args, f"wrote {n} images under {args.output}")
    return 0


def cmd_remove_images(args: argparse.Namespace) -> int:
    from . import images

    paths = expand_inputs(args.inputs)
    names = set(args.filename or [])
    if args.filenames_from:
        with open(args.filenames_from, encoding="utf-8") as f:
            names |= {line.strip() for line in f if line.strip()}
    classes = set(args.drop_class or [])
    if not names and not classes:
        raise UsageError("say what to remove: --filename, --filenames-from or --class")
    with _replacing(args.output, shard_suffix(args.to), args.force, paths):
        result = images.remove_images(
            paths,
            args.output,
            filenames=names,
            keep=(lambda rec: rec.text not in classes) if classes else None,
            label_map=args.label_map,
            num_shards=args.shards,
            max_records=args.max_records,
            max_bytes=args.max_bytes,
            compression=args.to or None,
            index=not args.no_index,
        )
    _say(args, f"kept {result.written} images, removed {result.removed}; new shards under {args.output}")
    return 0


# ---------------------------------------------------------------- parser


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line: `tfrecord-lite: error: ...` (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        hint = f" (see '{self.prog} --help')"
        self.exit(EXIT_USAGE, f"{PROG}: error: {message}{hint}\n")


EPILOG = f"""\
inputs: files, glob patterns ('data/train-*.tfrecord') or directories (their record
files); '-' reads standard input (count, head, cat, schema, verify, merge, reshard,
convert). GZIP / ZLIB compression is recognised from the content.
exit status: 0 success, {EXIT_DATA} bad data (corrupt record, failed verification,
undecodable image), {EXIT_USAGE} bad command line or missing input.

examples:
  {PROG} count data/                       records in every file of data/
  {PROG} head -n 2 train.tfrecord          the first 2 records, readable
  {PROG} cat --json --keys label data/*.gz one JSON line per record, one key
  {PROG} schema --all train.tfrecord       keys, kinds, value counts, presence
  {PROG} verify data/                      every CRC; exit status 1 if any is bad
  {PROG} index train.tfrecord --text       random-access sidecar + DALI text index
  {PROG} pack-images photos/ out/photos --shards 8
  {PROG} split data/ --ratio 90/10 --shuffle -o out/   out/train.tfrecord, out/val.tfrecord
  {PROG} convert train.tfrecord train.tfrecord.gz
run '{PROG} COMMAND --help' for a command's options."""


def _add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="TFRecord files, glob patterns or directories")
    p.add_argument("-z", "--compression", type=_compression_arg, default="auto", metavar="C",
                   help="input compression: auto (default: from the content), none, gzip, zlib")  # fmt: skip


def _add_output_options(p: argparse.ArgumentParser, sharded: bool = True) -> None:
    if sharded:
        g = p.add_mutually_exclusive_group()
        g.add_argument("--shards", type=_positive_int, metavar="N", help="write N shards")
        g.add_argument("--max-records", type=_positive_int, metavar="N", help="start a new shard every N records")
        g.add_argument(
            "--max-bytes", type=parse_size, metavar="SIZE", help="start a new shard at SIZE bytes (e.g. 200M)"
        )
        p.add_argument("--no-index", action="store_true", help="do not write random-access index sidecars")
    p.add_argument("--to", type=_out_compression_arg, default=None, metavar="C",
                   help="output compression: none (default), gzip, zlib")  # fmt: skip
    p.add_argument("-f", "--force", action="store_true", help="overwrite existing outputs")


def _add_mode(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--example", dest="mode", action="store_const", const="example", help="decode records as Examples")
    g.add_argument(
        "--sequence", dest="mode", action="store_const", const="sequence", help="decode records as SequenceExamples"
    )
    g.add_argument("--raw", dest="mode", action="store_const", const="raw", help="show raw record bytes")
    p.set_defaults(mode="auto")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of `tfrecord-lite` with all its sub-commands."""
    from . import __version__

    fmt = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog=PROG, description="Inspect, check, index and reshape TFRecord files; pack image folders into them.",
                     epilog=EPILOG, formatter_class=fmt)  # fmt: skip
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or summary lines")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def command(
        name: str, func: Callable[[argparse.Namespace], int], summary: str, example: str, aliases: Sequence[str] = ()
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=summary,
            description=summary,
            epilog="examples:\n" + example,
            formatter_class=fmt,
            aliases=list(aliases),
        )
        p.add_argument(
            "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress bars or summary lines"
        )
        p.set_defaults(func=func)
        return p

    p = command("count", cmd_count, "Count the records of TFRecord files (the total; --per-file for each file).",
                f"  {PROG} count data/train-*.tfrecord\n  {PROG} count --per-file data/")  # fmt: skip
    _add_inputs(p)
    p.add_argument("--per-file", action="store_true", help="also print each file's count")
    p.add_argument("--verify", action="store_true", help="check payload CRCs while counting (slower)")
    p.add_argument("--json", action="store_true", help='print {"files": {...}, "total": N}')

    for name, summary, example in (
        ("head", "Show the first records (Example, SequenceExample or raw bytes), readable or as JSON lines.",
         f"  {PROG} head train.tfrecord\n  {PROG} head -n 1 --full --keys image/class/text data/"),
        ("cat", "Show every record, readable or as JSON lines (see head).",
         f"  {PROG} cat --json data/*.tfrecord.gz | jq .features.label.values[0]"),
    ):  # fmt: skip
        p = command(name, cmd_show, summary, example)
        _add_inputs(p)
        if name == "head":
            p.add_argument("-n", type=_positive_int, default=5, metavar="N", help="number of records (default 5)")
        p.add_argument("--skip", type=int, default=0, metavar="K", help="start after the first K records")
        p.add_argument("--json", action="store_true", help="one JSON object per record (bytes: text or base64)")
        p.add_argument("--keys", action="append", metavar="K1,K2", help="only these feature keys")
        p.add_argument("--max-values", type=int, default=10, metavar="N", help="values shown per feature (default 10)")
        p.add_argument(
            "--max-chars", type=int, default=60, metavar="N", help="characters / bytes shown per value (default 60)"
        )
        p.add_argument("--full", action="store_true", help="show everything, nothing elided")
        _add_mode(p)

    p = command("schema", cmd_schema, "Feature keys, kinds, min/max value counts and presence %% over N records (or --all).",
                f"  {PROG} schema data/\n  {PROG} schema --all --json train.tfrecord")  # fmt: skip
    _add_inputs(p)
    p.add_argument("-n", type=_positive_int, default=1000, metavar="N", help="records to look at (default 1000)")
    p.add_argument("--all", action="store_true", help="look at every record")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    _add_mode(p)

    p = command("verify", cmd_verify, "Check every CRC; list the offset of every bad record; exit status 1 if any.",
                f"  {PROG} verify data/\n  {PROG} verify -q data/*.gz && echo all good")  # fmt: skip
    _add_inputs(p)
    p.add_argument("--json", action="store_true", help="one JSON line per file")
    p.add_argument("--all", action="store_true", help="list every bad record (default: the first 20 per file)")

    p = command("index", cmd_index, "Build random-access index sidecars (<file>.tfrlidx) and, with --text, DALI / tfrecord text indexes (<file>.idx).",
                f"  {PROG} index data/\n  {PROG} index data/*.tfrecord --text-dir idx/   for DALI's index_path")  # fmt: skip
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="uncompressed TFRecord files, globs or directories")
    p.add_argument("--text", action="store_true", help="also write '<file>.idx' text indexes ('offset length' lines)")
    p.add_argument("--text-dir", metavar="DIR", help="write the text indexes into DIR instead (implies --text)")
    p.add_argument("--no-verify", action="store_true", help="do not check payload CRCs while indexing")

    p = command("pack-images", cmd_pack_images, "Pack an image folder tree (one sub-folder per class) or a CSV of path,label into TFRecord shards + a label map "
                "(a new shard every 128 MiB unless --shards / --max-records / --max-bytes say otherwise).",
                f"  {PROG} pack-images photos/ out/photos --shards 8        -> out/photos-00000-of-00008.tfrecord ..., out/photos.labels.json\n"
                f"  {PROG} pack-images list.csv out/train --resize 256 --format jpeg --skip-bad\n"
                f"  {PROG} pack-images new_photos/ out/photos --append      add images; existing label ids stay")  # fmt: skip
    p.add_argument(
        "source", metavar="SOURCE", help="a folder with one sub-folder per class, or a CSV file of path,label rows"
    )
    p.add_argument("output", metavar="OUT_PREFIX", help="shard name prefix, e.g. out/train")
    p.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0; the order is reproducible)")
    p.add_argument("--no-shuffle", action="store_true", help="keep the sorted (class, file) order")
    p.add_argument("--label-map", metavar="FILE", help="a JSON label map {class: id} to take ids from")
    p.add_argument(
        "--resize", type=_resize_arg, metavar="N|WxH", help="re-encode: longest side at most N, or exactly WxH"
    )
    p.add_argument("--format", choices=("jpeg", "png", "webp"), help="re-encode into this format")
    p.add_argument("--quality", type=int, default=95, help="JPEG / WebP quality when re-encoding (default 95)")
    p.add_argument(
        "--skip-bad", action="store_true", help="skip (and report) images that cannot be decoded instead of stopping"
    )
    p.add_argument(
        "--append", action="store_true", help="add to existing shards: new shard files, label map extended, ids kept"
    )
    p.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        metavar="N",
        help="threads reading and checking images (default: up to 8)",
    )
    _add_output_options(p)

    p = command("unpack-images", cmd_unpack_images, "Write the images of image records back to files: OUT_DIR/<class>/<file name>.",
                f"  {PROG} unpack-images out/photos-*.tfrecord -o restored/")  # fmt: skip
    _add_inputs(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="folder to write into")

    p = command("remove-images", cmd_remove_images, "Copy image records into new shards without some images (by file name or class).",
                f"  {PROG} remove-images out/photos-*.tfrecord -o out/photos-v2 --filename cat/003.jpg\n"
                f"  {PROG} remove-images out/ -o clean/photos --filenames-from bad.txt --class blurry")  # fmt: skip
    _add_inputs(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT_PREFIX", help="prefix of the new shards")
    p.add_argument("--filename", action="append", metavar="NAME", help="image/filename to remove (repeatable)")
    p.add_argument("--filenames-from", metavar="FILE", help="a file with one image/filename per line to remove")
    p.add_argument(
        "--class",
        dest="drop_class",
        action="append",
        metavar="NAME",
        help="remove every image of this class (repeatable)",
    )
    p.add_argument("--label-map", metavar="FILE", help="label map to copy beside the new shards (default: the inputs')")
    _add_output_options(p)

    p = command("reshard", cmd_reshard, "Rewrite records into a new set of shards (by number, records or bytes per shard).",
                f"  {PROG} reshard data/ -o out/train --shards 16\n  {PROG} reshard big.tfrecord -o out/part --max-bytes 200M --to gzip")  # fmt: skip
    _add_inputs(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT_PREFIX", help="prefix of the new shards")
    _add_output_options(p)

    p = command("merge", cmd_merge, "Concatenate the records of several files into one file.",
                f"  {PROG} merge data/train-*.tfrecord -o all.tfrecord")  # fmt: skip
    _add_inputs(p)
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT_FILE", help="the merged file (.gz -> GZIP unless --to)"
    )
    _add_output_options(p, sharded=False)

    p = command("split", cmd_split, "Split records into parts by ratio (90/10) or by counts (1000/200), e.g. train/val.",
                f"  {PROG} split data/ --ratio 90/10 --shuffle -o out/          -> out/train.tfrecord, out/val.tfrecord\n"
                f"  {PROG} split all.tfrecord --count 1000/200 --names a,b -o x    -> x-a.tfrecord, x-b.tfrecord")  # fmt: skip
    _add_inputs(p)
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="a folder (OUT/NAME.tfrecord) or a prefix (OUT-NAME.tfrecord)",
    )
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--ratio", metavar="A/B[/C]", help="split by ratio, e.g. 90/10 or 80/10/10")
    g.add_argument("--count", metavar="A/B[/C]", help="split by record counts; records beyond their sum are left out")
    p.add_argument("--names", metavar="N1,N2", help="part names (default train,val[,test])")
    p.add_argument(
        "--shuffle", action="store_true", help="assign records to parts at random (seeded) instead of in order"
    )
    p.add_argument("--seed", type=int, default=0, help="seed for --shuffle (default 0)")
    _add_output_options(p, sharded=False)

    p = command("convert", cmd_convert, "Change compression: plain <-> GZIP <-> ZLIB (records are copied unchanged).",
                f"  {PROG} convert train.tfrecord.gz train.tfrecord\n  {PROG} convert data/*.tfrecord --to gzip -o gz/")  # fmt: skip
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="TFRecord files, glob patterns or directories")
    p.add_argument("output", metavar="OUTPUT", help="output file, or a folder when converting several files")
    p.add_argument(
        "-z",
        "--compression",
        type=_compression_arg,
        default="auto",
        metavar="C",
        help="input compression (default auto)",
    )
    _add_output_options(p, sharded=False)
    return parser


def _resize_arg(value: str) -> Any:
    m = re.fullmatch(r"(\d+)(?:[xX](\d+))?", value.strip())
    if not m or int(m.group(1)) == 0 or (m.group(2) is not None and int(m.group(2)) == 0):
        raise argparse.ArgumentTypeError(f"expected N (longest side) or WxH, got {value!r}")
    return int(m.group(1)) if m.group(2) is None else (int(m.group(1)), int(m.group(2)))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 bad data, 2 usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "quiet"):
        args.quiet = False
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader of our output went away (| head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (UsageError, TFRecordError, ValueError, OSError, ImportError) as err:
        status, message = _failure(err)
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return status


def _failure(err: Exception) -> tuple[int, str]:
    """Exit status and message for an expected error: usage (2) or data (1)."""
    if isinstance(err, UsageError):
        return EXIT_USAGE, str(err)
    if isinstance(err, FileNotFoundError):
        return EXIT_USAGE, f"no such file or directory: {err.filename}" if err.filename else str(err)
    return EXIT_DATA, str(err)
