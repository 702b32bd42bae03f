"""Records shown in a notebook: RecordsView (what `show` returns, in show.py) and the HTML view
of a TFRecordFile.

Strategy: each record is decoded without a spec (or with the caller's), as an Example, or as a
SequenceExample when it holds feature lists, and handed to _html as a RecordView; a record that
does not decode or read is shown as its error, so one bad record never hides the others. A file
shows its first FILE_RECORDS records, read by index: a huge file costs what a small one does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tfrecord_lite._batches.sequence_probe import has_feature_lists
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._example.decode import decode_example, decode_sequence_example
from tfrecord_lite._html.records import RecordView, records_table
from tfrecord_lite._html.style import fragment
from tfrecord_lite._html.values import esc
from tfrecord_lite._repr import describe

if TYPE_CHECKING:
    from tfrecord_lite._records.random_access import TFRecordFile

FILE_RECORDS = 5  # records a TFRecordFile shows in a notebook


def _selected(values: Mapping[str, Any], keys: Sequence[str] | None) -> dict[str, Any]:
    return dict(values) if keys is None else {k: values[k] for k in keys if k in values}


def record_view(label: str, record: Any, features: Any = None, *, href: str | None = None) -> RecordView:
    """One serialized record decoded into a RecordView (`features`: a spec mapping to decode
    with, or a list of the keys to show); a record that does not decode is its error."""
    spec = features if isinstance(features, Mapping) else None
    keys = None if spec is not None or features is None else list(features)
    try:
        if has_feature_lists(bytes(record)):
            context, lists = decode_sequence_example(record, spec, None) if spec else decode_sequence_example(record)
            return RecordView(label, _selected(context, keys), _selected(lists, keys), href=href)
        return RecordView(label, _selected(decode_example(record, spec), keys), href=href)
    except (TFRecordError, ValueError) as err:
        return RecordView(label, {}, error=f"{type(err).__name__}: {err}", href=href)


def decoded_view(label: str, item: Any, keys: Sequence[str] | None) -> RecordView:
    """A record already decoded: a dict, or a (context, feature_lists) pair."""
    if isinstance(item, tuple) and len(item) == 2 and all(isinstance(part, Mapping) for part in item):
        return RecordView(label, _selected(item[0], keys), _selected(item[1], keys))
    if isinstance(item, Mapping):
        return RecordView(label, _selected(item, keys))
    raise TypeError(f"show() takes serialized records or decoded dicts, not {type(item).__name__}")


class RecordsView:
    """Records to show in a notebook: `_repr_html_` is a table of them with thumbnails; `views`
    holds each record's RecordView, `name` says what they came from (a caption)."""

    def __init__(self, views: list[RecordView], name: str) -> None:
        self.views = views
        self.name = name

    def _repr_html_(self) -> str:
        caption = f'<p class="note">{esc(self.name)}: {len(self.views)} record(s) shown</p>'
        return fragment(caption + records_table(self.views))

    def __repr__(self) -> str:
        return describe("RecordsView", repr(self.name), f"{len(self.views)} records")

    def __len__(self) -> int:
        return len(self.views)


def file_views(f: TFRecordFile, n: int, features: Any) -> Iterator[RecordView]:
    for i in range(min(n, len(f))):
        try:
            yield record_view(str(i), f[i], features)
        except TFRecordError as err:  # a record damaged after indexing: its CRC check failed
            yield RecordView(str(i), {}, error=str(err))


def file_html(f: TFRecordFile) -> str:
    """A TFRecordFile in a notebook: its file, record count, size, compression, index and first records."""
    if f.closed:
        return fragment(f"<p>TFRecordFile {esc(f.path)} (closed)</p>")
    try:
        size: int | str = os.path.getsize(f.path)
    except OSError:
        size = "?"
    index = f.index_path or "held in memory"
    facts = [
        ("file", f.path),
        ("records", len(f)),
        ("bytes", size),
        ("compression", f.compression or "none"),
        ("index", index),
    ]
    rows = "".join(f'<tr><th class="key">{esc(k)}</th><td>{esc(v)}</td></tr>' for k, v in facts)
    shown = list(file_views(f, FILE_RECORDS, None))
    more = f'<p class="note">first {len(shown)} of {len(f)} records</p>' if shown else ""
    return fragment(f"<table>{rows}</table>{more}{records_table(shown) if shown else ''}")
