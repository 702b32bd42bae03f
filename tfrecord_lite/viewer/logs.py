"""TensorBoard logs in the viewer: a logdir, run folder or events file shown as its runs, tags,
kinds and values (scalars charted, images drawn, text shown) beside the records themselves.

Strategy: the catalog's source is taken as a log when its files are events files (`*tfevents*`),
or when it is a folder holding no TFRecord files itself but runs under it, found as TensorBoard
finds them (_events/runs.py). One pass over the log, made the first time it is needed and then
kept (under a lock, as the statistics are), reads at most LOG_VALUES values with the events
decoder: per run and tag its kind, how many values, the first and last step, the last value
(the last image, text or number), and up to SERIES_POINTS (step, value) points of each scalar
tag, thinned evenly when more come. The same pass keeps each run's memory of which plugin wrote
which tag, so a record shown alone says "loss (scalar)" even where tf.summary wrote the plugin
only with the tag's first value. A tag's page reads that one run's files again, the other tags'
payloads skipped undecoded, and shows a page of its values.
"""

from __future__ import annotations

import glob
import json
import math
import os
import posixpath
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlencode

import numpy as np

from tfrecord_lite._errors import DecodeError, NoInputsError, TFRecordError
from tfrecord_lite._events.read import read_events
from tfrecord_lite._events.runs import Runs, find_runs, is_events_file
from tfrecord_lite._events.wire import Plugins, decode_event
from tfrecord_lite._html.images import encoded_image_uri
from tfrecord_lite._html.lines import line_chart
from tfrecord_lite._html.values import esc, value_html
from tfrecord_lite._records.reader import read_records
from tfrecord_lite._storage.sources import resolve_inputs
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import StorageOptions

LOG_VALUES = 1_000_000  # values the log's summary reads at most
SERIES_POINTS = 2_000  # points of one scalar tag kept for its chart
TAG_PAGE = 100  # values on a page of one tag
MAX_CHARTS = 50  # scalar tags charted on the overview
MAX_TAG_ROWS = 1_000  # rows of the overview's table of runs and tags
TEXT_CHARS = 200  # characters of a last text shown in the summary


def log_paths(source: Any, storage_options: StorageOptions) -> tuple[list[Any], Runs | None]:
    """The files of `source` and, when it is a TensorBoard log, its runs (else None): one logdir's
    runs named as TensorBoard names them, those of several logdirs, or of events files named one
    by one or by a glob, by their folders relative to the folder they share."""
    try:
        paths = resolve_inputs(source, storage_options=storage_options)
    except NoInputsError:  # a logdir: its events files lie in its runs' folders
        items = list(source) if isinstance(source, (list, tuple)) else [source]
        found = [_runs_of(item, storage_options) for item in items]
        if not items or any(runs is None for runs in found):
            raise
        if len(found) == 1 and found[0] is not None:
            return [path for files in found[0].values() for path in files], found[0]
        paths = [path for one in found if one is not None for files in one.values() for path in files]
        return paths, _runs_by_folder(paths)
    names = [p for p in paths if isinstance(p, str)]
    if not names or len(names) != len(paths) or not all(is_events_file(p) for p in names):
        return paths, None
    one = source[0] if isinstance(source, (list, tuple)) and len(source) == 1 else source
    runs = _runs_of(one, storage_options)
    if runs is None or sorted(map(_key, names)) != sorted(_key(p) for files in runs.values() for p in files):
        return paths, _runs_by_folder(names)  # a glob, several folders, or files one by one: a run per folder
    return paths, runs


def _runs_of(source: Any, storage_options: StorageOptions) -> Runs | None:
    """The runs of one logdir, run folder or events file; None for anything else."""
    if not isinstance(source, (str, os.PathLike)):
        return None
    try:
        return find_runs(source, storage_options)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _runs_by_folder(paths: list[str]) -> Runs:
    """Events files named one by one (a list, a glob): a run per folder, named relative to the
    folder they share."""
    folders = [posixpath.dirname(p.replace(os.sep, "/")) for p in paths]
    common = posixpath.commonpath(folders) if all(folders) else ""
    runs: Runs = {}
    for path, folder in zip(paths, folders, strict=True):
        runs.setdefault(posixpath.relpath(folder, common) if common else (folder or "."), []).append(path)
    return runs


