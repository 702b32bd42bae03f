"""The look of the HTML views: one style sheet, scoped under the `tfrl` class so that a notebook
page's own styles and ours leave each other alone, and the frame of a whole page (no external
asset: the style sheet and any script are inline, so a page works from a file or offline).
"""

from __future__ import annotations

from tfrecord_lite._html.values import esc

CSS = """
.tfrl { font: 13px/1.4 system-ui, sans-serif; color: #1d1d1f; }
.tfrl table { border-collapse: collapse; margin: 4px 0; }
.tfrl th, .tfrl td { border: 1px solid #d0d4da; padding: 3px 6px; text-align: left; vertical-align: top; }
.tfrl thead th, .tfrl th.key, .tfrl th.section { background: #f2f4f7; font-weight: 600; }
.tfrl .note { color: #6b7280; font-size: 12px; }
.tfrl .hex { color: #7c3aed; }
.tfrl .text { white-space: pre-wrap; word-break: break-word; }
.tfrl .damage { color: #b91c1c; background: #fef2f2; }
.tfrl .absent { color: #9ca3af; }
.tfrl img.thumb { max-width: 96px; max-height: 96px; margin: 1px; image-rendering: auto; }
.tfrl details.more { display: inline; } .tfrl details summary { cursor: pointer; color: #2563eb; }
.tfrl .record { margin: 8px 0 16px; }
.tfrl .grid { display: flex; flex-wrap: wrap; gap: 8px; }
.tfrl .cell { width: 112px; text-align: center; font-size: 11px; }
.tfrl .cell img.thumb { max-width: 108px; max-height: 108px; }
.tfrl nav a, .tfrl .pager a { margin-right: 12px; }
.tfrl svg .bar { fill: #3b82f6; }
.tfrl form { display: inline-block; margin: 4px 12px 4px 0; }
"""


def fragment(body: str) -> str:
    """HTML for a notebook cell: the style sheet, then `body` inside the scoping element."""
    return f'<style>{CSS}</style><div class="tfrl">{body}</div>'


def page(title: str, body: str, *, script: str = "") -> str:
    """A whole HTML page: `body` under `title`, the style sheet and `script` inline."""
    code = f"<script>{script}</script>" if script else ""
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
        f"<style>{CSS}body{{margin:16px}}</style></head>"
        f'<body class="tfrl">{body}{code}</body></html>'
    )
