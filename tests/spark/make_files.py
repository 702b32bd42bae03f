# Writes tests/data/spark/*.tfrecord: the DataFrames of tests/_spark_frames.py written by Spark
# through the "tfrecord" data source (one part each), so that the TensorFlow environment, which
# has no Spark, can check what Spark writes (tests/end_to_end/test_spark_files_tf.py). Run in the
# engines environment from the checkout:  python -m tests.spark.make_files
# tests/spark/test_spark.py checks that Spark still writes exactly these records.
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests._spark_frames import BYTE_ROWS, SEQUENCE_DDL, SEQUENCE_ROWS, TYPES_DDL, TYPES_ROWS

OUT = Path(__file__).resolve().parents[1] / "data" / "spark"
# file name -> (rows, DDL schema, recordType)
FRAMES: dict[str, tuple[list[tuple[Any, ...]], str, str]] = {
    "types.tfrecord": (TYPES_ROWS, TYPES_DDL, "Example"),
    "sequence.tfrecord": (SEQUENCE_ROWS, SEQUENCE_DDL, "SequenceExample"),
    "bytes.tfrecord": (BYTE_ROWS, "byteArray binary", "ByteArray"),
}


def write_frame(spark: Any, name: str, folder: Path) -> Path:
    """The one part Spark writes for FRAMES[name] into `folder`."""
    rows, ddl, record_type = FRAMES[name]
    df = spark.createDataFrame(rows, ddl).coalesce(1)
    df.write.format("tfrecord").mode("overwrite").option("recordType", record_type).save(str(folder))
    (part,) = [p for p in folder.iterdir() if p.name.startswith("part-") and p.name.endswith(".tfrecord")]
    return part


def main() -> None:
    from pyspark.sql import SparkSession

    from tfrecord_lite.spark import register

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    register(spark)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in FRAMES:
            shutil.copyfile(write_frame(spark, name, Path(tmp) / name), OUT / name)
            print(OUT / name)
    spark.stop()


if __name__ == "__main__":
    main()
