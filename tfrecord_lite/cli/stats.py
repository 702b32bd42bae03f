"""The stats command: per-feature statistics of a dataset, as a plain-text table or JSON, and
optionally TFDV's statistics file. The work is tfrecord_lite.statistics; this module parses and
prints. By default it reads the first DEFAULT_RECORDS records (a quick look, under a second for
small records) and says so; --all reads everything, -n N the first N.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tfrecord_lite._redact import redact
from tfrecord_lite.cli.options import (
    PROG,
    _tqdm,
    add_command,
    add_inputs,
    add_reader_options,
    expand_inputs,
    positive_int,
    reader_options,
    say,
)
from tfrecord_lite.cli.output import printable

if TYPE_CHECKING:
    from tfrecord_lite._stats.results import DatasetStatistics, FeatureStatistics

DEFAULT_RECORDS = 100_000


def cmd_stats(args: argparse.Namespace) -> int:
    from tfrecord_lite._stats.collect import statistics
    from tfrecord_lite._stats.html import label_feature

    paths = expand_inputs(args.inputs)
    features = None
    if args.features is not None:
        features = [key.strip() for key in args.features.split(",") if key.strip()]
    limit = None if args.all else args.limit
    stats = statistics(
        paths,
        features=features,
        max_records=limit,
        progress=_tqdm(args.quiet) is not None,
        **reader_options(args),
    )
    if args.tfdv:
        stats.write_tfdv(args.tfdv)
        say(args, f"wrote TFDV statistics to {redact(args.tfdv)}")
    if args.json:
        print(stats.to_json(indent=2))
    else:
        print(render_text(stats, label_feature(stats)))
    if not stats.complete:
        say(args, f"statistics of the first {stats.records:,} records; --all reads every record")
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_command(
        sub,
        "stats",
        cmd_stats,
        "Per-feature statistics: presence, value counts, numbers (mean, std, quantiles), distinct and top "
        f"values, bytes lengths, image formats and sizes. Reads the first {DEFAULT_RECORDS:,} records unless "
        "--all or -n N.",
        f"  {PROG} stats train.tfrecord\n"
        f"  {PROG} stats data/ --all --json > stats.json\n"
        f"  {PROG} stats 'data/train-*.tfrecord' -n 5000 --features label,image/class/text",
    )
    add_inputs(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--all", action="store_true", help="read every record")
    g.add_argument("-n", dest="limit", type=positive_int, default=DEFAULT_RECORDS, metavar="N",
                   help=f"read the first N records (default: {DEFAULT_RECORDS:,})")  # fmt: skip
    p.add_argument("--features", metavar="A,B", help="only these features (comma-separated keys)")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON (DatasetStatistics.to_dict)")
    p.add_argument("--tfdv", metavar="OUT", help="also write TFDV's statistics file (needs tensorflow-metadata)")
    add_reader_options(p)


# ---------------------------------------------------------------- the text table


def _num(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:,}" if isinstance(value, int) else f"{value:.4g}"


def _summary(f: FeatureStatistics) -> str:
    if f.numbers is not None:
        n = f.numbers
        parts = [f"mean {_num(n.mean)}", f"std {_num(n.std)}", f"min {_num(n.min)}", f"median {_num(n.median)}"]
        parts += [f"max {_num(n.max)}"] + [f"{label} {v:,}" for label, v in (("zeros", n.zeros), ("NaN", n.nans)) if v]
        if f.categories is not None and f.categories.distinct <= 10 * len(f.categories.top):
            parts.append(_distinct(f))
        return ", ".join(parts)
    if f.lengths is not None:
        parts = [_distinct(f), f"length {_num(f.lengths.min)}..{_num(f.lengths.max)}"]
        if f.image is not None:
            formats = " ".join(f"{kind} {count:,}" for kind, count in f.image.formats.items())
            w, h = f.image.width, f.image.height
            parts.append(f"images: {formats}, {_num(w.min)}..{_num(w.max)} x {_num(h.min)}..{_num(h.max)} px")
        elif f.categories is not None and f.categories.top:
            top = f.categories.top[0]
            parts.append(f"top {top.text!r} ({top.count:,})")
        return ", ".join(parts)
    return "no values"


def _distinct(f: FeatureStatistics) -> str:
    assert f.categories is not None
    return ("" if f.categories.distinct_exact else "~") + f"{f.categories.distinct:,} distinct"


def render_text(stats: DatasetStatistics, label: FeatureStatistics | None) -> str:
    """The statistics as a plain-text report: the dataset, a line per feature, the label's values."""
    head = f"{stats.records:,} records ({stats.kind}) in {len(stats.files)} file(s), {stats.bytes:,} record bytes"
    if stats.skipped:
        head += f", {stats.skipped} damaged spans skipped"
    rows = [("feature", "kind", "present", "values", "summary")]
    for f in stats.features:
        share = f"{100 * f.present / stats.records:.1f}%" if stats.records else "-"
        vc = f.value_counts
        counts = _num(vc.min) if vc.min == vc.max else f"{_num(vc.min)}..{_num(vc.max)}"
        if f.sequence_lengths is not None:
            counts += f" x {_num(f.sequence_lengths.min)}..{_num(f.sequence_lengths.max)} steps"
        name = printable(f.name) + (" (list)" if f.section == "feature_lists" else "")
        rows.append((name, f.kind or "-", share, counts, _summary(f)))
    widths = [max(len(row[k]) for row in rows) for k in range(4)]
    lines = [head, ""]
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[k]) for k, cell in enumerate(row[:4])) + "  " + row[4])
    if label is not None and label.categories is not None:
        values = ", ".join(f"{t.text} {t.count:,}" for t in label.categories.top)
        lines += ["", f"{printable(label.name)}: {values}"]
    return "\n".join(lines)
