"""The viewer's pages, rendered on the server as whole HTML documents linked to each other: the
overview, the record browser (a page of records, or one record), the image grid and search.

Strategy: every page is a function of the Catalog and the query's values, returning HTML, so the
server only routes and the static report reuses the same pieces. Links are relative (`records?
start=...`), forms use GET, and nothing is loaded from elsewhere: the style sheet is inline and
images are data URIs. Numbers from the query are clamped into range, never trusted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from urllib.parse import urlencode

from tfrecord_lite._html.charts import bar_chart
from tfrecord_lite._html.records import RecordView, record_card, records_table
from tfrecord_lite._html.style import page
from tfrecord_lite._html.values import esc
from tfrecord_lite._redact import redact
from tfrecord_lite.viewer.catalog import Catalog, as_texts, file_size, first_image
from tfrecord_lite.viewer.logs import summary_html, tag_body
from tfrecord_lite.viewer.tfds import overview_html

PAGE_SIZE = 50  # records on a page of the browser, images on a page of the grid
NAV = (("overview", "./"), ("records", "records"), ("grid", "grid"), ("search", "search"))

Query = Mapping[str, str]


def link(path: str, **params: object) -> str:
    return f"{path}?{urlencode(params)}" if params else path


def number(query: Query, name: str, default: int, low: int, high: int) -> int:
    """An int from the query, clamped to low..high; `default` when absent or not a number."""
    try:
        value = int(query.get(name, default))
    except ValueError:
        value = default
    return max(low, min(value, high))


def _frame(catalog: Catalog, title: str, body: str) -> str:
    nav = "".join(f'<a href="{href}">{name}</a>' for name, href in NAV)
    jump = (
        '<form action="record" method="get"><label>record <input name="i" type="number" min="0" '
        f'max="{max(0, len(catalog) - 1)}" size="8"></label> <button>go</button></form>'
    )
    return page(f"{title} — tfrecord-lite", f"<nav>{nav}{jump}</nav><h2>{esc(title)}</h2>{body}")


def files_table(catalog: Catalog) -> str:
    rows = []
    for path, f in zip(catalog.paths, catalog.files, strict=True):
        index = f.index_path or "in memory"
        rows.append(
            f"<tr><td>{esc(redact(path))}</td><td>{len(f)}</td><td>{esc(file_size(path))}</td>"
            f"<td>{esc(f.compression or 'none')}</td><td>{esc(index)}</td></tr>"
        )
    head = "<tr><th>file</th><th>records</th><th>bytes</th><th>compression</th><th>index</th></tr>"
    total = sum(file_size(p) or 0 for p in catalog.paths)
    summary = f"<p>{len(catalog.paths)} file(s), {len(catalog)} records, {total} bytes</p>"
    return f'{summary}<table class="files"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def damage_html(catalog: Catalog) -> str:
    if not catalog.damage:
        return ""
    rows = "".join(
        f'<tr class="damage"><td>{esc(d.path)}</td><td>{esc(d.offset)}</td><td>{d.record}</td>'
        f"<td>{esc(d.reason)}</td></tr>"
        for d in catalog.damage
    )
    head = "<tr><th>file</th><th>byte offset</th><th>before record</th><th>what is wrong</th></tr>"
    note = "<p>Damaged spans were skipped; the records around them are shown.</p>"
    return f'<h3 class="damage">Damage</h3>{note}<table class="damage-table"><thead>{head}</thead>{rows}</table>'


def labels_html(catalog: Catalog) -> str:
    key, counts, scanned = catalog.labels()
    if not key:
        return ""
    names = catalog.label_names
    named = {label: f"{names[label]} ({label})" if label in names else label for label in counts}
    chart = bar_chart([(named[label], n) for label, n in counts.items()], title=f"{key} (first {scanned} records)")
    links = " ".join(
        f'<a href="{esc(link("grid", label=label))}">{esc(named[label])}</a>' for label in sorted(counts)[:50]
    )
    return f'<div class="labels">{chart}<p>grid by label: {links}</p></div>'


def overview_body(catalog: Catalog) -> str:
    tfds = overview_html(catalog.tfds, catalog.splits) if catalog.tfds is not None else ""
    log = log_html(catalog)
    return tfds + files_table(catalog) + damage_html(catalog) + log + labels_html(catalog) + catalog.statistics_html()


def overview(catalog: Catalog, query: Query) -> str:
    return _frame(catalog, "Overview", overview_body(catalog))


def _pager(path: str, start: int, total: int, step: int, **params: object) -> str:
    last = max(0, (total - 1) // step * step)
    parts = [
        ("first", 0),
        ("previous", max(0, start - step)),
        ("next", min(last, start + step)),
        ("last", last),
    ]
    links = "".join(f'<a class="{name}" href="{esc(link(path, start=at, **params))}">{name}</a>' for name, at in parts)
    shown = f"records {start}..{min(total, start + step) - 1} of {total}"
    return f'<p class="pager">{links} <span class="note">{shown}</span></p>'


def records_body(catalog: Catalog, start: int, count: int) -> str:
    views = [catalog.view(i, href=link("record", i=i)) for i in range(start, min(len(catalog), start + count))]
    return records_table(views)


def records_page(catalog: Catalog, query: Query) -> str:
    start = number(query, "start", 0, 0, max(0, len(catalog) - 1))
    pager = _pager("records", start, len(catalog), PAGE_SIZE)
    return _frame(catalog, "Records", pager + records_body(catalog, start, PAGE_SIZE) + pager)


def record_page(catalog: Catalog, query: Query) -> str:
    if not len(catalog):
        return _frame(catalog, "Record", "<p>The dataset holds no records.</p>")
    i = number(query, "i", 0, 0, len(catalog) - 1)
    f, local = catalog.locate(i)
    split = catalog.split_of(i)
    example = f"{esc(split[0])} split, record {split[1]} in shard order: " if split is not None else ""
    where = f'<p class="note">{example}{esc(redact(f.path))}, record {local}, byte offset {f.offset(local)}</p>'
    if str(query.get("i", i)) != str(i):  # a number outside the dataset (or none): say which is shown
        asked = esc(str(query.get("i")))
        where = (
            f'<p class="damage">record {asked} is out of range: the dataset holds {len(catalog)} records '
            f"(0 to {len(catalog) - 1}); showing record {i}</p>" + where
        )
    steps = f'<p class="pager"><a class="previous" href="{link("record", i=max(0, i - 1))}">previous</a>'
    steps += f'<a class="next" href="{link("record", i=min(len(catalog) - 1, i + 1))}">next</a></p>'
    view = catalog.view(i)
    return _frame(catalog, f"Record {i}", steps + where + _class_note(catalog, view) + record_card(view))


def _class_note(catalog: Catalog, view: RecordView) -> str:
    """'label: fox (2)' for a record whose label has a class name, else nothing."""
    key = catalog.labels()[0] if view.error is None else ""
    label = as_texts(view.features.get(key))[:1] if key else []
    name = catalog.label_names.get(label[0]) if label else None
    return f'<p class="note class-name">{esc(key)}: {esc(name)} ({esc(label[0])})</p>' if name else ""


def grid_body(catalog: Catalog, numbers: list[int]) -> str:
    cells = []
    key = catalog.labels()[0]
    for i in numbers:
        view = catalog.view(i)
        image = first_image(view.features) if view.error is None else None
        if image is None:
            continue
        label = as_texts(view.features.get(key))[:1] if key else []
        name = catalog.label_names.get(label[0]) if label else None
        caption = esc(f"{name} · {label[0]}" if name else label[0]) if label else ""
        cells.append(
            f'<div class="cell"><a href="{link("record", i=i)}"><img class="thumb" alt="record {i}" '
            f'src="{image[1]}"></a><br>#{i} {caption}</div>'
        )
    return f'<div class="grid">{"".join(cells) or "<p>No images here.</p>"}</div>'


def grid_page(catalog: Catalog, query: Query) -> str:
    label = query.get("label", "")
    start = number(query, "start", 0, 0, max(0, len(catalog) - 1))
    key = catalog.labels()[0]
    if label and key:
        result = catalog.search(key, label, start, PAGE_SIZE, images=True)
        more = _continue("grid", result.next_start, result.scanned, label=label)
        name = catalog.label_names.get(label)
        title = f"Images labelled {name} ({label})" if name else f"Images labelled {label}"
        return _frame(catalog, title, grid_body(catalog, result.found) + more)
    pager = _pager("grid", start, len(catalog), PAGE_SIZE)
    numbers = list(range(start, min(len(catalog), start + PAGE_SIZE)))
    return _frame(catalog, "Images", pager + grid_body(catalog, numbers))


def _continue(path: str, next_start: int | None, scanned: int, **params: object) -> str:
    note = f'<p class="note">scanned {scanned} records (a streaming scan, a bounded number per request)</p>'
    if next_start is None:
        return note + '<p class="note">end of the dataset reached</p>'
    href = esc(link(path, start=next_start, **params))
    return f'{note}<p><a class="continue" href="{href}">continue from record {next_start}</a></p>'


def search_page(catalog: Catalog, query: Query) -> str:
    key, value = query.get("key", ""), query.get("value", "")
    form = (
        f'<form action="search" method="get"><label>feature <input name="key" value="{esc(key)}"></label> '
        f'<label>value <input name="value" value="{esc(value)}"></label> <button>search</button></form>'
        '<p class="note">Finds records whose feature equals the number, or whose text contains the value.</p>'
    )
    if not key:
        return _frame(catalog, "Search", form)
    start = number(query, "start", 0, 0, max(0, len(catalog) - 1))
    result = catalog.search(key, value, start, PAGE_SIZE)
    views = [catalog.view(i, href=link("record", i=i)) for i in result.found]
    found = f'<p class="found">{len(result.found)} record(s) found</p>'
    table = records_table(views) if views else ""
    more = _continue("search", result.next_start, result.scanned, key=key, value=value)
    return _frame(catalog, "Search", form + found + table + more)


def log_html(catalog: Catalog) -> str:
    """The overview's section of a TensorBoard log (nothing for other records)."""
    return "" if catalog.log is None else summary_html(catalog.log)


def tag_page(catalog: Catalog, query: Query) -> str:
    """A page of one tag's values in one run of a TensorBoard log."""
    run, tag = query.get("run", ""), query.get("tag", "")
    if catalog.log is None:
        return _frame(catalog, "Tag", "<p>These records are no TensorBoard log.</p>")
    start = number(query, "start", 0, 0, 1 << 62)
    return _frame(catalog, f"Tag {tag}", tag_body(catalog.log, run, tag, start))


def not_found(catalog: Catalog, path: str) -> str:
    return _frame(catalog, "Not found", f"<p>No page {esc(path)}.</p>")


PAGES: dict[str, Callable[[Catalog, Query], str]] = {
    "/": overview,
    "/records": records_page,
    "/record": record_page,
    "/grid": grid_page,
    "/search": search_page,
    "/tag": tag_page,
}
