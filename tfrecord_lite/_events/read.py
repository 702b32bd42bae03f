"""`read_events`: the values of a TensorBoard logdir, run folder or events file, one row each.

Strategy: the runs are found once (_events/runs.py); each run's files are read in order by the
streaming reader (iter_records: CRCs checked, compression recognised, URLs read by ranged
requests, memory flat in the file size) and each record decoded by _events/wire.py with the
run's memory of which plugin wrote each tag. Filters are applied where they cost least: runs
before any file is opened, tags before a value's payload is touched (the verdict kept per tag),
kinds before it is decoded. With `follow=True` the records come from _events/tail.py instead,
which polls the run's files and resumes after the last complete record.
"""

from __future__ import annotations

import fnmatch
import re
import struct
from collections.abc import Callable, Generator, Sequence
from typing import Any, NamedTuple

from tfrecord_lite._errors import DecodeError, place
from tfrecord_lite._events.runs import find_runs
from tfrecord_lite._events.tail import POLL_SECONDS, follow_runs
from tfrecord_lite._events.wire import (
    KINDS,
    SCALARS_METADATA,
    TAGGED,
    TENSOR,
    DecodedEvent,
    Plugins,
    decode_event,
    one_scalar,
    unwanted_tensor,
)
from tfrecord_lite._records.reader import RecordIterator, read_records
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

Patterns = str | Sequence[str] | None


class EventRecord(NamedTuple):
    """One value of a TensorBoard log: the run (its folder relative to the logdir, "." for the
    logdir itself), the step, the wall time (seconds since the epoch), the tag, the kind (one of
    "scalar", "tensor", "histogram", "image", "audio", "text", "hparams") and the value: a float
    for a scalar, a numpy array for a tensor, a [k, 3] float64 array of (left edge, right edge,
    count) for a histogram, the encoded bytes of one image or audio clip, a str (or an array of
    them) for text, a dict for hparams."""

    run: str
    step: int
    wall_time: float
    tag: str
    kind: str
    value: Any


def matcher(patterns: Patterns, what: str) -> Callable[[str], bool] | None:
    """A test of names against glob patterns (one, or any of several); None matches everything."""
    if patterns is None:
        return None
    if isinstance(patterns, str):
        patterns = [patterns]
    if not all(isinstance(p, str) for p in patterns):
        raise TypeError(f"{what} takes a glob pattern or a list of them, found {patterns!r}")
    regex = re.compile("|".join(fnmatch.translate(p) for p in patterns) or r"(?!)")
    return lambda name: regex.match(name) is not None


def _tag_test(patterns: Patterns) -> Callable[[bytes], bool] | None:
    """The tag filter on a tag's bytes, each tag's verdict computed once."""
    test = matcher(patterns, "tags")
    if test is None:
        return None
    verdicts: dict[bytes, bool] = {}

    def wanted(tag: bytes) -> bool:
        verdict = verdicts.get(tag)
        if verdict is None:
            verdict = verdicts[tag] = test(tag.decode("utf-8", "replace"))
        return verdict

    return wanted


def _kinds(kinds: str | Sequence[str] | None) -> frozenset[str] | None:
    if kinds is None:
        return None
    chosen = frozenset([kinds] if isinstance(kinds, str) else kinds)
    unknown = sorted(chosen - set(KINDS))
    if unknown:
        raise ValueError(f"kinds: unknown {', '.join(map(repr, unknown))}; the kinds are {', '.join(KINDS)}")
    return chosen


def _decoded(
    where: tuple[str, int, int | None],
    record: bytes,
    plugins: Plugins,
    wanted_tag: Callable[[bytes], bool] | None,
    wanted_kinds: frozenset[str] | None,
    policy: DamagePolicy,
) -> DecodedEvent | None:
    """One record decoded. One that does not decode is damage like a bad CRC: a DecodeError naming
    the file, the record's number and byte offset, raised or skipped by `policy` (counted toward
    its max_skipped)."""
    try:
        return decode_event(record, plugins, wanted_tag, wanted_kinds)
    except DecodeError as err:
        path, number, offset = where
        error = DecodeError(f"an event that does not decode: {err.reason}")
        placed = place(error, path=path, record=number, offset=offset)
        if policy.raises:
            raise placed from None
        policy.skip(placed)
        return None


