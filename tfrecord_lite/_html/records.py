"""Decoded records as HTML: one record as a table of its features (a SequenceExample's context,
then its feature lists step by step), or many records as the rows of one table; images shown as
thumbnails wherever a record holds them, under any key.

Strategy: a record arrives decoded (`RecordView`: its features, feature lists, or the error that
stopped its decoding), so this module reads no file and parses nothing. A bytes value is an image
when its first bytes say so, or when it is raw uint8 pixels whose length the shape features of
its record give (images.py); else it is shown by values.py. A wide table keeps the first
MAX_COLUMNS keys met and says how many it left out; one record's card shows its first
MAX_CARD_KEYS features (and feature lists) and says how many more it holds, so a record of
100,000 keys makes a page of bounded size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tfrecord_lite._html.images import encoded_image_uri, raw_image_uri, raw_shape
from tfrecord_lite._html.values import esc, value_html

MAX_COLUMNS = 24  # keys shown as columns of a table of many records
MAX_STEPS = 64  # steps of a feature list shown
MAX_IMAGES = 8  # images of one bytes feature shown
MAX_CARD_KEYS = 500  # features (and feature lists) one record's card shows


@dataclass(frozen=True)
class RecordView:
    """One record to show: `label` (its number or place), its decoded `features` (a
    SequenceExample's context), its `feature_lists` (None for an Example), or the `error` that
    kept it from being read; `href` links its label."""

    label: str
    features: Mapping[str, Any]
    feature_lists: Mapping[str, Any] | None = None
    error: str | None = None
    href: str | None = None


def image_uris(value: Any, features: Mapping[str, Any]) -> list[str]:
    """The data URIs of the images a feature value holds (none when it holds something else)."""
    if not isinstance(value, list) or not value or not isinstance(value[0], (bytes, bytearray, memoryview)):
        return []
    uris = []
    for item in value[:MAX_IMAGES]:
        data = bytes(item)
        uri = encoded_image_uri(data)
        if uri is None and len(value) == 1:
            shape = raw_shape(features, len(data))
            uri = raw_image_uri(data, shape) if shape is not None else None
        if uri is None:
            return []
        uris.append(uri)
    return uris


def feature_html(key: str, value: Any, features: Mapping[str, Any]) -> str:
    """A feature's value, its images as thumbnails."""
    uris = image_uris(value, features)
    if not uris:
        return value_html(value) + _undrawn(value, features)
    size = sum(len(bytes(v)) for v in value)
    thumbs = "".join(f'<img class="thumb" alt="{esc(key)}" src="{uri}">' for uri in uris)
    return f'{thumbs}<br><span class="note">{len(value)} image(s), {size} bytes</span>'


def _undrawn(value: Any, features: Mapping[str, Any]) -> str:
    """A note on raw pixels that are not drawn for lack of Pillow, else nothing."""
    if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], (bytes, bytearray, memoryview)):
        return ""
    shape = raw_shape(features, len(value[0]))
    if shape is None:
        return ""
    return f'<br><span class="note">raw image {"x".join(map(str, shape))}: install Pillow to see it</span>'


def steps_html(steps: Any) -> str:
    """A feature list's steps, numbered, behind an expander past the first."""
    if not isinstance(steps, (list, tuple)):
        return value_html(steps)
    rows = "".join(
        f'<tr><th class="step">{i}</th><td>{value_html(step)}</td></tr>' for i, step in enumerate(steps[:MAX_STEPS])
    )
    more = (
        f'<tr><td colspan="2" class="note">… {len(steps) - MAX_STEPS} more steps</td></tr>'
        if len(steps) > MAX_STEPS
        else ""
    )
    return f'<details class="steps"><summary>{len(steps)} steps</summary><table>{rows}{more}</table></details>'


def _label(view: RecordView) -> str:
    if view.href is None:
        return esc(view.label)
    return f'<a href="{esc(view.href)}">{esc(view.label)}</a>'


def record_card(view: RecordView) -> str:
    """One record as a table of key and value (feature lists below their heading)."""
    head = f'<div class="record"><h3 class="record-label">{_label(view)}</h3>'
    if view.error is not None:
        return f'{head}<p class="damage">{esc(view.error)}</p></div>'
    rows = [
        f'<tr><th class="key">{esc(key)}</th><td>{feature_html(key, value, view.features)}</td></tr>'
        for key, value in list(view.features.items())[:MAX_CARD_KEYS]
    ]
    rows += _more_keys(len(view.features))
    if view.feature_lists is not None:
        rows.append('<tr><th colspan="2" class="section">feature lists</th></tr>')
        rows += [
            f'<tr><th class="key">{esc(key)}</th><td>{steps_html(steps)}</td></tr>'
            for key, steps in list(view.feature_lists.items())[:MAX_CARD_KEYS]
        ]
        rows += _more_keys(len(view.feature_lists))
    if not rows:
        rows.append('<tr><td class="note">(no features)</td></tr>')
    return f'{head}<table class="features">{"".join(rows)}</table></div>'


def _more_keys(total: int) -> list[str]:
    if total <= MAX_CARD_KEYS:
        return []
    return [f'<tr><td colspan="2" class="note">{total - MAX_CARD_KEYS:,} more not shown</td></tr>']


def _columns(views: Sequence[RecordView]) -> tuple[list[str], list[str], int]:
    """The feature keys and feature-list keys shown as columns, and how many keys were left out."""
    keys: dict[str, None] = {}
    lists: dict[str, None] = {}
    for view in views:
        keys.update(dict.fromkeys(view.features))
        lists.update(dict.fromkeys(view.feature_lists or ()))
    shown = list(keys)[:MAX_COLUMNS]
    shown_lists = list(lists)[: max(0, MAX_COLUMNS - len(shown))]
    return shown, shown_lists, len(keys) + len(lists) - len(shown) - len(shown_lists)


def records_table(views: Sequence[RecordView]) -> str:
    """Many records as the rows of one table, a column per key."""
    keys, lists, left_out = _columns(views)
    head = "".join(f"<th>{esc(k)}</th>" for k in keys) + "".join(f"<th>{esc(k)} (list)</th>" for k in lists)
    body = [f'<table class="records"><thead><tr><th>record</th>{head}</tr></thead><tbody>']
    for view in views:
        if view.error is not None:
            body.append(f'<tr><th>{_label(view)}</th><td class="damage" colspan="{len(keys) + len(lists)}">')
            body.append(f"{esc(view.error)}</td></tr>")
            continue
        cells = [_cell(key, view.features, feature_html) for key in keys]
        cells += [_cell(key, view.feature_lists or {}, lambda k, v, f: steps_html(v)) for key in lists]
        body.append(f"<tr><th>{_label(view)}</th>{''.join(cells)}</tr>")
    body.append("</tbody></table>")
    if left_out:
        body.append(f'<p class="note">{left_out} more keys not shown as columns</p>')
    return "".join(body)


def _cell(key: str, values: Mapping[str, Any], render: Any) -> str:
    if key not in values:
        return '<td class="absent">—</td>'
    return f"<td>{render(key, values[key], values)}</td>"
