# tfrecord_lite.spark on a real local[2] SparkSession (conftest's spark_session): every mapped
# Spark type written and read back, the three record types, GZIP, partition folders, globs, S3 on
# moto, damage, and writes that fail leaving nothing. Files Spark wrote are also read back with the
# library and checked against the DataFrame's rows; tests/end_to_end/test_spark_files_tf.py reads
# the committed files of make_files.py with TensorFlow.
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark
pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import tfrecord_lite as tfr
from tests._records import record_starts, write_records
from tests._spark_frames import BYTE_ROWS, SEQUENCE_DDL, SEQUENCE_ROWS, TYPES_DDL, TYPES_ROWS
from tfrecord_lite.arrow import read_arrow
from tfrecord_lite.spark import write


def files_in(folder: Path, pattern: str = "**/*") -> list[Path]:
    return sorted(p for p in folder.glob(pattern) if p.is_file())


def parts(folder: Path) -> list[Path]:
    return [p for p in files_in(folder) if ".tfrecord" in p.name and not p.name.endswith(".tfrlidx")]


def expected_feature(value: Any, ddl_type: str) -> Any:
    """What an Example feature holds for a DataFrame value (None: the feature is left out)."""
    if value is None:
        return None
    values = value if isinstance(value, list) else [value]
    if "string" in ddl_type:
        return [v.encode() for v in values]
    if "bool" in ddl_type:
        return [int(v) for v in values]
    return [bytes(v) if isinstance(v, (bytes, bytearray)) else v for v in values]


def ddl_types(ddl: str) -> list[tuple[str, str]]:
    return [tuple(column.strip().split(" ", 1)) for column in ddl.split(", ")]  # type: ignore[misc]


def test_every_type_round_trips_and_the_library_reads_what_spark_wrote(spark_session: Any, tmp_path: Path) -> None:
    df = spark_session.createDataFrame(TYPES_ROWS, TYPES_DDL)
    df.write.format("tfrecord").mode("overwrite").save(str(tmp_path / "out"))
    back = spark_session.read.format("tfrecord").schema(TYPES_DDL).load(str(tmp_path / "out"))
    assert sorted(map(tuple, back.collect()), key=repr) == sorted(map(tuple, df.collect()), key=repr)
    table = read_arrow([str(p) for p in parts(tmp_path / "out")])  # no spec: what the files hold
    for name, ddl_type in ddl_types(TYPES_DDL):
        column = table.column(name).to_pylist() if name in table.column_names else [None] * len(TYPES_ROWS)
        want = [expected_feature(row[[n for n, _ in ddl_types(TYPES_DDL)].index(name)], ddl_type) for row in TYPES_ROWS]
        assert column == want, name
    for part in parts(tmp_path / "out"):  # each part has its fresh sidecar
        assert tfr.TFRecordFile(str(part), on_stale="raise").__len__() == tfr.count_records(str(part))


def test_inferred_schema_maps_fixed_single_values_to_scalars(spark_session: Any, tmp_path: Path) -> None:
    records = [
        tfr.encode_example(
            {"id": [i], "score": [0.5 * i], "name": [b"n%d" % i], "tags": [b"a"] * (i + 1), "v": [1.0, 2.0]}
        )
        for i in range(4)
    ]
    write_records(tmp_path / "a.tfrecord", records)
    df = spark_session.read.format("tfrecord").load(str(tmp_path / "a.tfrecord"))
    assert df.schema.simpleString() == ("struct<id:bigint,name:string,score:float,tags:array<string>,v:array<float>>")
    assert [tuple(r) for r in df.collect()] == [(i, f"n{i}", 0.5 * i, ["a"] * (i + 1), [1.0, 2.0]) for i in range(4)]
    binary = spark_session.read.format("tfrecord").option("bytesType", "binary").load(str(tmp_path / "a.tfrecord"))
    assert binary.schema["name"].dataType.simpleString() == "binary"
    assert binary.schema["tags"].dataType.simpleString() == "array<binary>"


