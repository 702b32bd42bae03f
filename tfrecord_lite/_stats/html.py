"""`DatasetStatistics.to_html()`: one self-contained HTML fragment — an overview table, a table of
the features, a bar chart of the label-like feature's values, and per feature its histograms.

Strategy: strings put together from the result objects, every text escaped. The fragment holds its
own `<style>`, every selector under the root class `tfrls` (and every class named `tfrls-...`), so
that a page embedding it as it is keeps its own look; charts are inline SVG (`<rect>`s with a
`<title>` each for the exact numbers on hover), so nothing is fetched and no script runs. The
label-like feature is the first int64 or bytes feature named like label / class / target, else
the first with few distinct values (LABEL_MAX at most, counted exactly). The page is bounded: the
table lists at most TABLE_FEATURES features and charts are drawn for the first CHART_FEATURES,
each cut saying how many more there are (all of them stay in to_dict()).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

TABLE_FEATURES = 1000  # features listed in the table of the page
CHART_FEATURES = 200  # features whose charts the page draws

if TYPE_CHECKING:  # the results import this module when asked for HTML
    from tfrecord_lite._stats.results import DatasetStatistics, FeatureStatistics, Histogram, NumberStats

__all__ = ["LABEL_MAX", "label_feature", "render"]

LABEL_MAX = 50
_LABEL_NAME = re.compile(r"(^|[^a-z])(label|labels|class|classes|target|category|y)($|[^a-z])", re.IGNORECASE)

_BAR, _ALT = "#4c8bf5", "#2da44e"  # also as attributes: the charts keep their colours where a page's
# content security policy refuses inline style elements
_CSS = """
.tfrls{font:13px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;max-width:1100px}
.tfrls h3{font-size:15px;margin:12px 0 6px}
.tfrls h4{font-size:13px;margin:0 0 4px}
.tfrls table.tfrls-t{border-collapse:collapse;margin:4px 0 10px}
.tfrls .tfrls-t th,.tfrls .tfrls-t td{border-bottom:1px solid #d8dee4;padding:3px 8px;text-align:left;
vertical-align:top}
.tfrls .tfrls-t td.tfrls-n{text-align:right;font-variant-numeric:tabular-nums}
.tfrls .tfrls-t th{background:#f6f8fa;font-weight:600}
.tfrls .tfrls-kind{font-family:ui-monospace,monospace;color:#57606a}
.tfrls .tfrls-feature{border:1px solid #d8dee4;border-radius:6px;padding:8px 10px;margin:8px 0;
display:flex;flex-wrap:wrap;gap:16px}
.tfrls .tfrls-chart{display:block}
.tfrls .tfrls-chart rect{fill:#4c8bf5}
.tfrls .tfrls-chart rect.tfrls-alt{fill:#2da44e}
.tfrls .tfrls-chart text{font-size:10px;fill:#57606a;font-family:system-ui,sans-serif}
.tfrls .tfrls-note{color:#57606a;font-size:12px}
.tfrls code{font-family:ui-monospace,monospace}
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _num(value: float | int | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.4g}"


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _table(head: Sequence[str] | None, rows: Sequence[Sequence[str]], numeric: Sequence[bool] = ()) -> str:
    cells = "".join(f"<th>{_e(h)}</th>" for h in head or ())
    body = []
    for row in rows:
        tds = "".join(
            f'<td class="tfrls-n">{c}</td>' if k < len(numeric) and numeric[k] else f"<td>{c}</td>"
            for k, c in enumerate(row)
        )
        body.append(f"<tr>{tds}</tr>")
    thead = f"<thead><tr>{cells}</tr></thead>" if head else ""
    return f'<table class="tfrls-t">{thead}<tbody>{"".join(body)}</tbody></table>'


def _range(edges: Sequence[float]) -> tuple[str, str]:
    """The labels under a histogram: its edges, or for one bucket per integer the integers."""
    if all(edges[k + 1] - edges[k] == 1 and edges[k] % 1 == 0.5 for k in range(len(edges) - 1)):
        return _num(int(edges[0] + 0.5)), _num(int(edges[-1] - 0.5))
    return _num(edges[0]), _num(edges[-1])


def histogram_svg(histogram: Histogram, title: str, width: int = 260, height: int = 70) -> str:
    """Vertical bars of a histogram, its range written under it."""
    if not histogram.counts:
        return ""
    top = max(histogram.counts) or 1
    bar = width / len(histogram.counts)
    rects = []
    for k, count in enumerate(histogram.counts):
        h = (height - 14) * count / top
        low, high = histogram.edges[k], histogram.edges[k + 1]
        tip = (
            f"[{low:.4g}, {high:.4g}): {count:,.0f}"
            if high - low != 1 or low % 1 != 0.5
            else f"{low + 0.5:.0f}: {count:,.0f}"
        )
        rects.append(
            f'<rect x="{k * bar:.1f}" y="{height - 14 - h:.1f}" width="{max(bar - 1, 1):.1f}" height="{h:.1f}" '
            f'fill="{_BAR}">'
            f"<title>{_e(tip)}</title></rect>"
        )
    first, last = _range(histogram.edges)
    low_text = f'<text x="0" y="{height - 2}">{_e(first)}</text>'
    high_text = f'<text x="{width}" y="{height - 2}" text-anchor="end">{_e(last)}</text>'
    return (
        f'<div><h4>{_e(title)}</h4><svg class="tfrls-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}" font-size="10">'
        f"{''.join(rects)}{low_text}{high_text}</svg></div>"
    )


def bars_svg(items: Sequence[tuple[str, float]], title: str, width: int = 320) -> str:
    """Horizontal bars, one per (label, count), largest first as given."""
    if not items:
        return ""
    row, label_w = 16, 110
    top = max(count for _, count in items) or 1
    height = row * len(items)
    parts = []
    for k, (label, count) in enumerate(items):
        y = k * row
        w = (width - label_w - 60) * count / top
        shown = label if len(label) <= 18 else label[:17] + "…"
        parts.append(
            f'<text x="{label_w - 4}" y="{y + 11}" text-anchor="end">{_e(shown)}</text>'
            f'<rect class="tfrls-alt" x="{label_w}" y="{y + 2}" width="{max(w, 1):.1f}" height="{row - 4}" '
            f'fill="{_ALT}">'
            f"<title>{_e(label)}: {count:,.0f}</title></rect>"
            f'<text x="{label_w + w + 4:.1f}" y="{y + 11}">{count:,.0f}</text>'
        )
    return (
        f'<div><h4>{_e(title)}</h4><svg class="tfrls-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}" font-size="10">'
        f"{''.join(parts)}</svg></div>"
    )


def label_feature(stats: DatasetStatistics) -> FeatureStatistics | None:
    """The feature whose values look like labels: named so, else the first with few values
    (that repeat: at most half as many as the records that have it)."""
    candidates = [
        f
        for f in stats.features
        if f.kind in ("int64", "bytes") and f.categories is not None and f.categories.top and f.image is None
    ]
    for feature in candidates:
        if _LABEL_NAME.search(feature.name):
            return feature
    for feature in candidates:
        assert feature.categories is not None
        distinct = feature.categories.distinct
        if feature.categories.distinct_exact and 1 < distinct <= min(LABEL_MAX, feature.present // 2):
            return feature
    return None


def _overview(stats: DatasetStatistics) -> str:
    kinds = sorted({c if c else "none" for c in stats.compression if c is not None}) or ["unknown"]
    rows = [
        ("records", _num(stats.records) + ("" if stats.complete else " (first records only)")),
        ("files", _num(len(stats.files))),
        ("record bytes", _e(_size(stats.bytes))),
        ("kind", _e(stats.kind)),
        ("compression", _e(", ".join(kinds))),
        ("features", _num(len(stats.features))),
    ]
    if stats.untracked_features:
        rows.append(("features not tracked", _num(stats.untracked_features) + " (past the cap on features tracked)"))
    if stats.skipped:
        rows.append(("damaged spans skipped", _num(stats.skipped)))
    return _table(None, [(f"<b>{_e(k)}</b>", v) for k, v in rows])


def _summary(feature: FeatureStatistics) -> str:
    if feature.numbers is not None:
        n = feature.numbers
        text = f"mean {_num(n.mean)} · std {_num(n.std)} · min {_num(n.min)}"
        text += f" · median {_num(n.median)} · max {_num(n.max)}"
        extra = [f"{label} {_num(v)}" for label, v in (("zeros", n.zeros), ("NaN", n.nans)) if v]
        return _e(" · ".join([text, *extra]))
    if feature.categories is not None and feature.lengths is not None:
        c, lengths = feature.categories, feature.lengths
        distinct = ("" if c.distinct_exact else "≈") + _num(c.distinct)
        text = f"{distinct} distinct · length {_num(lengths.min)}–{_num(lengths.max)}"
        if feature.image is not None:
            formats = ", ".join(f"{k} {v:,}" for k, v in feature.image.formats.items())
            text += f" · images: {formats}"
        elif c.top:
            text += f" · top {c.top[0].text!r} ({c.top[0].count:,})"
        return _e(text)
    return ""


def _features_table(stats: DatasetStatistics) -> str:
    rows = []
    for f in stats.features[:TABLE_FEATURES]:
        share = f"{100 * f.present / stats.records:.1f}%" if stats.records else "–"
        vc = f.value_counts
        counts = _num(vc.min) if vc.min == vc.max else f"{_num(vc.min)}–{_num(vc.max)}"
        rows.append(
            (
                f"<code>{_e(f.name)}</code>",
                _e(f.section),
                f'<span class="tfrls-kind">{_e(f.kind or "–")}</span>',
                share,
                _num(f.missing),
                counts,
                _summary(f),
            )
        )
    head = ("feature", "section", "kind", "present", "missing", "values per " + "record", "summary")
    return _table(head, rows, (False, False, False, True, True, True, False))


def _number_charts(stats: NumberStats | None, title: str) -> str:
    return "" if stats is None else histogram_svg(stats.histogram, title)


def _feature_block(f: FeatureStatistics) -> str:
    charts = [_number_charts(f.numbers, "values")]
    if f.categories is not None and f.categories.top and f.image is None:
        top = [(t.text, float(t.count)) for t in f.categories.top[:10]]
        charts.append(bars_svg(top, "top values" + ("" if f.categories.top_exact else " (estimated)")))
    charts.append(_number_charts(f.lengths, "lengths (bytes)"))
    if f.image is not None:
        charts.append(bars_svg([(f"{w}×{h}", float(c)) for w, h, c in f.image.sizes[:10]], "image sizes"))
        charts.append(_number_charts(f.image.width, "image widths"))
    if f.value_counts.max != f.value_counts.min:
        charts.append(_number_charts(f.value_counts, "values per " + ("step" if f.sequence_lengths else "record")))
    charts.append(_number_charts(f.sequence_lengths, "steps per record"))
    body = "".join(c for c in charts if c) or '<span class="tfrls-note">no values</span>'
    head = f'<div><h4><code>{_e(f.name)}</code> <span class="tfrls-kind">{_e(f.kind or "–")}</span></h4></div>'
    return f'<div class="tfrls-feature">{head}{body}</div>'


def _more(total: int, shown: int, what: str) -> str:
    if total <= shown:
        return ""
    return f'<p class="tfrls-note">{_num(total - shown)} more features not {what} (to_dict() holds them all)</p>'


def render(stats: DatasetStatistics) -> str:
    parts = [f'<div class="tfrls"><style>{_CSS}</style>', "<h3>Dataset</h3>", _overview(stats)]
    label = label_feature(stats)
    if label is not None and label.categories is not None:
        items = [(t.text, float(t.count)) for t in label.categories.top]
        parts.append(bars_svg(items, f"distribution of {label.name}", width=480))
    if stats.features:
        parts += ["<h3>Features</h3>", _features_table(stats), _more(len(stats.features), TABLE_FEATURES, "listed")]
        parts += [_feature_block(f) for f in stats.features[:CHART_FEATURES]]
        parts.append(_more(len(stats.features), CHART_FEATURES, "charted"))
    parts.append("</div>")
    return "".join(parts)
