"""Charts as inline SVG: a horizontal bar chart of counts (the label distribution), text escaped,
no script and no external asset, so it shows the same in a notebook, a served page or a file."""

from __future__ import annotations

from collections.abc import Sequence

from tfrecord_lite._html.values import esc

BAR_HEIGHT = 18
LABEL_WIDTH = 160
BAR_WIDTH = 320
MAX_BARS = 50


def bar_chart(counts: Sequence[tuple[str, int]], *, title: str = "") -> str:
    """`counts` (name, count) as horizontal bars, the longest first MAX_BARS; a note says how many
    more there were."""
    shown = sorted(counts, key=lambda item: -item[1])[:MAX_BARS]
    if not shown:
        return '<p class="note">(nothing to chart)</p>'
    top = max(count for _, count in shown) or 1
    rows = []
    for i, (name, count) in enumerate(shown):
        y = i * BAR_HEIGHT
        width = max(1, round(BAR_WIDTH * count / top))
        rows.append(
            f'<text x="{LABEL_WIDTH - 6}" y="{y + 13}" text-anchor="end" font-size="12">{esc(name[:40])}</text>'
            f'<rect class="bar" x="{LABEL_WIDTH}" y="{y + 2}" width="{width}" height="{BAR_HEIGHT - 4}">'
            f"<title>{esc(name)}: {count}</title></rect>"
            f'<text x="{LABEL_WIDTH + width + 4}" y="{y + 13}" font-size="12">{count}</text>'
        )
    height = BAR_HEIGHT * len(shown)
    width = LABEL_WIDTH + BAR_WIDTH + 80
    more = f'<p class="note">{len(counts) - len(shown)} more not shown</p>' if len(counts) > len(shown) else ""
    caption = f"<h3>{esc(title)}</h3>" if title else ""
    svg = f'<svg class="chart" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
    return f"{caption}{svg}{''.join(rows)}</svg>{more}"
