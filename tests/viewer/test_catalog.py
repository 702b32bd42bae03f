"""The viewer's data and pages without a browser: record numbers over many files, damage located
as verify_file locates it, searches that continue, and the static report written by the command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests.viewer._data import CLASSES, damage, write_images
from tests.viewer.test_html import Elements
from tfrecord_lite._records.verify import verify_file
from tfrecord_lite.viewer import Catalog, report_html
from tfrecord_lite.viewer.pages import PAGES

pytest.importorskip("PIL")  # the records hold images


@pytest.fixture
def folder(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    write_images(data / "a.tfrecord", 7)
    write_images(data / "b.tfrecord", 5)
    return data


def test_record_numbers_run_over_the_files(folder):
    catalog = Catalog(folder)
    assert len(catalog) == 12
    ids = [int(catalog.view(i).features["id"][0]) for i in range(12)]
    assert ids == list(range(7)) + list(range(5))
    f, local = catalog.locate(9)
    assert f.path.endswith("b.tfrecord") and local == 2
    with pytest.raises(IndexError, match="out of range"):
        catalog.locate(12)


def test_damage_is_located_as_verify_file_locates_it(tmp_path):
    path = write_images(tmp_path / "a.tfrecord", 40)
    with tfr.TFRecordFile(path, index=False) as f:
        hit = f.offset(17) + 20
    damage(path, hit)
    with pytest.raises(tfr.CorruptRecordError, match="offset"):  # on_error="raise", as every reader
        Catalog(path)
    catalog = Catalog(path, on_error="skip")
    (report,) = catalog.damage
    (span,) = verify_file(path).damage
    assert report.offset == span.offset and report.path == str(path)
    assert report.record == 17  # the first good record after the damage is numbered 17 now
    assert len(catalog) == 39
    page = Elements(PAGES["/"](catalog, {}))
    assert str(span.offset) in page.text and "17" in page.text


def test_damage_goes_to_a_callable_and_max_skipped_counts_over_the_files(tmp_path):
    for name in ("a", "b"):
        path = write_images(tmp_path / f"{name}.tfrecord", 20)
        with tfr.TFRecordFile(path, index=False) as f:
            hit = f.offset(5) + 20
        damage(path, hit)
    seen = []
    catalog = Catalog(tmp_path, on_error=seen.append)
    assert len(seen) == len(catalog.damage) == 2 and len(catalog) == 38
    assert Catalog(tmp_path, on_error="skip", max_skipped=2).damage == catalog.damage
    with pytest.raises(tfr.CorruptRecordError, match="max_skipped=1"):
        Catalog(tmp_path, on_error="skip", max_skipped=1)
    with pytest.raises(ValueError, match="max_skipped applies only"):
        Catalog(tmp_path, max_skipped=1)


def test_reader_options_reach_the_files(tmp_path):
    path = write_images(tmp_path / "a.tfrecord", 5)
    with pytest.raises(ValueError, match="is uncompressed, but compression='gzip' was given"):
        Catalog(path, compression="gzip")
    assert len(Catalog(path, compression=None, verify=False, statistics=False)) == 5
    gz = tmp_path / "b.tfrecord.gz"
    with tfr.TFRecordWriter(gz, compression="gzip") as w:
        w.write_example({"label": 1})
        w.write_example({"label": b"x" * 5000})
    with pytest.raises(tfr.RecordTooLargeError):
        Catalog(gz, compression="gzip", max_record_bytes=1000)
    assert len(Catalog(gz, compression="GZIP")) == 2


def test_the_command_lists_damage_unless_told_to_raise(tmp_path):
    path = write_images(tmp_path / "a.tfrecord", 20)
    with tfr.TFRecordFile(path, index=False) as f:
        hit = f.offset(5) + 20
    damage(path, hit)
    out = tmp_path / "report.html"
    listed = run_cli("view", str(path), "--html", str(out))
    assert listed.returncode == 0, listed.stderr
    assert f"<td>{hit - 20}</td>" in out.read_text("utf-8")  # the damaged span's offset, on the overview
    raised = run_cli("view", str(path), "--html", str(out), "--on-error", "raise")
    assert raised.returncode != 0 and "a.tfrecord" in raised.stderr
    assert run_cli("view", str(path), "--html", str(out), "--max-skipped", "0").returncode != 0


def test_a_record_damaged_after_indexing_shows_its_error(tmp_path):
    path = write_images(tmp_path / "a.tfrecord", 10)
    with tfr.TFRecordFile(path) as f:  # the sidecar is written
        hit = f.offset(4) + 20
    stat = path.stat()
    damage(path, hit)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the sidecar still looks fresh
    catalog = Catalog(path)
    assert catalog.damage == []
    view = catalog.view(4)
    assert view.error is not None and "offset" in view.error and str(path) in view.error
    assert catalog.view(5).error is None


def test_search_finds_values_and_continues(folder):
    catalog = Catalog(folder)
    first = catalog.search("image/class/text", "dog", 0, limit=2)
    assert first.found == [1, 4] and first.next_start == 5
    rest = catalog.search("image/class/text", "dog", first.next_start, limit=10)
    assert rest.found == [8, 11] and rest.next_start is None
    assert catalog.search("id", "3", 0).found == [3, 10]
    assert catalog.search("id", "not a number", 0).found == []


def test_labels_are_counted(folder):
    key, counts, scanned = Catalog(folder).labels()
    assert key == "image/class/label" and scanned == 12
    assert counts == {"0": 5, "1": 4, "2": 3}


def test_pages_clamp_what_the_query_says(folder):
    catalog = Catalog(folder)
    for path, render in PAGES.items():
        for query in ({}, {"start": "-5", "i": "99999", "label": "1"}, {"start": "x", "i": "y", "key": "id"}):
            assert "<html" in render(catalog, query), path


def test_the_command_writes_one_self_contained_page(folder, tmp_path):
    out = tmp_path / "report.html"
    result = run_cli("view", str(folder), "--html", str(out), "--records", "6")
    assert result.returncode == 0, result.stderr
    page = Elements(out.read_text("utf-8"))
    assert len(page.named("img")) == 12  # six records and their six grid cells
    assert all((a["src"] or "").startswith("data:") for a in page.named("img"))
    assert page.named("script") == [] and [a["href"] for a in page.named("link")] == ["data:,"]
    assert all(not (a.get("href") or "").startswith(("http", "/", "record", "grid")) for a in page.named("a"))
    assert any(CLASSES[2] in text for text in page.text)  # the label, escaped, shown as written
    assert out.read_text("utf-8") == report_html(Catalog(folder), n=6)


def test_the_command_serves_on_localhost_until_interrupted(folder):
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfrecord_lite", "view", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        # a shell that starts a run in the background ignores SIGINT, and the child would inherit that:
        # Ctrl-C is what this test sends, so the child gets the default disposition back
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        line = proc.stdout.readline()
        url = line.split(" at ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "record?i=11", timeout=30) as response:
            assert b"Record 11" in response.read()
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(url + "../etc/passwd", timeout=30)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def test_the_label_chart_names_the_classes_the_records_name(folder):
    from tfrecord_lite.viewer.pages import labels_html

    html = labels_html(Catalog(folder))
    assert "cat (0)" in html and "dog (1)" in html and "&lt;b&gt;bird&lt;/b&gt; (2)" in html
    assert ">cat (0)</a>" in html  # the grid links say the name and search the id
    assert 'label=0"' in html or "label=0&" in html


def test_a_record_number_out_of_range_is_said_to_be(folder):
    catalog = Catalog(folder)
    page = PAGES["/record"](catalog, {"i": "99999"})
    assert "record 99999 is out of range: the dataset holds 12 records (0 to 11); showing record 11" in page
    assert "out of range" not in PAGES["/record"](catalog, {"i": "3"})