@dataclass
class TagSummary:
    """What the log's pass learned of one tag of one run."""

    kind: str
    count: int = 0
    first_step: int = 0
    last_step: int = 0
    last: Any = None
    steps: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    stride: int = 1  # every stride-th scalar is kept once SERIES_POINTS are reached

    def add(self, step: int, value: Any) -> None:
        if not self.count:
            self.first_step = step
        self.count += 1
        self.last_step, self.last = step, value
        if self.kind == "scalar" and (self.count - 1) % self.stride == 0:
            self.steps.append(step)
            self.values.append(float(value))
            if len(self.steps) >= SERIES_POINTS:  # keep every other point, and take half as many from now on
                del self.steps[1::2], self.values[1::2]
                self.stride *= 2


@dataclass
class LogSummary:
    """The log's runs and tags (run -> tag -> TagSummary), the values read, and what stopped it."""

    tags: dict[str, dict[str, TagSummary]] = field(default_factory=dict)
    values: int = 0
    complete: bool = True
    errors: list[str] = field(default_factory=list)


class Log:
    """A TensorBoard log the catalog shows: its runs, which run each file belongs to, the summary
    of its values (made once, on first use) and each run's plugin memory."""

    def __init__(self, runs: Runs, reading: Mapping[str, Any], skips: bool) -> None:
        self.runs = runs
        self.run_of = {_key(path): run for run, files in runs.items() for path in files}
        self.reading = dict(reading)
        self.skips = skips
        self._lock = threading.Lock()
        self._summary: LogSummary | None = None
        self.plugins: dict[str, Plugins] = {run: {} for run in runs}

    def summary(self) -> LogSummary:
        with self._lock:
            if self._summary is None:
                self._summary = self._summarise()
            return self._summary

    def _summarise(self) -> LogSummary:
        summary = LogSummary()
        policy = DamagePolicy("skip" if self.skips else "raise")
        for run, files in self.runs.items():
            tags = summary.tags.setdefault(run, {})
            plugins = self.plugins[run]
            for path in files:
                try:
                    with read_records(path, policy, **self.reading) as records:
                        for record in records:
                            if summary.values >= LOG_VALUES:
                                summary.complete = False
                                return summary
                            try:
                                event = decode_event(record, plugins)
                            except DecodeError as err:
                                summary.errors.append(f"{run}: {err.reason}")
                                continue
                            for tag, kind, value in event.values:
                                summary.values += 1
                                entry = tags.get(tag)
                                if entry is None:
                                    entry = tags[tag] = TagSummary(kind)
                                entry.add(event.step, value)
                except TFRecordError as err:
                    summary.errors.append(str(err))
        return summary

    def event_plugins(self, path: Any) -> Plugins:
        """The plugin memory of the run `path` belongs to, learned by the summary's pass."""
        run = self.run_of.get(_key(path))
        if run is None:
            return {}
        self.summary()
        return self.plugins[run]


def _key(path: Any) -> Any:
    """A file's name as both listings spell it: a local path made absolute, a URL as it is."""
    if isinstance(path, (str, os.PathLike)) and "://" not in os.fspath(path):
        return os.path.realpath(path)
    return path


def tag_link(run: str, tag: str, **params: object) -> str:
    return "tag?" + urlencode({"run": run, "tag": tag, **params})


