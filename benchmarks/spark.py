# Spark benchmark: spark.read.format("tfrecord") (tfrecord_lite.spark) against Spark's own Parquet
# reader on the same rows, and the write against Spark's Parquet writer, in one local[2] session.
#
#   .venvs/engines/bin/python benchmarks/spark.py [--rows N] [--rounds N] [--out FILE.json]
#
# The rows (id, label, score, an 8-float vector, a short string) are made by Spark once, written once as TFRecord
# parts (uncompressed, with sidecars) and as Parquet. A read round is load(...).selectExpr("count(*)", "sum(id)",
# "sum(score)").collect() over the whole folder; a write round writes every row (mode overwrite). The readers take
# turns round by round (_rounds.py). "rows" is the same reader yielding Python tuples instead of Arrow record batches:
# the Python Data Source API's row path, to show what the Arrow path saves; "parquet python" is Parquet read by
# pyarrow inside a Python data source, its files packed into partitions by the rule tfrecord_lite.spark plans by
# (Spark's): the API's own cost, with a decoder that costs nothing. For the write, "parquet
# python" writes the same rows as Parquet by pyarrow from a Python data source's Arrow writer (each task's batches
# streamed to one file): the API's write path with an encoder that costs almost nothing, the ceiling of any Python
# data source writer against Spark's Parquet writer. Prints rows/s (median and the lowest and highest round) and the
# ratios; checks every reader and every written copy gives the same count and sums. Writes the same as JSON (default
# benchmarks/results/spark.json). Nothing here asserts a speed.
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
from collections.abc import Callable, Iterator
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from _rounds import compare, spread, timed, turns

WORK = os.path.join(HERE, ".work", "spark")
DDL = "id long, label long, score float, vec array<float>, name string"


def session() -> Any:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.dirname(HERE), os.environ.get("PYTHONPATH")]))
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def rows_source() -> Any:
    """The "tfrecord" source yielding tuples (the row path) instead of Arrow batches."""
    from tfrecord_lite.spark import TFRecordDataSource

    class RowsSource(TFRecordDataSource):  # type: ignore[misc]
        @classmethod
        def name(cls) -> str:
            return "tfrecord_rows"

        def reader(self, schema: Any) -> Any:
            inner = super().reader(schema)

            class RowsReader(type(inner)):  # type: ignore[misc]
                def read(self, partition: Any) -> Iterator[tuple[Any, ...]]:
                    for batch in super().read(partition):
                        yield from zip(*(column.to_pylist() for column in batch.columns), strict=True)

            inner.__class__ = RowsReader
            return inner

    return RowsSource


def parquet_source(folder: str) -> Any:
    """Parquet read by pyarrow inside a Python data source: what the Python Data Source API costs
    by itself (its Arrow transfer to the JVM), with a decoder that costs almost nothing."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
    from pyspark.sql.pandas.types import to_arrow_schema

    class ParquetReader(DataSourceReader):  # type: ignore[misc]
        def __init__(self, schema: Any) -> None:
            self.target = to_arrow_schema(schema, timezone="UTC")

        def partitions(self) -> list[Any]:
            """The files packed into partitions by the rule tfrecord_lite.spark plans by (Spark's)."""
            from tfrecord_lite._datasets.pieces import Piece, pack_pieces, split_bytes

            names = sorted(n for n in os.listdir(folder) if n.endswith(".parquet"))
            pieces = [Piece(os.path.join(folder, n), os.path.getsize(os.path.join(folder, n))) for n in names]
            largest = split_bytes([p.size for p in pieces], 128 << 20, 4 << 20, os.cpu_count() or 1)
            return [InputPartition([p.path for p in group]) for group in pack_pieces(pieces, largest, 4 << 20)]

        def read(self, partition: Any) -> Iterator[Any]:
            import pyarrow.parquet as pq

            for path in partition.value:
                for batch in pq.ParquetFile(path).iter_batches(batch_size=10_000):
                    yield batch.cast(self.target)

    class ParquetSource(DataSource):  # type: ignore[misc]
        @classmethod
        def name(cls) -> str:
            return "parquet_python"

        def reader(self, schema: Any) -> Any:
            return ParquetReader(schema)

    return ParquetSource


def parquet_writer_source() -> Any:
    """Parquet written by pyarrow from a Python data source's Arrow writer: what the API's write
    path costs by itself (rows to Arrow batches in the JVM, sent to a Python worker), with an
    encoder that costs almost nothing. Each task streams its batches into one file."""
    from pyspark import TaskContext
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class ParquetWriter(DataSourceArrowWriter):  # type: ignore[misc]
        def __init__(self, folder: str, overwrite: bool) -> None:
            self.folder = folder
            if overwrite:  # on the driver, before the tasks: enough for a benchmark
                shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder, exist_ok=True)

        def write(self, iterator: Iterator[Any]) -> Any:
            import pyarrow.parquet as pq

            context = TaskContext.get()
            task = context.partitionId() if context else 0
            writer = None
            for batch in iterator:
                if writer is None:
                    path = os.path.join(self.folder, f"part-{task:05d}.parquet")
                    writer = pq.ParquetWriter(path, batch.schema)
                writer.write_batch(batch)
            if writer is not None:
                writer.close()
            return WriterCommitMessage()

    class ParquetSink(DataSource):  # type: ignore[misc]
        @classmethod
        def name(cls) -> str:
            return "parquet_python_writer"

        def writer(self, schema: Any, overwrite: bool) -> Any:
            return ParquetWriter(self.options["path"], overwrite)

    return ParquetSink


