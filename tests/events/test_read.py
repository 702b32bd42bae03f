"""read_events, to_pandas and to_arrow over real logdirs: TensorFlow's (tests/data/tensorboard,
against TensorBoard's stored reading of it) and EventWriter's; the filters, the run names, the
tables, and what damaged or hostile events do."""

from __future__ import annotations

import json
import os
import re
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._tensorboard import assert_same_reading, our_reading
from tests.conftest import DATA_DIR
from tfrecord_lite import DecodeError, TFRecordError, TruncatedRecordError
from tfrecord_lite._wire.framing import frame
from tfrecord_lite.events import EventWriter, read_events, to_arrow, to_pandas

TB = DATA_DIR / "tensorboard"
LOGDIR = TB / "logdir"


# ------------------------------------------------------------------ raw events, for hostile cases


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def event(step: int, *values: bytes, wall_time: float = 1.5) -> bytes:
    summary = field(5, b"".join(field(1, v) for v in values))
    return b"\x09" + struct.pack("<d", wall_time) + b"\x10" + varint(step) + summary


def simple(tag: bytes, x: float) -> bytes:
    return field(1, tag) + b"\x15" + struct.pack("<f", x)


def write_events(path: Path, *records: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(frame(record) for record in records))
    return path


# ------------------------------------------------------------------ TensorBoard's reading


def test_tensorflows_logdir_reads_as_tensorboard_reads_it() -> None:
    theirs = json.loads((TB / "oracle.json").read_text())
    assert_same_reading(our_reading(read_events(LOGDIR)), theirs)


def test_runs_are_the_folders_holding_events_files_named_by_their_relative_path() -> None:
    assert sorted({r.run for r in read_events(LOGDIR, kinds="scalar")}) == ["hparams/trial-0", "nested/v1", "v2"]
    assert {r.run for r in read_events(LOGDIR / "nested", kinds="scalar")} == {"v1"}
    (one,) = sorted((LOGDIR / "v2").iterdir())
    assert {r.run for r in read_events(one, tags="loss")} == {"."}
    assert {r.run for r in read_events(LOGDIR, runs="nested/*", kinds="scalar")} == {"nested/v1"}


def test_a_folder_without_events_files_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no events here")
    with pytest.raises(FileNotFoundError, match="no TensorBoard events file"):
        list(read_events(tmp_path))


def test_tags_and_kinds_filter() -> None:
    assert {r.tag for r in read_events(LOGDIR, tags="loss*")} == {"loss"}
    assert {r.tag for r in read_events(LOGDIR, tags=["v1/s*", "metrics/*"])} == {"v1/scalar", "metrics/accuracy"}
    assert {r.kind for r in read_events(LOGDIR, kinds=["histogram", "text"])} == {"histogram", "text"}
    with pytest.raises(ValueError, match="unknown 'scalars'"):
        list(read_events(LOGDIR, kinds="scalars"))


def test_a_filtered_tags_payload_is_never_decoded(tmp_path: Path) -> None:
    """A value whose payload does not decode (a histogram whose packed doubles are cut) raises only
    when its tag is read."""
    bad_histogram = field(1, b"bad") + field(5, field(6, b"\x00" * 7))
    path = write_events(tmp_path / "run" / "events.out.tfevents.1", event(1, simple(b"loss", 0.5), bad_histogram))
    assert [(r.tag, r.value) for r in read_events(tmp_path, tags="loss")] == [("loss", 0.5)]
    with pytest.raises(DecodeError, match=r"8 bytes \(in .*, record 0, at byte offset 0\)") as err:
        list(read_events(tmp_path))
    assert str(path) in str(err.value)


def test_bad_utf8_tags_are_a_clear_error_or_skipped(tmp_path: Path) -> None:
    write_events(tmp_path / "events.out.tfevents.1", event(1, simple(b"\xffloss", 1.0)), event(2, simple(b"ok", 2.0)))
    with pytest.raises(DecodeError, match="tag is not UTF-8"):
        list(read_events(tmp_path))
    assert [(r.tag, r.step) for r in read_events(tmp_path, on_error="skip")] == [("ok", 2)]


