# DatasetStatistics.to_html(): one well-formed fragment (checked with html.parser: every element
# closed in order), its CSS scoped under .tfrls, its charts inline SVG, nothing fetched or run;
# the label-like feature's values drawn as bars with their counts.
from __future__ import annotations

from html.parser import HTMLParser

import numpy as np

import tfrecord_lite as tfr

VOID = {"br", "hr", "img", "meta", "link", "input", "col", "wbr"}


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.roots = 0

    def handle_starttag(self, tag, attrs):
        if not self.stack:
            self.roots += 1
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def _parse(fragment: str) -> _Tree:
    tree = _Tree()
    tree.feed(fragment)
    tree.close()
    assert not tree.stack and tree.roots == 1
    return tree


def _dataset(tmp_path):
    rng = np.random.default_rng(0)
    path = str(tmp_path / "d.tfrecord")
    with tfr.TFRecordWriter(path) as writer:
        for i in range(500):
            writer.write_example(
                {
                    "target": int(rng.choice([0, 1, 1, 2, 2, 2])),
                    "score": rng.standard_normal(2).astype(np.float32),
                    "text": b"<script>alert('%d')</script>" % (i % 4),
                }
            )
    return tfr.statistics(path)


def test_fragment_is_well_formed_scoped_and_static(tmp_path):
    stats = _dataset(tmp_path)
    fragment = stats.to_html()
    assert fragment == stats._repr_html_()
    tree = _parse(fragment)
    tags = [tag for tag, _ in tree.tags]
    assert tags[0] == "div" and tree.tags[0][1]["class"] == "tfrls"
    assert "script" not in tags and "<script>" not in fragment  # values are escaped
    assert "&lt;script&gt;" in fragment
    for _, attrs in tree.tags:
        assert "src" not in attrs and "href" not in attrs  # nothing fetched
        for name in (attrs.get("class") or "").split():
            assert name == "tfrls" or name.startswith("tfrls-")
    css = fragment[fragment.index("<style>") + 7 : fragment.index("</style>")]
    rules = [rule.split("{")[0] for rule in css.split("}") if "{" in rule]
    assert rules and all(sel.strip().startswith(".tfrls") for rule in rules for sel in rule.split(","))
    assert tags.count("svg") >= 4 and tags.count("rect") > 20


def test_label_distribution_bars_carry_the_counts(tmp_path):
    stats = _dataset(tmp_path)
    tree = _parse(stats.to_html())
    titles = [t for t in tree.text if t.startswith(("0: ", "1: ", "2: "))]
    top = {str(t.value): t.count for t in stats["target"].categories.top}
    for value, count in top.items():
        assert f"{value}: {count:,}" in titles
    assert "distribution of target" in tree.text
