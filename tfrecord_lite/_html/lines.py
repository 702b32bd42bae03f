"""Line charts as inline SVG: values over steps, one line per series (a TensorBoard scalar tag's
runs), with the axes' ranges written at their ends and a legend; no script, no external asset.

Strategy: a series of more than MAX_POINTS points is thinned to evenly spaced ones (the first and
last kept) before drawing, so a chart of a million steps is a page of bounded size. Values that
are not finite (NaN, inf) are left out of the line and counted in a note. Every name is escaped;
each series also carries a `<title>` with its last value, which a browser shows on hover.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tfrecord_lite._html.values import esc

WIDTH, HEIGHT = 480, 200
MARGIN_LEFT, MARGIN_BOTTOM, MARGIN_TOP = 64, 22, 8
MAX_POINTS = 500  # points of one line drawn
MAX_SERIES = 12  # lines of one chart
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")

Series = tuple[str, Sequence[int], Sequence[float]]  # name, steps, values


def thinned(steps: Sequence[int], values: Sequence[float], most: int = MAX_POINTS) -> list[tuple[int, float]]:
    """At most `most` (step, value) points, evenly spaced over the series, its first and last kept."""
    n = len(steps)
    if n <= most:
        return list(zip(steps, values, strict=True))
    picks = sorted({round(i * (n - 1) / (most - 1)) for i in range(most)})
    return [(steps[i], values[i]) for i in picks]


def _short(x: float) -> str:
    return f"{x:.4g}"


def line_chart(series: Sequence[Series], *, title: str = "") -> str:
    """`series` as lines over a shared step axis; a note says what was left out."""
    shown = [(name, thinned(steps, values)) for name, steps, values in series[:MAX_SERIES]]
    finite = [(name, [(s, v) for s, v in points if math.isfinite(v)]) for name, points in shown]
    dropped = sum(len(p) for _, p in shown) - sum(len(p) for _, p in finite)
    points = [p for _, line in finite for p in line]
    caption = f"<h4>{esc(title)}</h4>" if title else ""
    if not points:
        return f'{caption}<p class="note">(no finite values to chart)</p>'
    lo_s, hi_s = min(s for s, _ in points), max(s for s, _ in points)
    lo_v, hi_v = min(v for _, v in points), max(v for _, v in points)
    span_s, span_v = (hi_s - lo_s) or 1, (hi_v - lo_v) or 1.0
    plot_w, plot_h = WIDTH - MARGIN_LEFT - 8, HEIGHT - MARGIN_BOTTOM - MARGIN_TOP

    def xy(step: int, value: float) -> str:
        x = MARGIN_LEFT + plot_w * (step - lo_s) / span_s
        y = MARGIN_TOP + plot_h * (1 - (value - lo_v) / span_v)
        return f"{x:.1f},{y:.1f}"

    bottom = MARGIN_TOP + plot_h
    parts = [
        f'<line x1="{MARGIN_LEFT}" y1="{bottom}" x2="{WIDTH - 8}" y2="{bottom}" stroke="#888"/>',
        f'<line x1="{MARGIN_LEFT}" y1="{MARGIN_TOP}" x2="{MARGIN_LEFT}" y2="{bottom}" stroke="#888"/>',
        f'<text class="axis" x="{MARGIN_LEFT - 4}" y="{MARGIN_TOP + 10}" text-anchor="end" font-size="11">'
        f"{esc(_short(hi_v))}</text>",
        f'<text class="axis" x="{MARGIN_LEFT - 4}" y="{MARGIN_TOP + plot_h}" text-anchor="end" font-size="11">'
        f"{esc(_short(lo_v))}</text>",
        f'<text class="axis" x="{MARGIN_LEFT}" y="{HEIGHT - 6}" font-size="11">step {lo_s}</text>',
        f'<text class="axis" x="{WIDTH - 8}" y="{HEIGHT - 6}" text-anchor="end" font-size="11">{hi_s}</text>',
    ]
    legend = []
    for k, (name, line) in enumerate(finite):
        color = COLORS[k % len(COLORS)]
        if not line:
            continue
        last = line[-1]
        path = " ".join(xy(s, v) for s, v in line)
        hover = f"<title>{esc(name)}: {esc(_short(last[1]))} at step {last[0]}</title>"
        if len(line) == 1:  # one point draws no line: a dot
            x, y = path.split(",")
            parts.append(f'<circle class="series" cx="{x}" cy="{y}" r="3" fill="{color}">{hover}</circle>')
        else:
            stroke = f'fill="none" stroke="{color}" stroke-width="1.5"'
            parts.append(f'<polyline class="series" {stroke} points="{path}">{hover}</polyline>')
        legend.append(f'<span class="legend" style="color:{color}">■</span> {esc(name)}')
    notes = []
    if len(series) > MAX_SERIES:
        notes.append(f"{len(series) - MAX_SERIES} more series not drawn")
    if dropped:
        notes.append(f"{dropped} values that are not finite left out")
    note = f'<p class="note">{esc("; ".join(notes))}</p>' if notes else ""
    svg = f'<svg class="chart lines" role="img" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">'
    return f"{caption}{svg}{''.join(parts)}</svg><p>{' '.join(legend)}</p>{note}"