def _where(path: str, records: RecordIterator, number: int) -> tuple[str, int, int | None]:
    """The file, number in it and byte offset of the record just read (the offset when known)."""
    found = records.placements.where(number)
    return (path, number, None) if found is None else (path, found[1], found[2])


# the longest event whose layout is remembered, and the most layouts remembered at once
_LAYOUT_BYTES = 256
_LAYOUTS = 4096
_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")


def _known_layout(
    record: bytes, end: int, layouts: dict[bytes, tuple[str, bytes, int]]
) -> tuple[tuple[str, bytes, int] | None, int, int]:
    """The remembered layout of a scalar event (its tag's text and bytes, and what follows its
    value), its step and where its float32 value is; None when not known."""
    first = record[10]
    if first < 0x80:
        start, step = 11, first
    elif record[11] < 0x80:
        start, step = 12, (first & 0x7F) | record[11] << 7
    elif record[12] < 0x80:
        start, step = 13, (first & 0x7F) | (record[11] & 0x7F) << 7 | record[12] << 14
    else:
        return None, 0, 0
    if record.endswith(SCALARS_METADATA):
        at = end - 4 - len(SCALARS_METADATA)
        known = layouts.get(record[start:at])
        if known is not None and known[2] == TAGGED:
            return known, step, at
    known = layouts.get(record[start : end - 4])
    if known is not None and known[2] != TAGGED:
        return known, step, end - 4
    return None, 0, 0


def _tag_name(tag: bytes, names: dict[bytes, str]) -> str | None:
    """A tag's text, kept for the next time; None when it is not UTF-8 (the full decoding then
    reports it)."""
    try:
        name = names[tag] = tag.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return name


