"""`convert` between TFRecord and columnar files (Parquet, Arrow IPC, CSV), both ways: the
arguments and messages only; reading, decoding and writing batch by batch are the
library's (_arrow: batches, tables; _datasets: schema).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Iterator
from typing import Any

from tfrecord_lite._arrow.tables import SUFFIX, columnar_format, iter_table_batches, write_examples_table
from tfrecord_lite._compression.kinds import choices
from tfrecord_lite._datasets.schema import collect_schema, schema_specs, specs_from_json
from tfrecord_lite._datasets.sharded import shard_suffix
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._records.reader import read_records
from tfrecord_lite._repr import plural
from tfrecord_lite.cli.options import (
    UsageError,
    check_new,
    check_shards_new,
    first_pass_policy,
    output_compression,
    policy_of,
    progress,
    reading,
    say,
    shard_writer,
)

TABLE_FORMATS = ("parquet", "arrow", "csv")


def _arrow() -> Any:
    """The library's Arrow conversions (arrow_batches), or a usage error saying pyarrow is missing."""
    try:
        import pyarrow  # noqa: F401  # _arrow imports it at first use: ask for it here, where it can be said

        from tfrecord_lite._arrow import batches as arrow_batches
    except ImportError as err:
        raise UsageError(f"converting to or from columnar files needs pyarrow: {err}") from None
    return arrow_batches


Specs = tuple[dict[str, Any], dict[str, Any] | None]  # (features or context, feature lists or None)


def _features(args: argparse.Namespace, paths: list[str]) -> Specs:
    """--features FILE, or the specs inferred from every record in a first pass (with those of
    the feature lists where the records are SequenceExamples)."""
    if args.features:
        try:
            with open(args.features, encoding="utf-8") as f:
                return specs_from_json(json.load(f), args.features)
        except (OSError, ValueError) as err:
            raise UsageError(f"--features: {err}") from None
    say(args, "no --features: inferring the schema in a first pass over the records (--features FILE skips it)")
    policy = first_pass_policy(args)
    numbering = _Numbering()
    records = (r for p in paths for r in numbering.counted(read_records(p, policy, **reading(args)), p))
    try:
        context, lists = schema_specs(collect_schema(progress(records, None, "schema", "rec", args.quiet), None))
    except FeatureError as err:  # two kinds of one feature: bad data, each record named in its file
        raise FeatureError(err.key, numbering.in_files(err.detail)) from None
    if not context and not lists:
        raise UsageError("the records hold no features with a kind: nothing to convert")
    return context, lists or None


class _Numbering:
    """The records of several files read one after the other, numbered over all of them: where
    each file's records begin, to name "record N" as the record of its file."""

    def __init__(self) -> None:
        self.starts: list[tuple[int, str]] = []  # (number of the file's first record, file)
        self.total = 0

    def counted(self, records: Iterator[bytes], path: str) -> Iterator[bytes]:
        self.starts.append((self.total, path))
        for record in records:
            self.total += 1
            yield record

    def in_files(self, message: str) -> str:
        """`message` with each "record N" named as the record of its file."""

        def local(match: re.Match[str]) -> str:
            n = int(match.group(1))
            first, path = next(((f, p) for f, p in reversed(self.starts) if f <= n), (0, "?"))
            return f"record {n - first} of {path}"

        return re.sub(r"record (\d+)", local, message)


def _targets(args: argparse.Namespace, paths: list[str], fmt: str | None) -> list[tuple[list[str], str, str]]:
    """(inputs, output, format) per output file: one file, or one per input in a folder."""
    folder = os.path.isdir(args.output) or args.output.endswith(os.sep)
    if not folder:
        out_fmt = fmt or columnar_format(args.output)
        if out_fmt is None:
            raise UsageError(f"{args.output}: give it a .parquet, .arrow or .csv extension, or --to parquet|arrow|csv")
        return [(paths, args.output, out_fmt)]
    if fmt is None:
        raise UsageError(f"converting into a folder needs --to parquet|arrow|csv (or {choices(sep='|')})")
    os.makedirs(args.output, exist_ok=True)
    stem = (os.path.basename(p).split(".")[0] for p in paths)
    return [([p], os.path.join(args.output, s + SUFFIX[fmt]), fmt) for p, s in zip(paths, stem, strict=True)]


def to_table(args: argparse.Namespace, paths: list[str]) -> int:
    """TFRecord files -> Parquet / Arrow / CSV, streaming batch by batch (row groups of --batch-size)."""
    _arrow()
    fmt = args.to if args.to in TABLE_FORMATS else None
    targets = _targets(args, paths, fmt)
    check_new([out for _, out, _ in targets], args.force, paths)
    spec, lists = _features(args, paths)
    for inputs, out, out_fmt in targets:
        try:
            rows = write_examples_table(
                inputs,
                out,
                out_fmt,
                spec,
                sequence_features=lists,
                batch_size=args.batch_size,
                progress=lambda batches, total: progress(batches, total, "convert", "batch", args.quiet),
                policy=policy_of(args),
                **reading(args),
            )
        except FeatureError as err:
            if err.record is not None:  # a record that does not fit the spec: bad data, named where it is
                raise
            raise UsageError(f"{out}: {err}") from None
        say(args, f"{' '.join(inputs)} -> {out} ({out_fmt}, {plural(rows, 'row')})")
    return 0


def from_table(args: argparse.Namespace, paths: list[str]) -> int:
    """Parquet / Arrow / CSV files -> TFRecord: one file, or shards with --shards / --max-records / --max-bytes."""
    arrow_batches = _arrow()
    if args.to in TABLE_FORMATS:
        raise UsageError(f"the inputs are columnar files: --to takes {choices()} here")
    sharded = args.shards is not None or args.max_records is not None or args.max_bytes is not None
    lists = [key for key in (args.feature_lists or "").split(",") if key]
    batches = progress(
        (b for p in paths for b in iter_table_batches(p, args.batch_size)), None, "convert", "batch", args.quiet
    )
    try:
        if sharded:
            check_shards_new(args.output, shard_suffix(args.to), paths)
            with shard_writer(args, args.output) as writer:
                for record in arrow_batches.iter_encoded(batches, args.strict, lists):
                    writer.write(record)
            say(args, f"wrote {plural(writer.records_written, 'record')} to {plural(len(writer.paths), 'shard')}")
            return 0
        check_new([args.output], args.force, paths)
        compression = output_compression(args.to, args.output) or None
        n = arrow_batches.write_arrow(
            batches, args.output, compression=compression, strict=args.strict, feature_lists=lists
        )
    except KeyError as err:  # --feature-lists names a column the files lack
        raise UsageError(f"--feature-lists: {err.args[0]}") from None
    say(args, f"{' '.join(paths)} -> {args.output} ({plural(n, 'record')})")
    return 0
