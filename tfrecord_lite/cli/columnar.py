"""`convert` between TFRecord and columnar files (Parquet, Arrow IPC, CSV), both ways: the
arguments and messages only; reading, decoding and writing batch by batch are the
library's (tfrecord_lite.arrow, tables, schema).
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from tfrecord_lite._datasets.schema import features_from_json, infer_features
from tfrecord_lite._datasets.sharded import shard_suffix
from tfrecord_lite._errors import FeatureError
from tfrecord_lite.cli.options import (
    UsageError,
    check_new,
    check_shards_new,
    output_compression,
    progress,
    say,
    shard_writer,
)

TABLE_FORMATS = ("parquet", "arrow", "csv")


def _arrow() -> tuple[Any, Any]:
    try:
        from tfrecord_lite import arrow
        from tfrecord_lite._datasets import tables as _tables
    except ImportError as err:
        raise UsageError(f"converting to or from columnar files needs pyarrow: {err}") from None
    return arrow, _tables


def _features(args: argparse.Namespace, paths: list[str]) -> dict[str, Any]:
    """--features FILE, or the spec inferred from every record in a first pass."""
    if args.features:
        try:
            with open(args.features, encoding="utf-8") as f:
                return features_from_json(json.load(f), args.features)
        except (OSError, ValueError) as err:
            raise UsageError(f"--features: {err}") from None
    say(args, "no --features: inferring the schema in a first pass over the records (--features FILE skips it)")
    records = (r for p in paths for r in _records(p, args.compression))
    spec = infer_features(progress(records, None, "schema", "rec", args.quiet))
    if not spec:
        raise UsageError("the records hold no features with a kind: nothing to convert")
    return spec


def _records(path: str, compression: str) -> Any:
    from tfrecord_lite._records.reader import iter_records

    return iter_records(path, compression=compression)


def _targets(args: argparse.Namespace, paths: list[str], fmt: str | None) -> list[tuple[list[str], str, str]]:
    """(inputs, output, format) per output file: one file, or one per input in a folder."""
    _, tables = _arrow()
    folder = os.path.isdir(args.output) or args.output.endswith(os.sep)
    if not folder:
        out_fmt = fmt or tables.columnar_format(args.output)
        if out_fmt is None:
            raise UsageError(f"{args.output}: give it a .parquet, .arrow or .csv extension, or --to parquet|arrow|csv")
        return [(paths, args.output, out_fmt)]
    if fmt is None:
        raise UsageError("converting into a folder needs --to parquet|arrow|csv (or none|gzip|zlib)")
    os.makedirs(args.output, exist_ok=True)
    stem = (os.path.basename(p).split(".")[0] for p in paths)
    return [([p], os.path.join(args.output, s + tables.SUFFIX[fmt]), fmt) for p, s in zip(paths, stem, strict=True)]


def to_table(args: argparse.Namespace, paths: list[str]) -> int:
    """TFRecord files -> Parquet / Arrow / CSV, streaming batch by batch (row groups of --batch-size)."""
    arrow, tables = _arrow()
    fmt = args.to if args.to in TABLE_FORMATS else None
    targets = _targets(args, paths, fmt)
    check_new([out for _, out, _ in targets], args.force, paths)
    spec = _features(args, paths)
    schema = arrow.pa.schema([(key, arrow.arrow_type(s)) for key, s in spec.items()])
    for inputs, out, out_fmt in targets:
        batches = arrow.iter_arrow_batches(inputs, spec, batch_size=args.batch_size, compression=args.compression)
        try:
            with tables.table_writer(out, out_fmt, schema, in_thread=True) as writer:
                for batch in progress(batches, None, "convert", "batch", args.quiet):
                    writer.write(batch)
        except FeatureError as err:
            raise UsageError(f"{out}: {err}") from None
        say(args, f"{' '.join(inputs)} -> {out} ({out_fmt}, {writer.rows} rows)")
    return 0


def from_table(args: argparse.Namespace, paths: list[str]) -> int:
    """Parquet / Arrow / CSV files -> TFRecord: one file, or shards with --shards / --max-records / --max-bytes."""
    arrow, tables = _arrow()
    if args.to in TABLE_FORMATS:
        raise UsageError("the inputs are columnar files: --to takes none, gzip or zlib here")
    sharded = args.shards is not None or args.max_records is not None or args.max_bytes is not None
    batches = progress(
        (b for p in paths for b in tables.iter_table_batches(p, args.batch_size)), None, "convert", "batch", args.quiet
    )
    if sharded:
        check_shards_new(args.output, shard_suffix(args.to), paths)
        with shard_writer(args, args.output) as writer:
            n = _write(arrow, batches, writer, args.strict)
        say(args, f"wrote {n} records to {len(writer.paths)} shards")
        return 0
    from tfrecord_lite._records.writer import TFRecordWriter
    from tfrecord_lite._storage.publish import open_publication

    check_new([args.output], args.force, paths)
    with (
        open_publication(args.output) as publication,
        TFRecordWriter(publication.file(args.output), output_compression(args.to, args.output) or None) as single,
    ):
        n = _write(arrow, batches, single, args.strict)
    say(args, f"{' '.join(paths)} -> {args.output} ({n} records)")
    return 0


def _write(arrow: Any, batches: Any, writer: Any, strict: bool) -> int:
    n = 0
    for batch in batches:
        for record in arrow.encode_arrow(batch, strict=strict):
            writer.write(record)
            n += 1
    return n
