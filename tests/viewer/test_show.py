"""Notebook views (`show`, `TFRecordFile._repr_html_`) and the short reprs of the public objects."""

from __future__ import annotations

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests.viewer._data import image_record, write_images
from tests.viewer.test_html import Elements
from tfrecord_lite.images import ImageRecord, parse_image_record

pytest.importorskip("PIL")  # the records hold images


def shown_ids(view: tfr.RecordsView) -> list[int]:
    return [int(v.features["id"][0]) for v in view.views]


@pytest.fixture
def files(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    write_images(folder / "a.tfrecord", 4)
    with tfr.TFRecordWriter(folder / "b.tfrecord") as w:
        for i in range(4, 10):
            w.write(image_record(i))
    return folder


def test_show_takes_paths_folders_globs_files_and_records(files):
    a = str(files / "a.tfrecord")
    assert shown_ids(tfr.show(a, n=3)) == [0, 1, 2]
    assert shown_ids(tfr.show(files, n=6)) == [0, 1, 2, 3, 4, 5]  # on into the next file
    assert shown_ids(tfr.show(str(files / "*.tfrecord"), n=100)) == list(range(10))
    with tfr.TFRecordFile(files / "b.tfrecord") as f:
        assert shown_ids(tfr.show(f, n=2)) == [4, 5]
    records = list(tfr.iter_records(a))
    assert shown_ids(tfr.show(records)) == [0, 1, 2, 3]
    assert shown_ids(tfr.show(iter(records), n=1)) == [0]
    decoded = [tfr.decode_example(r) for r in records]
    assert shown_ids(tfr.show(decoded, n=2)) == [0, 1]


def test_show_features_picks_keys_or_decodes_with_a_spec(files):
    view = tfr.show(files, n=2, features=["id"])
    assert [list(v.features) for v in view.views] == [["id"], ["id"]]
    spec = {"id": tfr.FixedLenFeature([], "int64"), "image/class/label": tfr.FixedLenFeature([], "int64")}
    view = tfr.show(files, n=2, features=spec)
    assert [set(v.features) for v in view.views] == [set(spec)] * 2


def test_show_renders_a_table_with_thumbnails(files):
    view = tfr.show(files, n=3)
    page = Elements(view._repr_html_())
    assert len(page.named("img")) == 3
    assert len(page.named("tr")) == 4  # the header and three records
    assert repr(view) == f"RecordsView({str(files)!r}, 3 records)"


def test_show_shows_a_record_that_does_not_decode_as_its_error():
    view = tfr.show([image_record(0), b"\xff\xff garbage"])
    assert view.views[0].error is None
    assert "DecodeError" in (view.views[1].error or "")
    assert "DecodeError" in view._repr_html_()


def test_show_refuses_what_is_not_records():
    with pytest.raises(TypeError, match="serialized records or decoded dicts"):
        tfr.show([1, 2])
    with pytest.raises(ValueError, match="n must be"):
        tfr.show([], n=-1)


def test_a_tfrecord_file_in_a_notebook(tmp_path):
    path = write_images(tmp_path / "a.tfrecord", 20)
    with tfr.TFRecordFile(path) as f:
        page = Elements(f._repr_html_())
        text = " ".join(page.text)
        assert str(path) in text and "20" in text and str(path.stat().st_size) in text
        assert "none" in text and f.index_path in text
        assert len(page.named("img")) == 5  # the first records
    assert "closed" in f._repr_html_()


def test_reprs_stay_short_whatever_the_data(tmp_path):
    big = b"\x89PNG\r\n\x1a\n" + bytes(1_000_000)
    record = tfr.encode_example({"image/encoded": [big], "v": list(range(100_000))})
    image = parse_image_record(record)
    assert isinstance(image, ImageRecord)
    assert len(repr(image)) < 400 and "1000008 bytes" in repr(image)
    ragged = tfr.Ragged(np.arange(200_000), np.array([0, 100_000, 200_000]))
    assert len(repr(ragged)) < 400 and "100000 items" in repr(ragged)
    rows = tfr.Ragged(np.array([big, big], dtype=object), np.array([0, 1, 2]))
    assert len(repr(rows)) < 400
    path = tmp_path / "big.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        w.write(record)
    with tfr.TFRecordFile(path) as f:
        assert len(repr(f)) < 300
    shown = tfr.show([record])
    assert len(repr(shown)) < 100


def test_reports_show_many_damaged_spans_as_a_few(tmp_path):
    from tfrecord_lite._records.verify import VerifyReport
    from tfrecord_lite._stream.damage import Damage

    report = VerifyReport("x.tfrecord", 3, [Damage(i, i + 1, "bad CRC") for i in range(10_000)])
    assert len(repr(report)) < 500 and "10000 in all" in repr(report)


def test_show_shows_events_elwc_and_a_users_message(tmp_path):
    from tests.datasets.test_messages import descriptor_set, elwc, orders, runtime_class

    with tfr.TFRecordWriter(tmp_path / "lists.tfrecord") as writer:
        writer.write(elwc({"query": b"red shoes"}, [{"doc": b"a", "rel": 2}, {"doc": b"b", "rel": 0}]))
    lists = tfr.show(str(tmp_path / "lists.tfrecord")).views[0]
    assert lists.features["context/query"] == [b"red shoes"] and list(lists.features["example 1/rel"]) == [0]

    with tfr.events.EventWriter(tmp_path / "run") as writer:
        writer.add_scalar("loss", 0.25, 3)
    scalars = [v for v in tfr.show(str(tmp_path / "run"), n=10).views if "loss (scalar)" in v.features]
    assert len(scalars) == 1 and list(scalars[0].features["step"]) == [3] and "time (UTC)" in scalars[0].features
    assert list(scalars[0].features["loss (scalar)"]) == [0.25]

    (tmp_path / "shop.pb").write_bytes(descriptor_set())
    records = orders(runtime_class(descriptor_set(), "shop.Order"))
    order = tfr.load_message_class(tmp_path / "shop.pb", message="shop.Order")
    with tfr.TFRecordWriter(tmp_path / "orders.tfrecord") as writer:
        for record in records:
            writer.write(record)
    with tfr.TFRecordFile(tmp_path / "orders.tfrecord") as f:
        shown = tfr.show(f, n=4, message=order).views[3]
    assert shown.error is None and shown.features["note"] == [b'{"text": "gift 3 \xe2\x9c\x93"}']
    assert list(tfr.show(records, message=order).views[1].features["order_id"]) == [b"1001"]  # int64: text, as in JSON
    assert "shop.Order" in (tfr.show([b"\x0a\xff"], message=order).views[0].error or "")
    with pytest.raises(ValueError, match=r"features .* or message"):
        tfr.show(records, message=order, features=["order_id"])