def _when(wall_time: float) -> str:
    try:
        return datetime.fromtimestamp(wall_time, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return repr(wall_time)


def value_cell(kind: str, tag: str, value: Any) -> str:
    """One value of a log as HTML: a number, an image drawn, text, a histogram's buckets."""
    if kind == "scalar":
        return esc(f"{value:.6g}") if isinstance(value, float) and math.isfinite(value) else esc(value)
    if kind == "image" and isinstance(value, bytes):
        uri = encoded_image_uri(value)
        if uri is not None:
            return f'<img class="thumb" alt="{esc(tag)}" src="{uri}">'
        return value_html(value)
    if kind == "audio" and isinstance(value, bytes):
        return f'<span class="note">audio clip, {len(value):,} bytes</span>'
    if kind == "text":
        texts = value.reshape(-1).tolist() if isinstance(value, np.ndarray) else [value]
        shown = "\n".join(str(t) for t in texts)
        return value_html([shown[:TEXT_CHARS].encode()]) + ("…" if len(shown) > TEXT_CHARS else "")
    if kind == "histogram" and isinstance(value, np.ndarray) and value.ndim == 2 and len(value):
        total = float(value[:, 2].sum())
        return (
            f'<span class="note">{len(value)} buckets over [{value[0, 0]:.4g}, {value[-1, 1]:.4g}], '
            f"{total:g} values</span>"
        )
    if kind == "hparams":
        text = json.dumps(value, default=str, ensure_ascii=False)
        return value_html([text.encode()])
    return value_html(value)


def summary_html(log: Log) -> str:
    """The overview's section of a log: charts of its scalar tags, then a table of every run's tags."""
    summary = log.summary()
    by_tag: dict[str, list[tuple[str, TagSummary]]] = {}
    for run, tags in summary.tags.items():
        for tag, entry in tags.items():
            if entry.kind == "scalar":
                by_tag.setdefault(tag, []).append((run, entry))
    charts = [
        f'<div class="chart-box">{line_chart([(run, e.steps, e.values) for run, e in runs], title=tag)}</div>'
        for tag, runs in sorted(by_tag.items())[:MAX_CHARTS]
    ]
    more = (
        f'<p class="note">{len(by_tag) - MAX_CHARTS} more scalar tags not charted</p>'
        if len(by_tag) > MAX_CHARTS
        else ""
    )
    rows = []
    entries = [(run, tag, e) for run, tags in summary.tags.items() for tag, e in sorted(tags.items())]
    for run, tag, e in entries[:MAX_TAG_ROWS]:
        rows.append(
            f'<tr><td>{esc(run)}</td><td><a class="tag" href="{esc(tag_link(run, tag))}">{esc(tag)}</a></td>'
            f"<td>{esc(e.kind)}</td><td>{e.count}</td><td>{e.first_step}..{e.last_step}</td>"
            f"<td>{value_cell(e.kind, tag, e.last)}</td></tr>"
        )
    head = "<tr><th>run</th><th>tag</th><th>kind</th><th>values</th><th>steps</th><th>last value</th></tr>"
    runs = f"<p>{len(log.runs)} run(s), {summary.values} values"
    runs += "" if summary.complete else f" (the first {LOG_VALUES:,}: the log holds more)"
    errors = "".join(f'<p class="damage">{esc(e)}</p>' for e in summary.errors[:20])
    table = f'<table class="log-tags"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    if len(entries) > MAX_TAG_ROWS:
        table += f'<p class="note">{len(entries) - MAX_TAG_ROWS:,} more tags of runs not listed</p>'
    charted = f'<div class="grid charts">{"".join(charts)}</div>' if charts else ""
    return f'<h3 id="log">TensorBoard log</h3>{runs}</p>{errors}{charted}{more}{table}'


def tag_body(log: Log, run: str, tag: str, start: int) -> str:
    """A page of one run's values of one tag (a chart first for a scalar tag)."""
    files = log.runs.get(run)
    if files is None:
        return f'<p class="damage">the log has no run {esc(run)!s}</p>'
    rows: list[str] = []
    chart_steps: list[int] = []
    chart_values: list[float] = []
    count = 0
    on_error = "skip" if log.skips else "raise"
    for row in read_events(files, tags=glob.escape(tag), on_error=on_error, **log.reading):
        if row.tag != tag:
            continue
        if row.kind == "scalar":
            chart_steps.append(row.step)
            chart_values.append(row.value)
        if start <= count < start + TAG_PAGE:
            rows.append(
                f"<tr><td>{row.step}</td><td>{esc(_when(row.wall_time))}</td><td>{esc(row.kind)}</td>"
                f"<td>{value_cell(row.kind, tag, row.value)}</td></tr>"
            )
        count += 1
    chart = line_chart([(run, chart_steps, chart_values)], title=tag) if chart_steps else ""
    head = "<tr><th>step</th><th>wall time</th><th>kind</th><th>value</th></tr>"
    pager = ""
    if count > TAG_PAGE:
        links = [
            ("previous", max(0, start - TAG_PAGE)),
            ("next", min(start + TAG_PAGE, (count - 1) // TAG_PAGE * TAG_PAGE)),
        ]
        pager = "".join(f'<a class="{n}" href="{esc(tag_link(run, tag, start=at))}">{n}</a>' for n, at in links)
    span = f"values {start}..{min(count, start + TAG_PAGE) - 1} of {count}"
    shown = f'<p class="pager">{pager} <span class="note">{span}</span></p>'
    table = f'<table class="tag-values"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    return f'<p class="note">run {esc(run)}</p>{chart}{shown}{table}'