def test_inferred_schema_chooses_string_or_binary_per_column(spark_session: Any, tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"  # bytes that are not UTF-8, as an image's are
    records = [
        tfr.encode_example({"image/encoded": [png + bytes([i])], "image/class/text": [b"cat"]}) for i in range(3)
    ]
    write_records(tmp_path / "a.tfrecord", records)
    df = spark_session.read.format("tfrecord").load(str(tmp_path / "a.tfrecord"))  # default options
    assert df.schema["image/encoded"].dataType.simpleString() == "binary"
    assert df.schema["image/class/text"].dataType.simpleString() == "string"
    rows = df.collect()
    assert sorted(bytes(r["image/encoded"]) for r in rows) == [png + bytes([i]) for i in range(3)]
    assert {r["image/class/text"] for r in rows} == {"cat"}
    strings = spark_session.read.format("tfrecord").option("bytesType", "string").load(str(tmp_path / "a.tfrecord"))
    assert strings.schema["image/encoded"].dataType.simpleString() == "string"  # the override stays


def test_a_scalar_column_over_a_list_feature_names_the_column(spark_session: Any, tmp_path: Path) -> None:
    write_records(tmp_path / "a.tfrecord", [tfr.encode_example({"x": [1, 2]})])
    df = spark_session.read.format("tfrecord").schema("x long").load(str(tmp_path / "a.tfrecord"))
    with pytest.raises(Exception, match=r"'x'.*2 values"):
        df.collect()


@pytest.mark.parametrize(
    ("ddl", "bad_value"),
    [("x long", [1, 2]), ("x int", [2**40])],
    ids=["two values for a scalar", "a long that no int holds"],
)
def test_a_value_that_does_not_fit_its_spark_type_names_file_record_and_offset(
    spark_session: Any, tmp_path: Path, ddl: str, bad_value: list[int]
) -> None:
    records = [tfr.encode_example({"x": bad_value if i == 7 else [i]}) for i in range(12)]
    path = write_records(tmp_path / "a.tfrecord", records)
    df = spark_session.read.format("tfrecord").schema(ddl).option("batchSize", "5").load(str(path))
    where = f"in {path}, record 7, at byte offset {record_starts(path.read_bytes())[7]}"
    with pytest.raises(Exception, match=re.escape(where)):
        df.collect()


def test_a_record_range_names_the_record_by_its_number_in_the_file(spark_session: Any, tmp_path: Path) -> None:
    records = (tfr.encode_example({"x": [i, i] if i == 3000 else [i]}) for i in range(5000))
    path = write_records(tmp_path / "big.tfrecord", records)
    df = (
        spark_session.read.format("tfrecord")
        .schema("x long")
        .option("maxPartitionBytes", "20K")
        .option("batchSize", "256")
        .load(str(path))
    )
    assert df.rdd.getNumPartitions() > 3
    where = f"in {path}, record 3000, at byte offset {record_starts(path.read_bytes())[3000]}"
    with pytest.raises(Exception, match=re.escape(where)):
        df.collect()


def test_sequence_examples_round_trip_as_feature_lists(spark_session: Any, tmp_path: Path) -> None:
    df = spark_session.createDataFrame(SEQUENCE_ROWS, SEQUENCE_DDL).coalesce(1)
    out = str(tmp_path / "seq")
    df.write.format("tfrecord").mode("append").option("recordType", "SequenceExample").save(out)
    back = spark_session.read.format("tfrecord").option("recordType", "SequenceExample").schema(SEQUENCE_DDL).load(out)
    assert [tuple(r) for r in back.collect()] == SEQUENCE_ROWS
    context, lists = tfr.decode_sequence_example(next(iter(tfr.iter_records(str(parts(tmp_path / "seq")[0])))))
    assert context["id"].tolist() == [0] and [s.tolist() for s in lists["tokens"]] == [[1, 2], [3], []]
    inferred = spark_session.read.format("tfrecord").option("recordType", "SequenceExample").load(out)
    assert inferred.schema["tokens"].dataType.simpleString() == "array<array<bigint>>"
    assert inferred.schema["frames"].dataType.simpleString() == "array<array<float>>"


def test_an_array_of_arrays_needs_sequence_examples(spark_session: Any, tmp_path: Path) -> None:
    df = spark_session.createDataFrame(SEQUENCE_ROWS, SEQUENCE_DDL)
    with pytest.raises(Exception, match="SequenceExample"):
        df.write.format("tfrecord").mode("append").save(str(tmp_path / "x"))
    assert not (tmp_path / "x").exists() or not files_in(tmp_path / "x")


def test_byte_array_records_are_written_and_read_as_they_are(spark_session: Any, tmp_path: Path) -> None:
    df = spark_session.createDataFrame(BYTE_ROWS, "byteArray binary").coalesce(1)
    out = str(tmp_path / "raw")
    df.write.format("tfrecord").mode("append").option("recordType", "ByteArray").option("codec", "gzip").save(out)
    (part,) = parts(tmp_path / "raw")
    assert part.name.endswith(".tfrecord.gz") and part.read_bytes()[:2] == b"\x1f\x8b"
    assert list(tfr.iter_records(str(part))) == [row[0] for row in BYTE_ROWS]
    back = spark_session.read.format("tfrecord").option("recordType", "ByteArray").load(out)
    assert back.schema.simpleString() == "struct<byteArray:binary>"
    assert [bytes(r[0]) for r in back.collect()] == [row[0] for row in BYTE_ROWS]


def test_gzip_hadoop_codec_name_and_globs(spark_session: Any, tmp_path: Path) -> None:
    df = spark_session.range(100).selectExpr("id", "array(id, id * 2) AS pair")
    codec = "org.apache.hadoop.io.compress.GzipCodec"
    df.write.format("tfrecord").mode("append").option("codec", codec).save(str(tmp_path / "a"))
    df.write.format("tfrecord").mode("append").save(str(tmp_path / "b"))
    assert all(p.read_bytes()[:2] == b"\x1f\x8b" for p in parts(tmp_path / "a"))
    both = spark_session.read.format("tfrecord").load(str(tmp_path / "*" / "part-*"))
    assert both.count() == 200 and both.selectExpr("sum(id)").first()[0] == 2 * sum(range(100))
    listed = spark_session.read.format("tfrecord").load([str(tmp_path / "a"), str(tmp_path / "b")])
    assert sorted(r.id for r in listed.collect()) == sorted(list(range(100)) * 2)


def test_partition_folders_save_modes_and_read_back(spark_session: Any, tmp_path: Path) -> None:
    df = spark_session.createDataFrame(
        [(1, "x", 10), (2, "y", 10), (3, "z/=", 20), (4, "w", None)], "id long, s string, p int"
    )
    out = str(tmp_path / "parted")
    write(df, out, partition_by=["p"], codec="gzip")
    folders = sorted(p.parent.name for p in parts(tmp_path / "parted"))
    assert set(folders) == {"p=10", "p=20", "p=__HIVE_DEFAULT_PARTITION__"}
    back = spark_session.read.format("tfrecord").load(out)
    assert back.schema.simpleString() == "struct<id:bigint,s:string,p:int>"
    assert sorted(map(tuple, back.collect()), key=repr) == sorted(map(tuple, df.collect()), key=repr)
    with pytest.raises(FileExistsError):
        write(df, out)
    write(df, out, mode="ignore")
    write(df, out, mode="append", partition_by=["p"])
    assert spark_session.read.format("tfrecord").load(out).count() == 8
    write(df.limit(1), out, mode="overwrite", partition_by=["p"])
    assert spark_session.read.format("tfrecord").load(out).count() == 1
    assert not [p for p in files_in(tmp_path / "parted") if p.name.startswith(".")]


def test_a_large_shard_splits_into_record_ranges_by_its_sidecar(spark_session: Any, tmp_path: Path) -> None:
    path = write_records(tmp_path / "big.tfrecord", (tfr.encode_example({"i": [i]}) for i in range(5000)))
    df = (
        spark_session.read.format("tfrecord")
        .option("maxPartitionBytes", "20K")
        .option("batchSize", "256")
        .load(str(path))
    )
    assert df.rdd.getNumPartitions() > 3
    assert (tmp_path / "big.tfrecord.tfrlidx").exists()
    assert df.count() == 5000 and df.selectExpr("sum(i)").first()[0] == sum(range(5000))


def test_small_files_share_tasks_as_spark_packs_its_file_sources(spark_session: Any, tmp_path: Path) -> None:
    for shard in range(4):
        rows = range(shard * 100, (shard + 1) * 100)
        write_records(tmp_path / f"part-{shard}.tfrecord", (tfr.encode_example({"i": [i]}) for i in rows))
    df = spark_session.read.format("tfrecord").schema("i long").load(str(tmp_path))
    assert df.rdd.getNumPartitions() == spark_session.sparkContext.defaultParallelism == 2
    assert sorted(row.i for row in df.collect()) == list(range(400))
    four = spark_session.read.format("tfrecord").schema("i long").option("minPartitions", "4")
    assert four.option("openCostInBytes", "1k").load(str(tmp_path)).rdd.getNumPartitions() == 4


def test_register_takes_the_sessions_file_source_settings(spark_session: Any, tmp_path: Path) -> None:
    from tfrecord_lite.spark import register

    path = write_records(tmp_path / "big.tfrecord", (tfr.encode_example({"i": [i]}) for i in range(5000)))
    spark_session.conf.set("spark.sql.files.maxPartitionBytes", "20k")
    spark_session.conf.set("spark.sql.files.openCostInBytes", "1k")
    try:
        register(spark_session)
        df = spark_session.read.format("tfrecord").option("batchSize", "256").load(str(path))
        assert df.rdd.getNumPartitions() > 3
        assert df.count() == 5000 and df.selectExpr("sum(i)").first()[0] == sum(range(5000))
    finally:
        spark_session.conf.unset("spark.sql.files.maxPartitionBytes")
        spark_session.conf.unset("spark.sql.files.openCostInBytes")
        register(spark_session)
    assert spark_session.read.format("tfrecord").load(str(path)).rdd.getNumPartitions() == 1


def test_damage_names_file_and_offset_and_skip_reads_the_rest(spark_session: Any, tmp_path: Path) -> None:
    path = write_records(tmp_path / "bad.tfrecord", (tfr.encode_example({"i": [i]}) for i in range(10)))
    data = bytearray(path.read_bytes())
    damaged_at = record_starts(bytes(data))[4]
    data[damaged_at + 14] ^= 0xFF  # a payload byte of record 4
    path.write_bytes(bytes(data))
    df = spark_session.read.format("tfrecord").schema("i long").load(str(path))
    with pytest.raises(Exception, match=rf"bad\.tfrecord.*{damaged_at}|{damaged_at}.*bad\.tfrecord"):
        df.collect()
    skipped = spark_session.read.format("tfrecord").schema("i long").option("on_error", "skip").load(str(path))
    assert sorted(r.i for r in skipped.collect()) == [0, 1, 2, 3, 5, 6, 7, 8, 9]


def test_the_reader_options_by_their_names(spark_session: Any, tmp_path: Path) -> None:
    """compression (read and written; codec is spark-tfrecord's name for it), max_skipped and
    max_record_bytes as data source options, as iter_records takes them."""
    df = spark_session.range(20).selectExpr("id AS i")
    write(df, str(tmp_path / "gz"), compression="gzip")
    assert all(p.read_bytes()[:2] == b"\x1f\x8b" for p in parts(tmp_path / "gz"))
    read = spark_session.read.format("tfrecord").schema("i long")
    assert read.option("compression", "gzip").load(str(tmp_path / "gz")).count() == 20
    with pytest.raises(Exception, match=r"compress|gzip|GZIP"):
        read.option("compression", "none").load(str(tmp_path / "gz")).collect()
    with pytest.raises(Exception, match="not both"):
        write(df, str(tmp_path / "both"), compression="gzip", codec="zlib")
    long = tmp_path / "long.tfrecord"
    write_records(long, (tfr.encode_example({"i": [i], "pad": [b"x" * (5000 if i == 3 else 1)]}) for i in range(6)))
    limited = spark_session.read.format("tfrecord").schema("i long").option("max_record_bytes", "1k")
    with pytest.raises(Exception, match=r"RecordTooLarge|max_record_bytes"):
        limited.load(str(long)).collect()
    assert limited.option("max_record_bytes", "8k").load(str(long)).count() == 6
    bad = write_records(tmp_path / "bad.tfrecord", (tfr.encode_example({"i": [i]}) for i in range(10)))
    data = bytearray(bad.read_bytes())
    for k in (2, 6):
        data[record_starts(bytes(data))[k] + 14] ^= 0xFF
    bad.write_bytes(bytes(data))
    skipping = spark_session.read.format("tfrecord").schema("i long").option("on_error", "skip")
    assert skipping.option("max_skipped", "2").load(str(bad)).count() == 8
    with pytest.raises(Exception, match="max_skipped=1"):
        skipping.option("max_skipped", "1").load(str(bad)).collect()


def fail_in_partition_one(index: int, rows: Any) -> Any:
    yield from rows
    if index == 1:
        raise RuntimeError("task failure planted by the test")


def exit_in_partition_one(index: int, rows: Any) -> Any:
    yield from rows
    if index == 1:
        os._exit(1)


@pytest.mark.parametrize("failure", [fail_in_partition_one, exit_in_partition_one])
def test_a_failed_task_leaves_nothing_visible(spark_session: Any, tmp_path: Path, failure: Any) -> None:
    df = spark_session.range(0, 200, numPartitions=2).selectExpr("id", "array(id) AS a")
    failing = df.rdd.mapPartitionsWithIndex(failure).toDF(df.schema)
    out = tmp_path / "out"
    with pytest.raises(Exception, match=r"planted by the test|exited unexpectedly|crashed|EOFError|worker"):
        failing.write.format("tfrecord").mode("append").save(str(out))
    assert not out.exists() or files_in(out) == []
    df.write.format("tfrecord").mode("append").save(
        str(out)
    )  # the folder is usable afterwards, and holds only this write
    assert spark_session.read.format("tfrecord").load(str(out)).count() == 200


def test_s3_urls_on_the_moto_server(spark_session: Any, s3: Any) -> None:
    options = json.dumps(s3.storage_options)
    df = spark_session.createDataFrame(SEQUENCE_ROWS, SEQUENCE_DDL)
    url = f"{s3.bucket}/seq"
    df.write.format("tfrecord").mode("append").option("recordType", "SequenceExample").option(
        "storage_options", options
    ).save(url)
    keys = s3.fs.find(url)
    assert keys and not [k for k in keys if os.path.basename(k).startswith(".")]
    back = (
        spark_session.read.format("tfrecord")
        .option("recordType", "SequenceExample")
        .option("storage_options", options)
        .schema(SEQUENCE_DDL)
        .load(url)
    )
    assert sorted(map(tuple, back.collect()), key=repr) == sorted(SEQUENCE_ROWS, key=repr)


@pytest.mark.parametrize("name", ["types.tfrecord", "sequence.tfrecord", "bytes.tfrecord"])
def test_spark_still_writes_the_committed_files_tensorflow_checks(
    spark_session: Any, tmp_path: Path, name: str
) -> None:
    from tests.spark.make_files import OUT, write_frame

    part = write_frame(spark_session, name, tmp_path / "out")
    assert list(tfr.iter_records(str(part))) == list(tfr.iter_records(str(OUT / name)))


def test_a_given_schema_types_the_partition_columns(spark_session: Any, tmp_path: Path) -> None:
    df = spark_session.createDataFrame([(1, 7), (2, 8)], "id long, day int")
    write(df, str(tmp_path / "days"), partition_by=["day"])
    back = spark_session.read.format("tfrecord").schema("id long, day string").load(str(tmp_path / "days"))
    assert sorted(map(tuple, back.collect())) == [(1, "7"), (2, "8")]