def test_events_that_do_not_decode_count_toward_max_skipped_with_crc_damage(tmp_path: Path) -> None:
    good, bad = event(1, simple(b"ok", 1.0)), event(2, simple(b"\xffloss", 2.0))
    path = write_events(tmp_path / "events.out.tfevents.1", good, bad, good, bad)
    second, fourth = len(frame(good)), 2 * len(frame(good)) + len(frame(bad))
    errors: list[DecodeError] = []
    assert [r.step for r in read_events(tmp_path, on_error=errors.append)] == [1, 1]
    assert [(e.path, e.record, e.offset) for e in errors] == [(str(path), 1, second), (str(path), 3, fourth)]
    assert "tag is not UTF-8" in str(errors[0])
    with pytest.raises(DecodeError, match=r"more than max_skipped=1 .*tag is not UTF-8") as err:
        list(read_events(tmp_path, on_error="skip", max_skipped=1))
    assert err.value.offset == fourth
    with pytest.raises(DecodeError, match="max_skipped=1"):
        to_pandas(tmp_path, on_error="skip", max_skipped=1)
    # one count over CRC damage and events that do not decode, over every file of the log
    damaged = bytearray(frame(good))
    damaged[-1] ^= 0xFF
    (tmp_path / "run2").mkdir()
    (tmp_path / "run2" / "events.out.tfevents.2").write_bytes(bytes(damaged) + frame(good))
    assert len(list(read_events(tmp_path, on_error="skip", max_skipped=3))) == 3
    with pytest.raises(TFRecordError, match="max_skipped=2"):
        list(read_events(tmp_path, on_error="skip", max_skipped=2))


def test_hostile_histograms_and_nesting_are_refused_without_allocating(tmp_path: Path) -> None:
    # a packed field claiming 2**40 bytes; 2**21 bucket counts (more than are read); hparams nested
    # 200 deep in google.protobuf.Value lists
    claim = field(1, b"h") + field(5, varint(7 << 3 | 2) + varint(1 << 40) + b"\x00" * 16)
    many = field(1, b"m") + field(5, field(7, np.ones(1 << 21).tobytes()))
    nested = field(3, b"x")
    for _ in range(200):
        nested = field(6, field(1, nested))
    session = field(3, field(1, field(1, b"k") + field(2, nested)))
    hparams_meta = field(9, field(1, field(1, b"hparams") + field(2, session)))
    for i, value in enumerate([claim, many, field(1, b"hp") + hparams_meta]):
        write_events(tmp_path / str(i) / "events.out.tfevents.1", event(1, value))
        with pytest.raises(DecodeError, match=r"malformed|more than"):
            list(read_events(tmp_path / str(i)))


def test_a_torn_tail_is_an_error_naming_the_file(tmp_path: Path) -> None:
    records = event(1, simple(b"loss", 1.0)), event(2, simple(b"loss", 2.0))
    path = write_events(tmp_path / "events.out.tfevents.1", *records)
    data = path.read_bytes()
    path.write_bytes(data[:-5])
    with pytest.raises(TruncatedRecordError) as err:
        list(read_events(tmp_path))
    assert str(path) in str(err.value)
    assert [r.step for r in read_events(tmp_path, on_error="skip")] == [1]


# ------------------------------------------------------------------ tables


def _scalars_logdir(root: Path) -> Path:
    for run, scale in (("a", 1.0), ("b/c", 2.0)):
        with EventWriter(root / run) as writer:
            for step in range(4):
                writer.add_scalar("loss", scale / (step + 1), step, wall_time=1e9 + step)
                writer.add_scalar("lr", 0.1 * scale, step, wall_time=1e9 + step)
                writer.add_text("note", f"step {step}", step, wall_time=1e9 + step)
    return root


