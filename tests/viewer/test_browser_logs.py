"""The viewer of a TensorBoard logdir, ELWC records and a user's messages in a real browser
(headless Chromium through Playwright): the scalar charts are drawn, the images decode, a tag's
link leads to its values, an event record shows its values, hostile tags stay text, nothing is
fetched from outside 127.0.0.1 and no console error; the static page of a logdir opened from disk
does the same."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import tfrecord_lite as tfr
from tests.datasets.test_messages import descriptor_set, elwc, orders, runtime_class
from tests.viewer.browser import Watched, chromium
from tests.viewer.test_logs import HOSTILE_TAG, write_log
from tfrecord_lite.viewer import Catalog, ViewerServer, write_report

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Any:
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log(tmp_path_factory.mktemp("logs"))


@pytest.fixture(scope="module")
def serve() -> Any:
    servers: list[ViewerServer] = []

    def start(source: Any, **options: Any) -> str:
        server = ViewerServer(Catalog(source, on_error="skip", **options))
        server.start()
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
        server.catalog.close()


def watched_page(browser: Any, url: str) -> Watched:
    return Watched(browser, (url, "data:"))


def card_rows(w: Watched) -> dict[str, str]:
    """A record card's keys and the text of their values."""
    keys = w.page.locator("th.key").all_inner_texts()
    return dict(zip(keys, w.page.locator("table.features td").all_inner_texts(), strict=True))


def assert_clean(w: Watched, url: str) -> None:
    assert w.errors == []
    assert w.outside == []
    assert all(r.startswith((url, "data:")) for r in w.requests)
    assert w.page.evaluate("window.__pwned") is None
    w.close()


def test_a_logdir_overview_charts_its_scalars_and_draws_its_images(browser: Any, serve: Any, logdir: Path) -> None:
    url = serve(logdir)
    w = watched_page(browser, url)
    w.page.goto(url)
    assert w.page.locator("svg.lines polyline.series").count() == 2
    box = w.page.locator("svg.lines").first.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 50
    table = w.page.locator("table.log-tags")
    assert table.locator("tbody tr").count() == 2 * 4 + 2
    assert HOSTILE_TAG in table.inner_text()  # shown as text, never run
    decoded = w.images_decoded()
    assert len(decoded) == 2 and min(decoded) == 10  # the last image of each run, 10 pixels wide
    w.page.click("table.log-tags a.tag >> text=loss >> nth=1")
    w.page.wait_for_url(re.compile(r"tag\?run=train&tag=loss"))
    assert w.page.locator("h2").inner_text() == "Tag loss"
    steps = w.page.locator("table.tag-values tbody tr td:first-child").all_inner_texts()
    assert steps == [str(s) for s in range(6)]
    assert w.page.locator("svg.lines polyline.series").count() == 1
    assert_clean(w, url)


def test_a_tags_images_and_an_event_record(browser: Any, serve: Any, logdir: Path) -> None:
    url = serve(logdir)
    w = watched_page(browser, url)
    w.page.goto(url + "tag?run=eval%2Fseed-1&tag=sample")
    decoded = w.images_decoded()
    assert len(decoded) == 6 and min(decoded) == 10
    w.page.goto(url + "record?i=3")
    card = w.page.locator("table.features").inner_text()
    assert "step" in card and "time (UTC)" in card and "2001-09-09" in card
    w.page.goto(url + "records")
    assert "sample (image)" in w.page.locator("table.records thead").inner_text()
    assert min(w.images_decoded()) > 0
    assert_clean(w, url)


def test_elwc_and_a_users_messages(browser: Any, serve: Any, tmp_path: Path) -> None:
    lists = tmp_path / "lists.tfrecord"
    with tfr.TFRecordWriter(lists) as writer:
        writer.write(elwc({"query": b"red shoes"}, [{"doc": b"a", "rel": 2}, {"doc": b"b", "rel": 0}]))
    url = serve(lists)
    w = watched_page(browser, url)
    w.page.goto(url + "record?i=0")
    rows = card_rows(w)
    assert rows == {
        "context/query": "red shoes",
        "example 0/doc": "a",
        "example 0/rel": "2",
        "example 1/doc": "b",
        "example 1/rel": "0",
    }
    assert_clean(w, url)

    data = descriptor_set()
    path = tmp_path / "orders.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        for record in orders(runtime_class(data, "shop.Order")):
            writer.write(record)
    url = serve(path, message=tfr.load_message_class(data, message="shop.Order"))
    w = watched_page(browser, url)
    w.page.goto(url + "record?i=3")
    rows = card_rows(w)
    assert rows["order_id"] == "1003" and rows["note"] == '{"text": "gift 3 ✓"}'
    assert rows["total"] == '{"currency": "EUR", "cents": "597"}'
    assert_clean(w, url)


def test_the_static_page_of_a_logdir_from_disk(browser: Any, logdir: Path, tmp_path: Path) -> None:
    catalog = Catalog(logdir)
    page = write_report(catalog, tmp_path / "runs.html", n=20)
    catalog.close()
    url = Path(page).as_uri()
    w = Watched(browser, (url, "data:"))
    w.page.goto(url)
    assert w.page.locator("svg.lines polyline.series").count() == 2
    assert min(w.images_decoded()) > 0
    assert_clean(w, url)
