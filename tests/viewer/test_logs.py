"""The viewer on records of other types: a TensorBoard logdir (runs, tags, kinds, charts of the
scalars, a page per tag, each event record shown as its values; TensorFlow's stored logdir and
EventWriter's), ELWC records (context and examples) and a user's own message (its fields), in the
Catalog, its pages, the static report and the view command."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests.conftest import DATA_DIR
from tests.datasets.test_messages import descriptor_set, elwc, orders, runtime_class
from tests.events.test_read import event, simple, write_events
from tfrecord_lite._html.lines import MAX_POINTS
from tfrecord_lite.events import EventWriter, read_events
from tfrecord_lite.viewer import Catalog, report_html
from tfrecord_lite.viewer.logs import MAX_TAG_ROWS, SERIES_POINTS
from tfrecord_lite.viewer.pages import PAGES

TF_LOGDIR = DATA_DIR / "tensorboard" / "logdir"
HOSTILE_TAG = '<script>alert("tag")</script>'


def write_log(root: Path, steps: int = 6) -> Path:
    """Two runs (one nested) of scalars, a histogram, images and text, and a hostile tag."""
    rng = np.random.default_rng(0)
    for run, scale in (("train", 1.0), ("eval/seed-1", 2.0)):
        with EventWriter(root / run) as writer:
            for step in range(steps):
                writer.add_scalar("loss", scale / (step + 1), step, wall_time=1e9 + step)
                writer.add_histogram("weights", rng.normal(size=40), step, wall_time=1e9 + step)
                writer.add_image("sample", rng.integers(0, 255, (8, 10, 3), dtype=np.uint8), step, wall_time=1e9 + step)
                writer.add_text("note", f"step {step} of {run}", step, wall_time=1e9 + step)
            writer.add_scalar(HOSTILE_TAG, 1.0, 0)
    return root


def page_of(catalog: Catalog, path: str, **query: Any) -> str:
    return PAGES[path](catalog, {k: str(v) for k, v in query.items()})


def test_a_logdir_shows_its_runs_tags_kinds_and_scalar_charts(tmp_path: Path) -> None:
    logdir = write_log(tmp_path / "logs")
    catalog = Catalog(logdir)
    assert catalog.log is not None and sorted(catalog.log.runs) == ["eval/seed-1", "train"]
    assert len(catalog) == sum(1 for path in logdir.rglob("*tfevents*") for _ in tfr.iter_records(str(path)))
    html = page_of(catalog, "/")
    table = html.split('class="log-tags"', 1)[1]
    for run in ("train", "eval/seed-1"):
        for tag, kind in (("loss", "scalar"), ("weights", "histogram"), ("sample", "image"), ("note", "text")):
            assert re.search(rf"<td>{re.escape(run)}</td><td><a [^>]*>{tag}</a></td><td>{kind}</td><td>6</td>", table)
    assert html.count('<polyline class="series"') == 2  # the loss of both runs, one chart
    assert "step 5 of train" in table and 'src="data:image/png;base64,' in table
    assert HOSTILE_TAG not in html and "&lt;script&gt;" in html
    assert not list(logdir.rglob("*.tfrlidx"))  # nothing written into the log TensorBoard would read
    catalog.close()


def test_a_tags_page_lists_its_values_as_read_events_reads_them(tmp_path: Path) -> None:
    logdir = write_log(tmp_path / "logs", steps=250)
    catalog = Catalog(logdir)
    first = page_of(catalog, "/tag", run="eval/seed-1", tag="loss")
    rows = re.findall(r"<tr><td>(\d+)</td><td>([^<]+)</td><td>scalar</td><td>([^<]+)</td></tr>", first)
    expected = [r for r in read_events(logdir / "eval" / "seed-1") if r.tag == "loss"]
    assert [int(step) for step, _, _ in rows] == [r.step for r in expected[:100]]
    assert [float(v) for _, _, v in rows] == pytest.approx([r.value for r in expected[:100]], rel=1e-5)
    assert rows[0][1] == "2001-09-09 01:46:40 UTC"
    assert "values 0..99 of 250" in first and '<polyline class="series"' in first
    last = page_of(catalog, "/tag", run="eval/seed-1", tag="loss", start=200)
    assert "values 200..249 of 250" in last
    images = page_of(catalog, "/tag", run="train", tag="sample", start=0)
    assert images.count('<img class="thumb" alt="sample" src="data:image/png;base64,') == 100
    hostile = page_of(catalog, "/tag", run="train", tag=HOSTILE_TAG)
    assert "values 0..0 of 1" in hostile and HOSTILE_TAG not in hostile
    assert "no run" in page_of(catalog, "/tag", run="nope", tag="loss")
    catalog.close()


def test_event_records_show_their_values_with_the_runs_plugin_memory() -> None:
    catalog = Catalog(TF_LOGDIR)
    cards = [page_of(catalog, "/record", i=i) for i in range(len(catalog))]
    v2 = [card for card in cards if "/v2/" in card]
    # tf.summary writes the scalars plugin with a tag's first value only: every step is a scalar
    assert sum('<th class="key">loss (scalar)</th>' in card for card in v2) == 5
    assert not any("loss (tensor)" in card for card in cards)
    assert any('<th class="key">sample (image)</th>' in card and "data:image/png" in card for card in v2)
    assert any("step **3** ünïcode" in card for card in v2)
    assert all("time (UTC)" in card for card in cards if "wall_time" in card)
    overview = page_of(catalog, "/")
    assert "3 run(s)" in overview and "_hparams_/session_start_info" in overview
    catalog.close()


def test_a_long_scalar_series_is_thinned_to_a_bounded_chart(tmp_path: Path) -> None:
    with EventWriter(tmp_path / "run") as writer:
        for step in range(3 * SERIES_POINTS):
            writer.add_scalar("loss", float(step), step)
    catalog = Catalog(tmp_path)
    assert catalog.log is not None
    entry = catalog.log.summary().tags["run"]["loss"]
    assert entry.count == 3 * SERIES_POINTS and len(entry.steps) <= SERIES_POINTS
    assert entry.steps[0] == 0 and entry.steps == sorted(entry.steps)
    points = re.search(r'points="([^"]+)"', page_of(catalog, "/")).group(1).split()  # type: ignore[union-attr]
    assert len(points) <= MAX_POINTS
    catalog.close()


def test_the_static_report_of_a_logdir(tmp_path: Path) -> None:
    catalog = Catalog(write_log(tmp_path / "logs"))
    html = report_html(catalog, n=10)
    assert "TensorBoard log" in html and '<polyline class="series"' in html
    assert 'href="tag?' not in html  # no link into a server from a file
    catalog.close()


def test_elwc_records_show_their_context_and_examples(tmp_path: Path) -> None:
    path = tmp_path / "lists.tfrecord"
    with tfr.TFRecordWriter(path) as writer:
        writer.write(elwc({"query": b"red shoes"}, [{"doc": b"a", "rel": 2}, {"doc": b"b", "rel": 0}]))
    catalog = Catalog(path)
    card = page_of(catalog, "/record", i=0)
    for key, value in (("context/query", "red shoes"), ("example 0/doc", "a"), ("example 1/rel", "0")):
        assert re.search(rf'<th class="key">{re.escape(key)}</th><td><span class="[a-z]+">{value}</span>', card), key
    catalog.close()


def test_a_users_message_shows_its_fields(tmp_path: Path) -> None:
    (tmp_path / "shop.pb").write_bytes(descriptor_set())
    records = orders(runtime_class(descriptor_set(), "shop.Order"))
    with tfr.TFRecordWriter(tmp_path / "orders.tfrecord") as writer:
        for record in records:
            writer.write(record)
    cls = tfr.load_message_class(tmp_path / "shop.pb", message="shop.Order")
    catalog = Catalog(tmp_path / "orders.tfrecord", message=cls)
    card = page_of(catalog, "/record", i=3)
    assert '<th class="key">order_id</th><td><span class="text">1003</span>' in card
    assert '<th class="key">total</th><td><span class="text">{&quot;currency&quot;: &quot;EUR&quot;' in card
    assert "gift 3 ✓" in card
    records_page = page_of(catalog, "/records")
    assert "item_names" in records_page and "Statistics" not in page_of(catalog, "/")
    catalog.close()
    out = tmp_path / "orders.html"
    done = run_cli(
        "view", str(tmp_path / "orders.tfrecord"), "--proto", str(tmp_path / "shop.pb"), "--message", "shop.Order",
        "--html", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "gift 3 ✓" in out.read_text()
    wrong = run_cli("view", str(tmp_path / "orders.tfrecord"), "--proto", str(tmp_path / "shop.pb"))
    assert wrong.returncode == 2 and "--proto SET.pb and --message pkg.Msg go together" in wrong.stderr


def test_the_command_views_a_logdir(tmp_path: Path) -> None:
    out = tmp_path / "runs.html"
    done = run_cli("view", str(TF_LOGDIR), "--html", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert "TensorBoard log" in html and "metrics/accuracy" in html and "nested/v1" in html
    assert not list(TF_LOGDIR.rglob("*.tfrlidx"))


def test_a_logdir_of_thousands_of_runs_makes_a_bounded_overview(tmp_path: Path) -> None:
    for i in range(1500):
        write_events(tmp_path / f"sweep/{i:04d}" / "events.out.tfevents.1", event(i, simple(b"loss", float(i))))
    catalog = Catalog(tmp_path)
    html = page_of(catalog, "/")
    assert "1500 run(s), 1500 values" in html
    assert html.count('<a class="tag"') == MAX_TAG_ROWS and "500 more tags of runs not listed" in html
    assert html.count('class="series"') == 12 and "1488 more series not drawn" in html
    catalog.close()


def test_a_damaged_log_shows_its_good_values_and_says_what_is_wrong(tmp_path: Path) -> None:
    good, bad_tag = event(1, simple(b"loss", 0.5)), event(2, simple(b"\xffloss", 1.0))
    path = write_events(tmp_path / "run" / "events.out.tfevents.1", good, bad_tag, event(3, simple(b"loss", 0.25)))
    catalog = Catalog(tmp_path)
    html = page_of(catalog, "/")
    assert re.search(r"<td>run</td><td><a [^>]*>loss</a></td><td>scalar</td><td>2</td><td>1..3</td>", html)
    assert 'class="damage">run: the event&#x27;s tag is not UTF-8' in html
    card = page_of(catalog, "/record", i=1)
    assert "DecodeError: the event&#x27;s tag is not UTF-8" in card
    catalog.close()
    data = bytearray(path.read_bytes())
    data[-2] ^= 0xFF  # the last record's payload CRC
    path.write_bytes(bytes(data))
    catalog = Catalog(tmp_path, on_error="skip")
    assert len(catalog) == 2 and catalog.damage and "loss" in page_of(catalog, "/")
    catalog.close()


def test_runs_are_named_as_tensorboard_names_them_or_by_their_folders(tmp_path: Path) -> None:
    sources: list[tuple[Any, list[str]]] = [
        (TF_LOGDIR, ["hparams/trial-0", "nested/v1", "v2"]),
        ([TF_LOGDIR], ["hparams/trial-0", "nested/v1", "v2"]),
        (TF_LOGDIR / "v2", ["."]),
        ([TF_LOGDIR / "v2", TF_LOGDIR / "nested" / "v1"], ["nested/v1", "v2"]),  # two run folders
        ([TF_LOGDIR / "nested", TF_LOGDIR / "hparams"], ["hparams/trial-0", "nested/v1"]),  # two logdirs
    ]
    for source, runs in sources:
        catalog = Catalog(source)
        assert catalog.log is not None and sorted(catalog.log.runs) == runs, source
        catalog.close()
    examples = tmp_path / "pets.tfrecord"
    with tfr.TFRecordWriter(examples) as writer:
        writer.write_example({"label": [1]})
    catalog = Catalog(examples)
    assert catalog.log is None and "TensorBoard log" not in page_of(catalog, "/")
    catalog.close()