def test_to_pandas_long_and_wide(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    logdir = _scalars_logdir(tmp_path)
    long = to_pandas(logdir, kinds="scalar")
    assert list(long.columns) == ["run", "step", "wall_time", "tag", "kind", "value"]
    assert long["value"].dtype == np.float64 and len(long) == 16
    assert str(long["wall_time"].dtype) == "datetime64[ns, UTC]"
    assert long["wall_time"].iloc[0] == pd.Timestamp(1e9, unit="s", tz="UTC")
    wide = to_pandas(logdir, tags=["loss", "lr"], pivot=True)
    assert list(wide.columns) == ["run", "step", "wall_time", "loss", "lr"]
    b = wide[wide["run"] == "b/c"]
    np.testing.assert_allclose(b["loss"], np.float32([2.0, 1.0, 2 / 3, 0.5]))
    assert to_pandas(logdir, kinds="text")["value"].tolist()[:2] == ["step 0", "step 1"]


def test_to_arrow_types_each_kind_and_refuses_a_mix(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    logdir = _scalars_logdir(tmp_path)
    table = to_arrow(logdir, kinds="scalar")
    assert table.schema.field("value").type == pa.float64()
    assert table.schema.field("wall_time").type == pa.timestamp("us", tz="UTC")
    assert to_arrow(logdir, kinds="text").schema.field("value").type == pa.string()
    with pytest.raises(ValueError, match="kinds scalar, text"):
        to_arrow(logdir)


@pytest.mark.parametrize(
    ("missing", "call", "extra", "present"),
    [
        ("pandas", lambda logdir: to_pandas(logdir), "tfrlite[pandas]", None),
        ("pyarrow", lambda logdir: to_arrow(logdir, kinds="scalar"), "tfrlite[arrow]", None),
        ("pandas", lambda logdir: to_arrow(logdir, kinds="scalar", pivot=True), "tfrlite[pandas]", "pyarrow"),
    ],
)
def test_a_missing_table_library_is_named_with_its_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, missing: str, call: Any, extra: str, present: str | None
) -> None:
    if present:
        pytest.importorskip(present)  # what the call needs before it asks for the missing one
    logdir = _scalars_logdir(tmp_path)
    monkeypatch.setitem(sys.modules, missing, None)  # as if not installed: importing it raises ImportError
    with pytest.raises(ImportError, match=rf"needs {missing}: pip install '{re.escape(extra)}'"):
        call(logdir)


def test_thousands_of_runs(tmp_path: Path) -> None:
    for i in range(2000):
        write_events(tmp_path / f"sweep/{i:04d}" / "events.out.tfevents.1", event(i, simple(b"loss", float(i))))
    rows = list(read_events(tmp_path))
    assert [r.run for r in rows] == [f"sweep/{i:04d}" for i in range(2000)]
    assert [r.value for r in rows] == [float(i) for i in range(2000)]


def test_event_writer_file_starts_with_the_file_version(tmp_path: Path) -> None:
    with EventWriter(tmp_path) as writer:
        writer.add_scalar("x", 3.0, 7)
    name = os.path.basename(writer.path)
    assert name.startswith("events.out.tfevents.") and name.endswith(".v2")
    first = Path(writer.path).read_bytes()[12:80]
    assert b"brain.Event:2" in first
    rows: list[Any] = list(read_events(tmp_path))
    assert [(r.step, r.tag, r.value) for r in rows] == [(7, "x", 3.0)]


def _tensor(tag: bytes, x: float, metadata: bytes = b"", double: bool = False) -> bytes:
    content = struct.pack("<d", x) if double else struct.pack("<f", x)
    header = b"\x08\x02\x12\x00\x22\x08" if double else b"\x08\x01\x12\x00\x22\x04"
    return field(1, tag) + field(8, header + content) + metadata


def _plugin(name: bytes) -> bytes:
    return field(9, field(1, field(1, name)))


def test_tables_hold_the_rows_read_events_yields_whatever_the_layouts(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    # the tables remember each scalar event's layout: every form, step size, a tag whose plugin
    # changes and a tag that is not UTF-8 must still give read_events' rows
    scalars = _plugin(b"scalars")
    records = [event(0, simple(b"a", 0.0))[:9] + event(0, simple(b"a", 0.0))[11:]]  # step 0 omitted
    for step in (1, 2, 200, 300, 40_000, 50_000, 3_000_000, 4_000_000):
        records += [event(step, simple(b"a", step)), event(step, _tensor(b"x", step, scalars))]
        records += [event(step, _tensor(b"x", step + 0.5)), event(step, _tensor(b"d", step, scalars, double=True))]
    records += [event(7, _tensor(b"x", 7.0, _plugin(b"custom"))), event(8, _tensor(b"x", 8.0))]
    records += [event(9, _tensor(b"x", 9.0, scalars)), event(10, _tensor(b"x", 10.0))]
    records += [event(11, simple(b"\xffbad", 1.0)), event(12, simple(b"a", 12.0))]
    write_events(tmp_path / "run" / "events.out.tfevents.1", *records)
    for options in ({}, {"tags": "x"}, {"kinds": "scalar"}, {"kinds": "tensor"}):
        rows = [
            (r.run, r.step, r.wall_time, r.tag, r.kind, str(r.value))
            for r in read_events(tmp_path, on_error="skip", **options)
        ]
        frame = to_pandas(tmp_path, on_error="skip", **options)
        seconds = frame["wall_time"].astype("int64") / 1e9
        got = [
            (run, step, wall_time, tag, kind, str(value))
            for run, step, wall_time, tag, kind, value in zip(
                frame["run"], frame["step"], seconds, frame["tag"], frame["kind"], frame["value"], strict=True
            )
        ]
        assert got == rows, options
        assert len(rows) > 0
    kinds = [r.kind for r in read_events(tmp_path, tags="x", on_error="skip")]
    assert kinds[-4:] == ["tensor", "tensor", "scalar", "scalar"]
    with pytest.raises(DecodeError, match="tag is not UTF-8"):
        to_pandas(tmp_path)


def test_events_files_get_no_default_sidecar(tmp_path: Path) -> None:
    """TensorBoard reads every file whose name holds "tfevents", so random access into an events file
    keeps its index in memory unless a sidecar is asked for."""
    with EventWriter(tmp_path / "run") as writer:
        for step in range(5):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
    (events,) = (tmp_path / "run").iterdir()
    with tfr.TFRecordFile(events) as records:
        assert len(records) == 6  # the file_version event, then the scalars
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [events.name]
    with tfr.TFRecordFile(events, index=True) as records:
        assert len(records) == 6
    assert (tmp_path / "run" / (events.name + ".tfrlidx")).is_file()
