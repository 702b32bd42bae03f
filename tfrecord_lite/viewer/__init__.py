"""The dataset viewer: TFRecord files browsed in a web browser on this machine, or written as one
static HTML page.

`Catalog(source)` opens the files (a path, folder, glob or list) for random access;
`ViewerServer(catalog)` serves its pages (overview, record browser, image grid, search) on
127.0.0.1 with the standard library's HTTP server; `write_report(catalog, "report.html")` writes
the static page. `tfrecord-lite view` is the command line of both. Nothing is fetched from
outside: pages are rendered on the server, styles inline, images data URIs.
"""

from __future__ import annotations

from tfrecord_lite.viewer.catalog import Catalog, DamageReport, SearchResult
from tfrecord_lite.viewer.report import report_html, write_report
from tfrecord_lite.viewer.server import ViewerServer

__all__ = ["Catalog", "DamageReport", "SearchResult", "ViewerServer", "report_html", "write_report"]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the submodules
    return sorted(__all__)