def read_events(
    source: Any,
    *,
    tags: Patterns = None,
    kinds: str | Sequence[str] | None = None,
    runs: Patterns = None,
    follow: bool = False,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Generator[EventRecord, None, None]:
    """The values of a TensorBoard log, one `EventRecord` each, run by run, file by file.

    `source`: a logdir (every folder under it holding `*tfevents*` files is a run, named by its
    path relative to the logdir), a run folder, an events file, a URL of any of these, or a list.
    `tags`: a glob (`"loss*"`) or a list of globs: other tags' payloads are skipped undecoded.
    `kinds`: a kind or a list of kinds to keep. `runs`: globs over run names.
    `follow=True` keeps reading the runs as they are written (local files only): it yields each
    record once it is complete, ignores a torn tail until its writer finishes it, picks up new
    files (rotation) and new runs, and never ends by itself. The reader options mean what they
    mean for every reader (docs/conventions.md); an event that does not decode is damage like a
    bad CRC: a DecodeError naming its file, number and byte offset, or skipped with `on_error`
    and counted toward `max_skipped`."""
    wanted_tag = _tag_test(tags)
    wanted_kinds = _kinds(kinds)
    wanted_run = matcher(runs, "runs")
    policy = DamagePolicy(on_error, max_skipped)  # one count over every file
    options: dict[str, Any] = {
        "compression": compression,
        "verify": verify,
        "policy": policy,
        "storage_options": storage_options,
        "max_record_bytes": max_record_bytes,
    }
    if follow:
        for run, path, number, offset, record, run_plugins in follow_runs(
            source, wanted_run, verify=verify, max_record_bytes=max_record_bytes, poll_seconds=POLL_SECONDS
        ):
            event = _decoded((path, number, offset), record, run_plugins, wanted_tag, wanted_kinds, policy)
            if event is not None:
                for tag, kind, value in event.values:
                    yield EventRecord(run, event.step, event.wall_time, tag, kind, value)
        return
    for run, path, records, plugins in _files(source, wanted_run, options):
        for number, record in enumerate(records):
            event = _decoded(_where(path, records, number), record, plugins, wanted_tag, wanted_kinds, policy)
            if event is not None:  # one row per value, made here: no generator per record
                for tag, kind, value in event.values:
                    yield EventRecord(run, event.step, event.wall_time, tag, kind, value)


def _files(
    source: Any, wanted_run: Callable[[str], bool] | None, options: dict[str, Any]
) -> Generator[tuple[str, str, RecordIterator, Plugins], None, None]:
    """Each wanted run's files in order, open: (run, path, its records, the run's plugin memory);
    the places of the latest records kept, for an error naming one."""
    reading = dict(options)
    policy = reading.pop("policy")
    for run, files in find_runs(source, options["storage_options"]).items():
        if wanted_run is not None and not wanted_run(run):
            continue
        plugins: Plugins = {}
        for path in files:
            with read_records(path, policy, **reading) as records:
                records.placements.keep(1)
                yield run, path, records, plugins


def read_columns(
    source: Any,
    *,
    tags: Patterns = None,
    kinds: str | Sequence[str] | None = None,
    runs: Patterns = None,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> dict[str, list[Any]]:
    """The rows `read_events` yields, as six lists (run, step, wall_time, tag, kind, value): the
    tables' reader. A scalar event in the layout TensorFlow and PyTorch write goes from the lean
    scan straight into the lists, its tag's text made once per run; any other event through
    `read_events`' own decoding, so the rows are the same."""
    wanted_tag = _tag_test(tags)
    wanted_kinds = _kinds(kinds)
    scalars_wanted = wanted_kinds is None or "scalar" in wanted_kinds
    policy = DamagePolicy(on_error, max_skipped)  # one count over every file
    options: dict[str, Any] = {
        "compression": compression,
        "verify": verify,
        "policy": policy,
        "storage_options": storage_options,
        "max_record_bytes": max_record_bytes,
    }
    cols: dict[str, list[Any]] = {name: [] for name in ("run", "step", "wall_time", "tag", "kind", "value")}
    run_col, step_col, time_col = cols["run"].append, cols["step"].append, cols["wall_time"].append
    tag_col, kind_col, value_col = cols["tag"].append, cols["kind"].append, cols["value"].append
    names: dict[bytes, str] = {}
    layouts: dict[bytes, tuple[str, bytes, int]] = {}
    metadata: dict[bytes, str] = {}
    for run, path, records, plugins in _files(source, matcher(runs, "runs"), options):
        for number, record in enumerate(records):
            end = len(record)
            if 14 <= end <= _LAYOUT_BYTES and record[0] == 0x09 and record[9] == 0x10:
                known, step, at = _known_layout(record, end, layouts)
                if known is not None and (known[2] != TENSOR or plugins.get(known[1]) == "scalars"):
                    if known[2] == TAGGED:
                        plugins[known[1]] = "scalars"
                    run_col(run), step_col(step), time_col(_DOUBLE.unpack_from(record, 1)[0])
                    tag_col(known[0]), kind_col("scalar"), value_col(float(_FLOAT.unpack_from(record, at)[0]))
                    continue
            found = one_scalar(record, plugins, wanted_tag)
            if found is not None:
                step, wall_time, tag_bytes, scalar, layout, form = found
                if scalar is None or not scalars_wanted:
                    continue
                name = names.get(tag_bytes) or _tag_name(tag_bytes, names)
                if name is not None:
                    run_col(run), step_col(step), time_col(wall_time)
                    tag_col(name), kind_col("scalar"), value_col(scalar)
                    if layout > 9 and end <= _LAYOUT_BYTES:
                        if len(layouts) >= _LAYOUTS:
                            layouts.clear()
                        stop = end - 4 - (len(SCALARS_METADATA) if form == TAGGED else 0)
                        layouts[record[layout:stop]] = (name, tag_bytes, form)
                    continue
            if (
                wanted_kinds is not None
                and wanted_tag is None
                and unwanted_tensor(record, plugins, wanted_kinds, metadata)
            ):
                continue
            event = _decoded(_where(path, records, number), record, plugins, wanted_tag, wanted_kinds, policy)
            if event is not None:
                for tag, kind, value in event.values:
                    run_col(run), step_col(event.step), time_col(event.wall_time)
                    tag_col(tag), kind_col(kind), value_col(value)
    return cols
