"""Apache Spark adapter (extra [spark]; `import tfrecord_lite` never imports this module):
`spark.read.format("tfrecord")` and `df.write.format("tfrecord")` with no JAR and no TensorFlow,
through Spark 4's Python Data Source API: the reader options by the library's names (compression,
verify, on_error, max_skipped, storage_options, max_record_bytes), the others by spark-tfrecord's.

Strategy: TFRecordDataSource is a pyspark DataSource named "tfrecord". Its schema is the one
given (.schema(...)) or inferred from the first records (_datasets/schema.py), mapped to Spark
types by _arrow/spark_types.py, with the key=value folders of a partitioned dataset as
columns (_datasets/hive_partitions.py). The reader's partitions are the pieces of
_datasets/pieces.py (a shard each; a large uncompressed shard cut into record ranges by its
index sidecar); each yields decode_arrow's record batches, only the schema's features decoded,
cast to the Arrow schema Spark expects. The writer is an Arrow writer: each task encodes its
batches (encode_arrow's encoder) into parts under hidden temporary names, a part per partition
folder, with their sidecars, and the driver's commit renames them (_datasets/task_files.py);
an abort deletes them. With recordType "Message" (descriptorSet, messageType) the records are a
user's protobuf message: the set is read on the driver and travels in the options, the schema is
read off the descriptor and each record parsed by the protobuf runtime (_arrow/spark_messages.py);
a record that does not parse is placed (file, record, offset) and raised or skipped by the
DamagePolicy of on_error. This module holds only that adaptation: option parsing and the calls.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import itertools
import json
import os
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tfrecord_lite._arrow.batches import iter_framed_buffers
from tfrecord_lite._arrow.spark_messages import (
    elwc_row,
    elwc_spark_fields,
    message_batch,
    message_rows,
    message_spark_fields,
)
from tfrecord_lite._arrow.spark_types import (
    byte_array_batch,
    byte_array_fields,
    bytes_columns_not_text,
    check_bytes_type,
    check_record_type,
    codec_compression,
    conform,
    feature_columns,
    inferred_fields,
    raw_records,
    struct,
)
from tfrecord_lite._batches.columnar import place_by
from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._datasets.hive_partitions import partition_folder, partition_types, partitioned_files, typed_values
from tfrecord_lite._datasets.messages import load_message_class
from tfrecord_lite._datasets.pieces import (
    Piece,
    PieceOptions,
    pack_pieces,
    piece_batches,
    piece_place,
    piece_records,
    placed_piece_records,
    split_bytes,
    split_pieces,
)
from tfrecord_lite._datasets.schema import infer_features, infer_sequence_features
from tfrecord_lite._datasets.sharded import shard_suffix
from tfrecord_lite._datasets.task_files import JobFolder, Part
from tfrecord_lite._errors import DecodeError, TFRecordError, place
from tfrecord_lite._index.sidecar_file import sidecar_path
from tfrecord_lite._loader.messages import descriptor_set_of, is_message_class
from tfrecord_lite._records.reader import RecordIterator, iter_records
from tfrecord_lite._records.writer import TFRecordWriter
from tfrecord_lite._storage.files import file_size, read_whole, size_in_bytes
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression
from tfrecord_lite._wire.framing import framed_records

try:
    import pyarrow as pa
    from pyspark import TaskContext
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType
except ImportError as exc:  # pragma: no cover - exercised where pyspark is missing
    raise ImportError(f"tfrecord_lite.spark needs pyspark 4 ({exc}): pip install 'tfrlite[spark]'") from exc

__all__ = ["TFRecordDataSource", "message_options", "register", "write"]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


FORMAT = "tfrecord"
_SETTLE_SECONDS = 1.0  # an abort sweeps again this long after a sweep that found files of the job


@dataclass(frozen=True)
class _Options:
    """The options of a read or write, parsed once: the reader options by the library's names
    (compression, verify, on_error, max_skipped, storage_options, max_record_bytes), the others
    as spark-tfrecord spells them (its `codec` too, for the compression written)."""

    paths: list[str]
    record_type: str
    bytes_type: str
    batch_size: int
    max_bytes: int
    open_cost: int
    min_partitions: int
    sample: int
    reading: PieceOptions
    written: Compression  # what a write compresses with
    partition_by: list[str] = field(default_factory=list)
    descriptor_set: bytes | None = None  # recordType Message: the FileDescriptorSet's bytes, read on the driver
    message_type: str | None = None  # recordType Message: the message's full name

    @property
    def message(self) -> type[Any]:
        """recordType Message: the message class (built once per process)."""
        assert self.descriptor_set is not None and self.message_type is not None
        return _message_class(self.descriptor_set, self.message_type)

    @property
    def storage_options(self) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self.reading.storage_options  # type: ignore[assignment]
        return found

    @classmethod
    def parse(cls, options: Any, defaults: Mapping[str, str] | None = None) -> _Options:
        """Parse the options of a read or write; `defaults` (the session's, see register) fill
        in those not given."""
        given = options.get

        def get(name: str, default: str | None = None) -> Any:
            found = given(name)
            return found if found is not None else (defaults or {}).get(name, default)

        paths = json.loads(get("paths")) if get("paths") else []
        paths += [get("path")] if get("path") else []
        if not paths:
            raise ValueError("no path: spark.read.format('tfrecord').load(PATH) or df.write...save(PATH)")
        skipped = get("max_skipped")
        reading = PieceOptions(
            compression=get("compression", "auto"),
            verify=get("verify", "true").lower() != "false",
            on_error=get("on_error", "raise"),
            max_skipped=None if skipped is None else int(skipped),
            storage_options=json.loads(get("storage_options", "null")),
            max_record_bytes=size_in_bytes(get("max_record_bytes", str(MAX_RECORD_BYTES))),
        )
        record_type = check_record_type(get("recordType", "Example"))
        return cls(
            paths=paths,
            record_type=record_type,
            bytes_type=check_bytes_type(get("bytesType", "auto").lower()),
            batch_size=int(get("batchSize", "10000")),
            max_bytes=size_in_bytes(get("maxPartitionBytes", "128M")),
            open_cost=size_in_bytes(get("openCostInBytes", "4M")),
            min_partitions=int(get("minPartitions", str(os.cpu_count() or 1))),
            sample=int(get("sampleRecords", "1000")),
            reading=reading,
            written=_written(get("compression"), get("codec")),
            partition_by=[name.strip() for name in get("partitionBy", "").split(",") if name.strip()],
            **_message_options(record_type, get("descriptorSet"), get("messageType"), reading.storage_options),
        )


_MAX_DESCRIPTOR_SET = 64 << 20  # the largest descriptor set read (protoc's are kilobytes)
_INLINE = "base64:"  # a descriptorSet that holds the set itself, base64-encoded (message_options)


def message_options(message: type[Any]) -> dict[str, str]:
    """The read options of records of the protobuf message class `message` (generated, or made by
    load_message_class): recordType Message, its full name, and the descriptor set of its .proto
    files carried in the options themselves, so no file need be where the executors look:
    `spark.read.format("tfrecord").options(**message_options(Order)).load(path)`."""
    if not is_message_class(message):
        raise TypeError(f"message must be a protobuf message class, not {message!r}")
    inline = _INLINE + base64.b64encode(descriptor_set_of(message)).decode("ascii")
    return {"recordType": "Message", "descriptorSet": inline, "messageType": message.DESCRIPTOR.full_name}


def _message_options(
    record_type: str, descriptor_set: str | None, message_type: str | None, storage_options: Any
) -> dict[str, Any]:
    """The descriptorSet and messageType of recordType Message: the set read on the driver (a path or
    a URL) and the message looked up in it, so a wrong name fails before any task starts."""
    if record_type != "Message":
        if descriptor_set is not None or message_type is not None:
            raise ValueError(f"descriptorSet and messageType go with recordType Message, not {record_type}")
        return {}
    if descriptor_set is None or message_type is None:
        raise ValueError(
            "recordType Message needs descriptorSet (a FileDescriptorSet: protoc --include_imports "
            "--descriptor_set_out=SET.pb) and messageType (the message's full name, pkg.Msg)"
        )
    if descriptor_set.startswith(_INLINE):  # message_options' form: the set itself
        data = base64.b64decode(descriptor_set[len(_INLINE) :])
        descriptor_set = "the descriptor set given inline"
    else:
        data = read_whole(descriptor_set, storage_options, limit=_MAX_DESCRIPTOR_SET)
    if len(data) > _MAX_DESCRIPTOR_SET:
        raise ValueError(f"{descriptor_set} holds more than {_MAX_DESCRIPTOR_SET} bytes: no FileDescriptorSet")
    try:
        _message_class(data, message_type)
    except ValueError as err:  # name the file, not "the descriptor set"
        raise ValueError(str(err).replace("the descriptor set", descriptor_set, 1)) from None
    return {"descriptor_set": data, "message_type": message_type}


@functools.lru_cache(maxsize=8)
def _message_class(data: bytes, name: str) -> type[Any]:
    return load_message_class(data, message=name)


def _written(compression: str | None, codec: str | None) -> Compression:
    """The compression a write writes: the `compression` option, or spark-tfrecord's `codec`."""
    if compression is not None and codec is not None:
        raise ValueError(f"give compression or codec (spark-tfrecord's name), not both: {compression!r}, {codec!r}")
    if codec is not None:
        return codec_compression(codec)
    if compression is None or compression.lower() == "auto":  # "auto" is a read's: a write of no compression
        return None
    return normalize_compression(compression) or None


class TFRecordDataSource(DataSource):  # type: ignore[misc]
    """The data source "tfrecord": register it (`register(spark)`), then
    `spark.read.format("tfrecord").load(path)` and `df.write.format("tfrecord").save(path)`;
    docs/spark.md lists the options."""

    defaults: Mapping[str, str] = {}  # the session's, in the class register() makes

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        options = _Options.parse(self.options, self.defaults)
        found = partitioned_files(options.paths, options.storage_options)
        files = [path for path, _ in found]
        if options.record_type == "ByteArray":
            fields = byte_array_fields()
        elif options.record_type == "Message":
            fields = message_spark_fields(options.message.DESCRIPTOR)
        elif options.record_type == "ELWC":
            with _records_of(files, options.reading) as records:
                fields = elwc_spark_fields(itertools.islice(records, options.sample), options.bytes_type)
        elif options.record_type == "SequenceExample":
            with _records_of(files, options.reading) as records:
                context, lists = infer_sequence_features(records, max_records=options.sample)
            fields = inferred_fields(context, lists, options.bytes_type, _binary(files, options, sequences=True))
        else:
            with _records_of(files, options.reading) as records:
                features = infer_features(records, max_records=options.sample)
            fields = inferred_fields(features, None, options.bytes_type, _binary(files, options))
        keys = partition_types(found)
        fields += [{"name": key, "type": kind, "nullable": True, "metadata": {}} for key, kind in keys.items()]
        return StructType.fromJson(struct(fields))

    def reader(self, schema: StructType) -> DataSourceReader:
        return _Reader(_Options.parse(self.options, self.defaults), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        return _Writer(_Options.parse(self.options, self.defaults), schema, overwrite)


def _binary(files: list[str], options: _Options, sequences: bool = False) -> set[str]:
    """With bytesType "auto": the bytes columns of the sampled records that are not all UTF-8 text."""
    if options.bytes_type != "auto":
        return set()
    with _records_of(files, options.reading) as records:
        return bytes_columns_not_text(itertools.islice(records, options.sample), sequences)


def _records_of(files: list[str], reading: PieceOptions) -> RecordIterator:
    """The records of `files`, read with the reader options (for the schema's sample)."""
    return iter_records(
        files,
        compression=reading.compression or "",
        verify=reading.verify,
        on_error=reading.on_error,
        max_skipped=reading.max_skipped,
        storage_options=reading.storage_options,
        max_record_bytes=reading.max_record_bytes,
    )


def register(spark: Any) -> None:
    """Register the "tfrecord" data source with the SparkSession `spark`, taking the session's
    file-source settings as the defaults of the read options maxPartitionBytes, openCostInBytes
    and minPartitions (spark.sql.files.*, and the default parallelism), as they are now."""
    defaults = _session_defaults(spark)
    source = type(TFRecordDataSource.__name__, (TFRecordDataSource,), {"defaults": defaults, "__module__": __name__})
    spark.dataSource.register(source)


def _session_defaults(spark: Any) -> dict[str, str]:
    """The session's settings that Spark's own file sources partition by, as option defaults."""
    conf = spark.conf
    defaults = {
        "maxPartitionBytes": conf.get("spark.sql.files.maxPartitionBytes", None),
        "openCostInBytes": conf.get("spark.sql.files.openCostInBytes", None),
        "minPartitions": conf.get("spark.sql.files.minPartitionNum", None)
        or conf.get("spark.sql.leafNodeDefaultParallelism", None),
    }
    if defaults["minPartitions"] is None:
        with contextlib.suppress(Exception):  # Spark Connect has no SparkContext
            defaults["minPartitions"] = str(spark.sparkContext.defaultParallelism)
    return {name: value for name, value in defaults.items() if value is not None}


# --------------------------------------------------------------------------- reading


class _Partition(InputPartition):  # type: ignore[misc]
    """The pieces one task reads, each with its partition folder's column values."""

    def __init__(self, pieces: list[tuple[Piece, dict[str, Any]]]) -> None:
        super().__init__(None)
        self.pieces = pieces


class _Reader(DataSourceReader):  # type: ignore[misc]
    def __init__(self, options: _Options, schema: StructType) -> None:
        self._options = options
        self._schema = schema
        self._found = partitioned_files(options.paths, options.storage_options)
        given = {f["name"]: f["type"] for f in schema.jsonValue()["fields"] if isinstance(f["type"], str)}
        self._types = {key: given.get(key, kind) for key, kind in partition_types(self._found).items()}
        if options.record_type not in ("ByteArray", "Message", "ELWC"):
            self._columns = feature_columns(schema.jsonValue(), options.record_type, list(self._types))

    def partitions(self) -> list[_Partition]:
        """The files as Spark's file sources would plan them: cut where larger than a partition
        (split_bytes), then packed, largest first, into partitions of about that size."""
        options = self._options
        files = [(path, file_size(path, options.storage_options)) for path, _ in self._found]
        sizes = [size for _, size in files]
        per_partition = split_bytes(sizes, options.max_bytes, options.open_cost, options.min_partitions)
        # where damage is skipped, a file is read whole, by the tolerant stream scanner
        pieces = split_pieces(files, per_partition, options.batch_size, options.reading)
        values = dict(self._found)
        return [
            _Partition([(piece, typed_values(values[piece.path], self._types)) for piece in group])
            for group in pack_pieces(pieces, per_partition, options.open_cost)
        ]

    def read(self, partition: _Partition) -> Iterator[pa.RecordBatch]:
        target = to_arrow_schema(self._schema, timezone="UTC")
        options = self._options
        for piece, constants in partition.pieces:
            if options.record_type == "ByteArray":
                for records in piece_records(piece, options.batch_size, options.reading):
                    yield byte_array_batch(records, target, constants)
                continue
            if options.record_type in ("Message", "ELWC"):
                yield from _message_batches(piece, options, target, constants)
                continue
            # only the schema's features decoded (null where a record lacks one)
            columns = [column.name for column in self._columns]
            done = 0  # the piece's rows read before this batch
            for batch in piece_batches(piece, None, options.batch_size, options.reading, columns=columns):
                try:
                    conformed = conform(batch, self._columns, target, constants)
                except TFRecordError as err:  # a value that does not fit its Spark type: name its record
                    place_by(err, functools.partial(piece_place, piece, options.reading, done))
                    raise
                done += batch.num_rows
                yield conformed


def _message_batches(
    piece: Piece, options: _Options, target: pa.Schema, constants: dict[str, Any]
) -> Iterator[pa.RecordBatch]:
    """The piece's records parsed as the message (or ExampleListWithContexts), as batches of
    `target`. A record that does not parse raises naming its file, number and offset, or with
    on_error skip is skipped (and counted toward max_skipped, in this piece); a value that does not
    fit its column raises, placed the same way."""
    policy = DamagePolicy(options.reading.on_error, options.reading.max_skipped)
    for records, where in placed_piece_records(piece, options.batch_size, options.reading):
        rows = []
        for k, row in _rows(records, options, target):
            if isinstance(row, TFRecordError):
                found = where(k)
                if found is not None:
                    place(row, path=found[0], record=found[1], offset=found[2])
                if policy.raises or not isinstance(row, DecodeError):
                    raise row
                policy.skip(row)
                continue
            rows.append(row)
        yield message_batch(rows, target, constants)


def _rows(
    records: list[bytes], options: _Options, target: pa.Schema
) -> Iterator[tuple[int, dict[str, Any] | TFRecordError]]:
    if options.record_type == "Message":
        yield from message_rows(records, options.message)
        return
    for k, record in enumerate(records):
        try:
            yield k, elwc_row(record, target)
        except TFRecordError as err:
            yield k, err


# --------------------------------------------------------------------------- writing


@dataclass
class _Commit(WriterCommitMessage):  # type: ignore[misc]
    parts: list[Part]


class _Writer(DataSourceArrowWriter):  # type: ignore[misc]
    def __init__(self, options: _Options, schema: StructType, overwrite: bool) -> None:
        if len(options.paths) != 1:
            raise ValueError(f"a write goes to one folder, not {options.paths}")
        if options.record_type in ("Message", "ELWC"):
            raise ValueError(
                f"recordType {options.record_type} is read only: write the records as recordType ByteArray"
            )
        missing = [name for name in options.partition_by if name not in schema.fieldNames()]
        if missing:
            raise KeyError(f"partitionBy columns {missing} are not in the data ({schema.fieldNames()})")
        self._options = options
        self._overwrite = overwrite
        self._job = uuid.uuid4().hex
        self._suffix = shard_suffix(options.written)
        self._lists: list[str] = []
        if options.record_type != "ByteArray":
            columns = feature_columns(schema.jsonValue(), options.record_type, options.partition_by)
            self._lists = [column.name for column in columns if column.depth == 2]

    def _folder(self) -> JobFolder:
        return JobFolder(self._options.paths[0], self._job, self._options.storage_options)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> _Commit:
        context = TaskContext.get()
        task, attempt = (context.partitionId(), context.attemptNumber()) if context else (0, 0)
        folder = self._folder()
        open_parts: dict[str, tuple[Part, TFRecordWriter, list[np.ndarray]]] = {}
        try:
            for batch in iterator:
                for where, rows in self._groups(batch):
                    if where not in open_parts:
                        open_parts[where] = self._open(folder, where, task, attempt, len(open_parts))
                    _, writer, lengths = open_parts[where]
                    for framed, sizes in self._framed(rows):
                        writer.write_framed(framed, sizes)
                        lengths.append(sizes)
            for _, writer, _ in open_parts.values():
                writer.close()
            plain = self._options.written is None
            return _Commit(
                [folder.indexed(part, _joined(lengths) if plain else None) for part, _, lengths in open_parts.values()]
            )
        except BaseException:
            for part, writer, _ in open_parts.values():
                with contextlib.suppress(Exception):
                    writer.close()
                folder.delete([part.temp, part.temp + ".idx.tmp", sidecar_path(part.temp)])
            raise

    def _open(
        self, folder: JobFolder, where: str, task: int, attempt: int, number: int
    ) -> tuple[Part, TFRecordWriter, list[np.ndarray]]:
        """A new part of this task in the partition folder `where`: its names, writer and record lengths.
        The writer buffers (a part is published whole at the commit, or not at all)."""
        part = folder.part(where, task, attempt, number, self._suffix)
        options = self._options
        writer = TFRecordWriter(
            part.temp, compression=options.written, buffered=True, storage_options=options.storage_options
        )
        return part, writer, []

    def _groups(self, batch: pa.RecordBatch) -> Iterator[tuple[str, pa.RecordBatch]]:
        """(partition folder, its rows without the partition columns) of a batch."""
        keys = self._options.partition_by
        if not keys:
            yield "", batch
            return
        rows: dict[tuple[Any, ...], list[int]] = {}
        for i, values in enumerate(zip(*(batch.column(key).to_pylist() for key in keys), strict=True)):
            rows.setdefault(values, []).append(i)
        data = batch.drop_columns(keys)
        for values, indices in rows.items():
            yield partition_folder(keys, values), data.take(pa.array(indices))

    def _framed(self, rows: pa.RecordBatch) -> Iterator[tuple[Any, np.ndarray]]:
        """The batch's records framed back to back, and each record's length."""
        if self._options.record_type == "ByteArray":
            return iter([framed_records(raw_records(rows))])
        return iter_framed_buffers(rows, feature_lists=self._lists)

    def commit(self, messages: Sequence[_Commit | None]) -> None:
        parts = [part for message in messages if message is not None for part in message.parts]
        self._folder().commit(parts, self._overwrite)

    def abort(self, messages: Sequence[_Commit | None]) -> None:
        """Delete the parts of the tasks that succeeded and any temporary file of the job; sweep
        again while a task being cancelled may still be finishing one."""
        folder = self._folder()
        folder.abort(part for message in messages if message is not None for part in message.parts)
        for _ in range(10):
            time.sleep(_SETTLE_SECONDS)
            if not [path for path in folder.files() if folder.is_temp(path)]:
                return
            folder.abort([])


def _joined(lengths: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64)


def write(
    df: Any,
    destination: str,
    *,
    mode: str = "errorifexists",
    partition_by: Sequence[str] = (),
    **options: Any,
) -> None:
    """Write the DataFrame `df` as TFRecord parts under the folder `destination` with every save mode ("append",
    "overwrite", "errorifexists", "ignore"; Spark lets Python data sources take only the first
    two) and `partition_by` (Spark's DataFrameWriter.partitionBy is refused for them too):
    the other two modes are decided here, on the driver, before an append. `options` are the
    data source's (recordType, compression, storage_options as a dict or JSON, ...)."""
    if mode.lower() not in ("append", "overwrite", "errorifexists", "error", "ignore"):
        raise ValueError(f"mode must be append, overwrite, errorifexists or ignore, not {mode!r}")
    storage = options.get("storage_options")
    if isinstance(storage, dict):
        options["storage_options"] = json.dumps(storage)
    storage = json.loads(options["storage_options"]) if options.get("storage_options") else None
    if mode.lower() in ("errorifexists", "error", "ignore") and JobFolder(destination, "", storage).exists():
        if mode.lower() == "ignore":
            return
        raise FileExistsError(f"{destination} already holds files (mode={mode!r}; use append or overwrite)")
    register(df.sparkSession)
    writer = df.write.format(FORMAT).mode("overwrite" if mode.lower() == "overwrite" else "append")
    if partition_by:
        options["partitionBy"] = ",".join(partition_by)
    writer.options(**{key: str(value) for key, value in options.items()}).save(destination)
