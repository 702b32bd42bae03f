"""The viewer as one static HTML file: the overview, the first records and their image grid, on
one page whose style sheet is inline and whose images are data URIs, so it opens from disk
(file://), is sent by mail and works offline.

Strategy: the same pieces as the served pages (pages.py), laid one after the other under anchors
instead of behind links; nothing in it refers to a server.
"""

from __future__ import annotations

import os

from tfrecord_lite._html.style import page
from tfrecord_lite._storage.atomic import write_atomic
from tfrecord_lite.viewer.catalog import Catalog
from tfrecord_lite.viewer.pages import grid_body, overview_body, records_body


def report_html(catalog: Catalog, *, n: int = 50) -> str:
    """The static page of `catalog` with its first `n` records."""
    shown = min(n, len(catalog))
    nav = '<nav><a href="#overview">overview</a><a href="#records">records</a><a href="#grid">grid</a></nav>'
    body = (
        f'{nav}<h2 id="overview">Overview</h2>{overview_body(catalog)}'
        f'<h2 id="records">The first {shown} records</h2>{records_body(catalog, 0, shown)}'
        f'<h2 id="grid">Images</h2>{grid_body(catalog, list(range(shown)))}'
    )
    # links into the server's pages mean nothing in a file: keep their text only
    body = body.replace('href="record?i=', 'data-record="').replace('href="grid?label=', 'data-label="')
    body = body.replace('href="tag?', 'data-tag="')
    body = body.replace('href="records?start=', 'data-start="')
    return page("tfrecord-lite report", body)


def write_report(catalog: Catalog, destination: str | os.PathLike[str], *, n: int = 50) -> str:
    """Write report_html of the first `n` records to `destination` (atomically), its folder made
    when missing; the path written."""
    path = os.fspath(destination)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    write_atomic(path, report_html(catalog, n=n).encode("utf-8"))
    return path
