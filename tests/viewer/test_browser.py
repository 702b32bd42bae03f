"""The viewer in a real browser (headless Chromium through Playwright): thumbnails decode, the
label chart has its bars, the last record of a 100,000-record file is one click away, jump and
search work, damage is shown where it is, nothing is fetched from outside 127.0.0.1, no console
error, hostile records stay text; and the static --html page opened from disk does the same."""

from __future__ import annotations

import re

import pytest

from tests._cli import run_cli
from tests.viewer._data import CLASSES, damage, hostile_record, raw_record, write_images
from tests.viewer.browser import Watched, chromium
from tfrecord_lite import TFRecordWriter
from tfrecord_lite._records.verify import verify_file
from tfrecord_lite.viewer import Catalog, ViewerServer

pytestmark = pytest.mark.browser

BIG = 100_000

pytest.importorskip("PIL")  # the records hold images


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    return write_images(tmp_path_factory.mktemp("big") / "big.tfrecord", BIG)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """A folder with raw images, a hostile record and a damaged file."""
    folder = tmp_path_factory.mktemp("mixed")
    with TFRecordWriter(folder / "a.tfrecord") as w:
        w.write(raw_record(8, 10, 3))
        w.write(raw_record(6, 6, 1, tf_keys=False))
        w.write(hostile_record())
    bad = write_images(folder / "b.tfrecord", 30)
    damage(bad, 3_000)
    return folder


@pytest.fixture(scope="module")
def serve():
    servers = []

    def start(source):
        server = ViewerServer(Catalog(source, on_error="skip"))
        server.start()
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
        server.catalog.close()


@pytest.fixture(scope="module")
def big_url(serve, big_file):
    return serve(big_file)


@pytest.fixture
def watched(browser, big_url):
    url = big_url
    page = Watched(browser, (url, "data:"))
    yield page, url
    assert page.errors == []
    assert page.outside == []
    assert all(r.startswith((url, "data:")) for r in page.requests)
    page.close()


def test_overview_has_the_label_chart_and_the_files(watched):
    w, url = watched
    w.page.goto(url)
    assert w.page.locator("svg.chart rect.bar").count() == len(CLASSES)
    assert str(BIG) in w.page.locator("table.files").inner_text()


def test_records_page_to_the_last_record(watched):
    w, url = watched
    w.page.goto(url + "records")
    decoded = w.images_decoded()
    assert len(decoded) == 50 and min(decoded) > 0
    w.page.click("p.pager >> nth=0 >> a.last")
    labels = w.page.locator("table.records tbody th").all_inner_texts()
    assert labels[-1] == f"#{BIG - 1}"
    assert min(w.images_decoded()) > 0
    w.page.click("p.pager >> nth=0 >> a.previous")
    assert w.page.locator("table.records tbody th").first.inner_text() == f"#{BIG // 50 * 50 - 100}"


def test_jump_to_a_record(watched):
    w, url = watched
    w.page.goto(url)
    w.page.fill("input[name=i]", "54321")
    w.page.press("input[name=i]", "Enter")
    w.page.wait_for_url(re.compile(r"record\?i=54321"))
    assert w.page.locator("h2").inner_text() == "Record 54321"
    card = w.page.locator("table.features").inner_text()
    assert "54321" in card and CLASSES[54321 % 3] in card
    assert min(w.images_decoded()) > 0


def test_search_and_continue(watched):
    w, url = watched
    w.page.goto(url + "search")
    w.page.fill("input[name=key]", "id")
    w.page.fill("input[name=value]", "123")
    w.page.click("form[action=search] button")
    w.page.wait_for_url(re.compile(r"search\?key=id"))
    assert w.page.locator("p.found").inner_text() == "1 record(s) found"
    assert w.page.locator("table.records tbody th").all_inner_texts() == ["#123"]
    w.page.click("a.continue")  # the scan goes on where it stopped
    w.page.wait_for_url(re.compile(r"start=\d+"))
    assert w.page.locator("p.found").inner_text() == "0 record(s) found"
    assert w.page.locator("a.continue").count() == 1


def test_grid_by_label(watched):
    w, url = watched
    w.page.goto(url)
    w.page.click("div.labels a >> text=2")
    w.page.wait_for_url(re.compile(r"grid\?label=2"))
    cells = w.page.locator("div.cell").all_inner_texts()
    assert len(cells) == 50 and all(text.endswith(" 2") for text in cells)
    assert min(w.images_decoded()) > 0


def test_damage_raw_images_and_hostile_records(browser, serve, mixed):
    url = serve(mixed)
    w = Watched(browser, (url, "data:"))
    w.page.goto(url)
    damage_rows = w.page.locator("table.damage-table tr.damage").all_inner_texts()
    (span,) = verify_file(mixed / "b.tfrecord").damage
    assert len(damage_rows) == 1 and str(mixed / "b.tfrecord") in damage_rows[0]
    assert str(span.offset) in damage_rows[0]
    w.page.goto(url + "records")
    assert len(w.images_decoded()) >= 3 and min(w.images_decoded()) > 0  # raw pixels made PNGs
    assert w.page.evaluate("window.__pwned") is None
    assert w.errors == [] and w.outside == []
    w.close()


def test_static_report_from_disk(browser, mixed, tmp_path):
    out = tmp_path / "report.html"
    assert run_cli("view", str(mixed), "--html", str(out), "--records", "20").returncode == 0
    w = Watched(browser, ("file://", "data:"))
    w.page.goto(out.as_uri())
    decoded = w.images_decoded()
    assert len(decoded) >= 20 and min(decoded) > 0
    assert w.page.locator("svg.chart rect.bar").count() == len(CLASSES)
    assert w.page.locator("table.damage-table tr.damage").count() == 1
    assert w.page.evaluate("window.__pwned") is None
    assert w.errors == [] and w.outside == []
    w.close()


def test_a_tensorflow_datasets_folder(browser, serve, tmp_path_factory):
    from tests._tfds import write_tfds_folder

    classes = ("cat", "dog", "fox")
    folder = write_tfds_folder(tmp_path_factory.mktemp("tfds"), name="pets", version="1.0.0", shape=(20, 20, 3),
                               classes=classes, splits={"train": (30, 30), "test": (10,)})  # fmt: skip
    url = serve(folder)
    w = Watched(browser, (url, "data:"))
    w.page.goto(url)
    rows = w.page.locator("table.splits tbody tr").all_inner_texts()
    assert [row.split("\t")[:2] for row in rows] == [["train", "60"], ["test", "10"]]
    assert "ClassLabel" in w.page.locator("details.features").inner_text()
    assert w.page.locator("svg.chart rect.bar").count() == len(classes)
    w.page.click("table.splits a >> text=test")
    w.page.wait_for_url(re.compile(r"records\?start=60"))
    assert w.page.locator("table.records tbody th").first.inner_text() == "#60"
    decoded = w.images_decoded()
    assert len(decoded) == 10 and min(decoded) == 20  # the PNGs of TFDS's Image, drawn
    w.page.goto(url)
    w.page.click("div.labels a >> text=fox (2)")
    w.page.wait_for_url(re.compile(r"grid\?label=2"))
    cells = w.page.locator("div.cell").all_inner_texts()
    assert len(cells) == 23 and all(text.endswith("fox · 2") for text in cells)
    assert min(w.images_decoded()) > 0
    assert w.errors == [] and w.outside == []
    w.close()
