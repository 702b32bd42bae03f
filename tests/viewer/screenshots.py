"""The docs' screenshots of the viewer (docs/images/viewer-*.png): a small labelled image dataset
served on 127.0.0.1 and photographed by the headless browser of the tests. Run it again after
changing how the pages look:

    PYTHONPATH=. .venvs/py/bin/python -m tests.viewer.screenshots
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.viewer._data import write_images
from tests.viewer.browser import Watched, chromium
from tfrecord_lite.viewer import Catalog, ViewerServer

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
PAGES = {"overview": "", "records": "records?start=40", "grid": "grid?label=1"}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, chromium() as browser:
        os.chdir(tmp)  # the pages name the file as given: train.tfrecord
        path = write_images(Path("train.tfrecord"), 120, size=48)
        server = ViewerServer(Catalog(path, on_error="skip"))
        server.start()
        try:
            watched = Watched(browser, (server.url, "data:"))
            for name, where in PAGES.items():
                watched.page.goto(server.url + where)
                out = IMAGES / f"viewer-{name}.png"
                watched.page.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": 1000, "height": 560})
                print(out, out.stat().st_size, "bytes")
            watched.close()
        finally:
            server.shutdown()
            server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