def make_data(spark: Any, rows: int) -> tuple[Any, str, str]:
    df = spark.range(rows, numPartitions=4).selectExpr(
        "id",
        "id % 10 AS label",
        "CAST(id % 1000 AS FLOAT) / 8 AS score",
        "transform(sequence(0, 7), i -> CAST(i + id % 3 AS FLOAT)) AS vec",
        "concat('name-', CAST(id % 100 AS STRING)) AS name",
    )
    tf_path, pq_path = os.path.join(WORK, f"tf-{rows}"), os.path.join(WORK, f"pq-{rows}")
    if not os.path.isdir(tf_path):
        df.write.format("tfrecord").mode("overwrite").save(tf_path)
    if not os.path.isdir(pq_path):
        df.write.mode("overwrite").parquet(pq_path)
    return df.cache(), tf_path, pq_path


def query(frame: Any) -> tuple[int, int, float]:
    count, total, score = frame.selectExpr("count(*)", "sum(id)", "sum(score)").collect()[0]
    return int(count), int(total), round(float(score), 3)


def run_rounds(fns: dict[str, Callable[[], Any]], n: int) -> tuple[dict[str, list[float]], dict[str, Any]]:
    results = {name: fn() for name, fn in fns.items()}  # warm-up, and the answers to compare
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _, name in turns(list(fns), n):
        seconds, _ = timed(fns[name])
        times[name].append(seconds)
    return times, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "spark.json"))
    args = parser.parse_args()
    spark = session()
    from tfrecord_lite.spark import register

    register(spark)
    spark.dataSource.register(rows_source())
    spark.dataSource.register(parquet_writer_source())
    df, tf_path, pq_path = make_data(spark, args.rows)
    spark.dataSource.register(parquet_source(pq_path))
    reads = {
        "tfrecord": lambda: query(spark.read.format("tfrecord").schema(DDL).load(tf_path)),
        "parquet": lambda: query(spark.read.parquet(pq_path)),
        "tfrecord rows": lambda: query(spark.read.format("tfrecord_rows").schema(DDL).load(tf_path)),
        "parquet python": lambda: query(spark.read.format("parquet_python").schema(DDL).load()),
    }
    read_times, answers = run_rounds(reads, args.rounds)
    assert len(set(answers.values())) == 1, answers
    out = os.path.join(WORK, "written")
    writes = {
        "tfrecord": lambda: df.write.format("tfrecord").mode("overwrite").save(out + "-tf"),
        "parquet": lambda: df.write.mode("overwrite").parquet(out + "-pq"),
        "parquet python": lambda: df.write.format("parquet_python_writer").mode("overwrite").save(out + "-pp"),
    }
    write_times, _ = run_rounds(writes, args.rounds)
    written = {
        "tfrecord": query(spark.read.format("tfrecord").schema(DDL).load(out + "-tf")),
        "parquet": query(spark.read.parquet(out + "-pq")),
        "parquet python": query(spark.read.parquet(out + "-pp")),
    }
    assert set(written.values()) == set(answers.values()), (written, answers)
    report: dict[str, Any] = {"rows": args.rows, "rounds": args.rounds, "machine": platform.platform()}
    for kind, times in (("read", read_times), ("write", write_times)):
        for name, seconds in times.items():
            rates = spread([args.rows / s for s in seconds])
            report[f"{kind} {name}"] = rates
            print(
                f"{kind:5} {name:14} {rates['median']:>12,.0f} rows/s (rounds {rates['low']:,.0f}–{rates['high']:,.0f})"
            )
    ratios = {
        "read tfrecord / parquet": compare(read_times["tfrecord"], read_times["parquet"]),
        "read arrow / rows": compare(read_times["tfrecord"], read_times["tfrecord rows"]),
        "read python parquet / parquet": compare(read_times["parquet python"], read_times["parquet"]),
        "write tfrecord / parquet": compare(write_times["tfrecord"], write_times["parquet"]),
        "write python parquet / parquet": compare(write_times["parquet python"], write_times["parquet"]),
        "write tfrecord / python parquet": compare(write_times["tfrecord"], write_times["parquet python"]),
    }
    for name, ratio in ratios.items():  # compare gives b's seconds / a's: the speed of a against b
        print(f"{name:31} {ratio['median']:.2f}× (rounds {ratio['low']:.2f}–{ratio['high']:.2f})")
    report["ratios"] = ratios
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    shutil.rmtree(out + "-tf", ignore_errors=True)
    shutil.rmtree(out + "-pq", ignore_errors=True)
    shutil.rmtree(out + "-pp", ignore_errors=True)
    spark.stop()


if __name__ == "__main__":
    main()
