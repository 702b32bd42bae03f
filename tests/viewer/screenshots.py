"""The docs' screenshots of the viewer (docs/images/viewer-*.png): a small labelled image dataset
served on 127.0.0.1 and photographed by the headless browser of the tests. Run it again after
changing how the pages look:

    PYTHONPATH=. .venvs/py/bin/python -m tests.viewer.screenshots

and `... -m tests.viewer.screenshots log` photographs the overview of a TensorBoard logdir
(docs/images/viewer-log.png) instead.
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


def log_main() -> None:
    """The overview of a logdir of two runs: its scalar charts and its table of tags."""
    import numpy as np

    from tfrecord_lite.events import EventWriter

    with tempfile.TemporaryDirectory() as tmp, chromium() as browser:
        os.chdir(tmp)
        rng = np.random.default_rng(0)
        for run, lr in (("lr-0.1", 0.1), ("lr-0.01", 0.01)):
            with EventWriter(Path("runs") / run) as writer:
                for step in range(200):
                    noise = 0.05 * rng.normal()
                    writer.add_scalar("loss", 2.0 * np.exp(-lr * step) + noise, step, wall_time=1.7e9 + step)
                    writer.add_scalar("accuracy", 1 - np.exp(-lr * step) + noise / 2, step, wall_time=1.7e9 + step)
                    if step % 50 == 0:
                        pixels = np.full((24, 24, 3), (step, 90, 200 - step), np.uint8)
                        writer.add_image("sample", pixels, step, wall_time=1.7e9 + step)
                        writer.add_text("note", f"checkpoint at step {step}", step, wall_time=1.7e9 + step)
        server = ViewerServer(Catalog("runs"))
        server.start()
        try:
            watched = Watched(browser, (server.url, "data:"))
            watched.page.goto(server.url)
            out = IMAGES / "viewer-log.png"
            top = watched.page.locator("#log").bounding_box()
            y = int(top["y"]) - 8 if top else 0
            watched.page.screenshot(path=str(out), clip={"x": 0, "y": y, "width": 1000, "height": 560})
            print(out, out.stat().st_size, "bytes")
            watched.close()
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    log_main() if sys.argv[1:] == ["log"] else main()
