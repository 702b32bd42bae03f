"""The record views (tfrecord_lite/_html): every value escaped, long values cut behind an
expander, images of every browser format and raw pixels made thumbnails, other bytes never."""

from __future__ import annotations

import base64
import importlib.util
import io
from html.parser import HTMLParser

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests.viewer._data import FORMATS, HOSTILE, encoded_image, hostile_record, raw_record
from tfrecord_lite._html.records import RecordView, record_card, records_table
from tfrecord_lite._html.values import EXPANDED_ITEMS, INLINE_ITEMS, value_html


class Elements(HTMLParser):
    """The tags, attributes and text of an HTML string."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def card(record: bytes) -> Elements:
    context = tfr.decode_example(record)
    return Elements(record_card(RecordView("0", context)))


def test_hostile_keys_and_values_stay_text():
    page = card(hostile_record())
    assert page.named("script") == []
    assert all("onerror" not in attrs for _, attrs in page.tags)
    assert sum(HOSTILE in text for text in page.text) >= 2  # the key and the value, shown as written
    table = Elements(records_table([RecordView("0", tfr.decode_example(hostile_record()))]))
    assert table.named("script") == [] and all("onerror" not in a for _, a in table.tags)


@settings(max_examples=50)
@given(st.text(max_size=40), st.binary(max_size=40))
def test_any_text_or_bytes_is_escaped(key, value):
    page = card(tfr.encode_example({key: [value], key + "s": [key.encode("utf-8", "surrogatepass")]}))
    allowed = {"div", "h3", "table", "tr", "th", "td", "span", "code", "details", "summary", "img", "br"}
    assert {tag for tag, _ in page.tags} <= allowed
    assert all((attrs["src"] or "").startswith("data:image/") for attrs in page.named("img"))  # bytes like an image


def test_long_arrays_are_cut_behind_an_expander():
    values = np.arange(100_000)
    html = value_html(values)
    page = Elements(html)
    assert len(page.named("details")) == 1
    shown = [int(v) for v in "".join(page.text).replace("…", "").replace("(", " ").split(",") if v.strip().isdigit()]
    assert shown[:INLINE_ITEMS] == list(range(INLINE_ITEMS))
    assert len(shown) <= EXPANDED_ITEMS
    assert f"{100_000 - EXPANDED_ITEMS} more" in html
    assert len(html) < 10_000
    assert "details" not in value_html(np.arange(INLINE_ITEMS))


def test_text_and_binary_bytes():
    assert "héllo" in value_html([b"h\xc3\xa9llo"])
    binary = value_html([bytes(range(256))])
    assert "00 01 02" in binary and "(256 bytes)" in binary
    long_text = value_html([b"x" * 100_000])
    assert "<details" in long_text and len(long_text) < 6_000


def thumbnails(record: bytes) -> list[bytes]:
    """The images the card of `record` embeds, decoded from their data URIs."""
    page = card(record)
    uris = [attrs["src"] or "" for attrs in page.named("img")]
    assert all(uri.startswith("data:image/") for uri in uris)
    return [base64.b64decode(uri.split(",", 1)[1]) for uri in uris]


@pytest.mark.parametrize("fmt", FORMATS)
def test_encoded_images_under_any_key_are_embedded_as_they_are(fmt):
    pytest.importorskip("PIL")
    image = encoded_image(fmt, (10, 200, 30))
    assert thumbnails(tfr.encode_example({"any/key": [image], "other": [b"text"]})) == [image]


@pytest.mark.parametrize(("shape", "tf_keys"), [((5, 7, 3), True), ((4, 6, 1), False), ((3, 3, 4), True)])
def test_raw_pixels_become_png_thumbnails(shape, tf_keys):
    Image = pytest.importorskip("PIL.Image")

    (png,) = thumbnails(raw_record(*shape, tf_keys=tf_keys))
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.size == (shape[1], shape[0])
    expected = np.arange(np.prod(shape), dtype=np.uint8).reshape(shape)
    assert np.array_equal(np.asarray(image).reshape(shape), expected)


def test_raw_pixels_without_pillow_are_described():
    if importlib.util.find_spec("PIL") is not None:
        pytest.skip("Pillow is installed (the tf environment, which has none, runs this test)")
    page = card(raw_record(5, 7, 3))
    assert page.named("img") == []
    assert "raw image 5x7x3: install Pillow to see it" in "".join(page.text)


def test_bytes_that_are_no_image_get_no_thumbnail():
    wrong_size = tfr.encode_example({"image_raw": [bytes(10)], "height": [2], "width": [2], "depth": [3]})
    not_uint8 = tfr.encode_example({"image/encoded": [bytes(12)], "image/height": [2], "image/width": [2],
                                    "image/channels": [3], "image/dtype": [b"float32"]})  # fmt: skip
    blob = tfr.encode_example({"blob": [b"\x00\x01" * 50]})
    for record in (wrong_size, not_uint8, blob):
        assert thumbnails(record) == []


def test_sequence_examples_show_context_and_steps():
    record = tfr.encode_sequence_example({"id": [7]}, {"tokens": [[1, 2], [3], [4, 5, 6]]})
    context, lists = tfr.decode_sequence_example(record)
    page = Elements(record_card(RecordView("0", context, lists)))
    assert "feature lists" in page.text and "3 steps" in page.text and "tokens" in page.text
