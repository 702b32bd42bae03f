# A fuzzer for everything that parses untrusted bytes, in the manner of tomli's
# fuzzer/. Each target takes arbitrary bytes and must either return or raise one of
# the library's own errors (TFRecordError and its subclasses) — never IndexError,
# struct.error, a MemoryError from a corrupt length, or any other leak — and checks
# what it can against an independent answer:
#
#   arrow    decode_arrow without a spec (its own columnar decoders) against
#            decode_example, row by row.
#   example  decode_example against the protobuf runtime (both accept with equal
#            values, or both reject); decode_examples against decode_example (and its
#            copy=False views against its copies);
#            decode_sequence_example against the protobuf runtime too.
#   framing  iter_records strict and with on_error (the skip path never raises, keeps
#            the strict records as its prefix and invents no record), verify_file.
#   gzip     the same through the GZIP / ZLIB path: the input itself as a stream, and
#            a valid compressed file damaged by the input.
#   index    the DALI text-index parser, and TFRecordFile over a valid file with a
#            binary sidecar or text index damaged by the input, and over a GZIP file
#            with its sidecar of seek points and windows damaged (every record read is
#            the true one, or a library error).
#   large    decode_examples on large records (their long values left out of the
#            batch's join) against decode_example, the input flipping their bytes.
#   tensor   parse_tensor as every dtype against the protobuf runtime's TensorProto
#            (both reject, or the same shape and values, by TensorFlow's rules).
#   journal, sidecar, remote   what a hostile folder or store plants beside the records: a
#            publish journal, the default sidecars of a plain and a GZIP file, the index bodies
#            the remote loader parses (fuzzer/hostile_files.py says what each checks).
#   viewer, stats   an HTTP request to the viewer's handler (never a crash; only the server's
#            own Host answered), and records summarised by statistics (its caps held)
#            (fuzzer/hostile_services.py says what each checks).
#
# Inputs start from the seed corpus in fuzzer/corpus/ (TARGET/ files), mutated.
#
#   pip install atheris && python fuzzer/fuzz.py --target framing [libFuzzer flags, e.g.
#       -max_total_time=60 fuzzer/corpus/framing]
#   python fuzzer/fuzz.py --hypothesis --seconds 60 --seed 0   # every target, time split evenly
#   python fuzzer/fuzz.py --hypothesis 5000 --target example   # a number of inputs
from __future__ import annotations

import argparse
import gzip
import importlib.util
import io
import os
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "corpus"
sys.path.insert(0, str(ROOT))


def _setup():
    try:
        import atheris
    except ImportError:
        atheris = None
    if atheris is not None and "--hypothesis" not in sys.argv:
        with atheris.instrument_imports():
            import tfrecord_lite as tfr

            for name in tfr.__all__:  # the package loads its modules lazily: load them here, instrumented
                getattr(tfr, name)
            try:
                import tfrecord_lite.arrow
            except ImportError:  # the arrow target needs pyarrow
                pass
    else:
        import tfrecord_lite as tfr
    from google.protobuf.message import DecodeError as ProtobufDecodeError

    from tests import reference

    return atheris, tfr, reference, ProtobufDecodeError


atheris, tfr, reference, ProtobufDecodeError = _setup()
from fuzzer.hostile_files import fuzz_journal, fuzz_remote, fuzz_sidecar  # noqa: E402
from fuzzer.hostile_services import fuzz_stats, fuzz_viewer  # noqa: E402
from tests._tensor_reference import check_parse  # noqa: E402
from tfrecord_lite._records.verify import verify_file  # noqa: E402
from tfrecord_lite._wire.framing import frame  # noqa: E402

SPEC = {
    "a": tfr.VarLenFeature("int64"),
    "b": tfr.VarLenFeature("float32"),
    "c": tfr.VarLenFeature("bytes"),
    "d": tfr.FixedLenFeature([], "int64", default_value=0),
}


# ---------------------------------------------------------------- targets


def fuzz_example(data: bytes) -> None:
    try:
        ours = tfr.decode_example(data)
    except tfr.DecodeError as err:
        if "group" in str(err):
            return  # documented: upb accepts some malformed group encodings that we reject
        ours = None
    if reference.SOUND_ON_MALFORMED_INPUT:  # else the protobuf runtime itself may crash on `data`
        try:
            theirs = reference.decode_example(data)
        except ProtobufDecodeError:
            theirs = None
        if (ours is None) != (theirs is None) or (ours is not None and not reference.same_features(ours, theirs)):
            raise AssertionError(f"decode_example and protobuf disagree on {data!r}: {ours!r} vs {theirs!r}")

    _check_batch([data, data])
    _check_sequence(data)


def _check_sequence(data: bytes) -> None:
    """decode_sequence_example against the protobuf runtime: both accept with equal values, or
    both reject."""
    try:
        ours = tfr.decode_sequence_example(data)
    except tfr.DecodeError as err:
        if "group" in str(err):
            return  # as in fuzz_example
        ours = None
    if not reference.SOUND_ON_MALFORMED_INPUT:
        return
    try:
        theirs = reference.decode_sequence_example(data)
    except ProtobufDecodeError:
        theirs = None
    if ours is None or theirs is None:
        same = ours is theirs
    else:
        (context, lists), (their_context, their_lists) = ours, theirs
        same = reference.same_features(context, their_context) and lists.keys() == their_lists.keys()
        same = same and all(
            len(lists[k]) == len(their_lists[k]) and all(map(reference.same_value, lists[k], their_lists[k]))
            for k in lists
        )
    if not same:
        raise AssertionError(f"decode_sequence_example and protobuf disagree on {data!r}: {ours!r} vs {theirs!r}")


def _check_batch(records: list[bytes]) -> None:
    """decode_examples(records, SPEC) against decode_example(record, SPEC) one by one: equal
    values, or the error decode_example raises for one of the records."""
    single: list[dict] = []
    errors: list[str] = []
    for record in records:
        try:
            single.append(tfr.decode_example(record, SPEC))
        except tfr.TFRecordError as err:
            errors.append(str(err))
    try:
        batch = tfr.decode_examples(records, SPEC)
    except tfr.TFRecordError as err:
        if str(err) not in errors:
            raise AssertionError(f"decode_examples raised {err!r} where decode_example gave {errors!r}") from err
        return
    if errors:
        raise AssertionError(f"decode_examples accepted {records!r}, which decode_example rejects: {errors!r}")
    for key in SPEC:
        for i in range(len(records)):
            got = batch[key][i] if key in ("c", "d") else batch[key].row(i)
            if not reference.same_value(got, single[i][key]):
                raise AssertionError(f"decode_examples differs on {key!r} in record {i} of {records!r}")
    views = tfr.decode_examples(records, SPEC, copy=False)["c"]
    if [[bytes(v) for v in row] for row in views] != batch["c"]:
        raise AssertionError(f"decode_examples(copy=False) differs from the copies on {records!r}")


# an Example as large as an image record: decode_examples leaves its long value out of the batch's join
_GOOD_LARGE = tfr.encode_example({"a": [1, -2], "b": [0.5, 2.0], "c": [b"x" * 40_000, b"yz"], "d": 7})


def fuzz_large(data: bytes) -> None:
    """decode_examples on large records (_decode_sparse: each record's layout looked up, its long
    values left out of the join) against decode_example: `data` flips bytes of a large Example
    around its long value."""
    damaged = _damage_ends(_GOOD_LARGE, data)
    _check_batch([damaged, _GOOD_LARGE, damaged])


def _damage_ends(good: bytes, data: bytes) -> bytes:
    """`good` changed by `data` near its ends: pairs (position from the start or, when odd, from
    the end, xor)."""
    out = bytearray(good)
    for k in range(0, len(data) - 1, 2):
        at = min(data[k] >> 1, len(out) - 1)
        out[at if data[k] % 2 == 0 else len(out) - 1 - at] ^= data[k + 1] or 1
    return bytes(out)


def fuzz_arrow(data: bytes) -> None:
    """decode_arrow without a spec (its own columnar decoders: per-layout tables, the general
    batch decoder) against decode_example row by row: both read a batch with equal values, or
    both raise a library error."""
    from tfrecord_lite.arrow import decode_arrow

    records = [data, b"", data, data]  # a layout repeated, beside another (an empty Example)
    try:
        rows: list[dict] | None = _arrow_rows(records)
    except tfr.TFRecordError:
        rows = None
    try:
        batch = decode_arrow(records)
    except tfr.TFRecordError as err:
        if rows is not None:
            raise AssertionError(f"decode_arrow rejects {data!r}, which decode_example reads: {err!r}") from err
        return
    if rows is None:
        raise AssertionError(f"decode_arrow reads {data!r}, which decode_example rejects")
    lists = {key for row in rows for key in row.get(_LISTS, ())}
    context = {key for row in rows for key in row if key is not _LISTS and key not in lists}
    if batch.schema.names != sorted(context) + sorted(lists):  # the context's columns, then the lists'
        raise AssertionError(f"decode_arrow's columns {batch.schema.names} for {data!r}")
    for key in batch.schema.names:
        for row, cell in zip(rows, batch.column(key).to_pylist(), strict=True):
            want = row.get(key)
            if key in lists and want is not None:  # a feature list: a cell per step
                same = cell is not None and len(cell) == len(want) and all(map(_same_cell, cell, want))
            else:
                same = _same_cell(cell, want)
            if not same:
                raise AssertionError(f"decode_arrow differs on {key!r} for {data!r}: {cell!r} vs {want!r}")


_LISTS = object()  # a row's key for the names of its feature lists


def _arrow_rows(records: list[bytes]) -> list[dict]:
    """What decode_arrow must give without a spec: decode_example's rows or, when a record carries
    feature lists (the batch is then read as SequenceExamples), decode_sequence_example's context
    and feature lists side by side; a key that is both is an error there."""
    sequences = [tfr.decode_sequence_example(r) for r in records]
    if not any(lists for _, lists in sequences):
        return [tfr.decode_example(r) for r in records]
    rows: list[dict] = []
    for context, lists in sequences:
        if set(context) & set(lists):
            raise tfr.FeatureError(sorted(set(context) & set(lists))[0], "a context feature and a feature list")
        rows.append({**context, **lists, _LISTS: set(lists)})
    return rows


def _same_cell(cell: object, want: object) -> bool:
    if isinstance(want, list) or want is None or cell is None:
        return cell == want
    assert isinstance(want, np.ndarray)
    return bool(reference.same_value(want, np.asarray(cell, dtype=want.dtype)))


def _check_stream(stream: bytes, plain: bytes | None) -> None:
    """Read `stream` strictly and skipping damage; `plain` is its uncompressed record stream
    when known (no record may be invented: each one read is framed in it)."""
    strict: list[bytes] = []
    try:
        strict.extend(tfr.iter_records(io.BytesIO(stream)))
    except tfr.TFRecordError:
        pass
    errors: list[tfr.TFRecordError] = []
    skipped = list(tfr.iter_records(io.BytesIO(stream), on_error=errors.append))  # must never raise
    if skipped[: len(strict)] != strict:
        raise AssertionError(f"skipping lost or changed records that strict reading returned, for {stream!r}")
    if plain is not None and any(frame(r) not in plain for r in skipped):
        raise AssertionError(f"skipping invented a record, for {stream!r}")
    if not all(isinstance(e, tfr.TFRecordError) and e.offset is not None for e in errors):
        raise AssertionError(f"a skip was reported without an offset: {errors!r}")
    report = verify_file(io.BytesIO(stream))
    # (verify_file sums up a file with no record at all as "not a TFRecord file": one damage)
    if report.records != len(skipped) or bool(report.damage) != bool(errors):
        raise AssertionError(f"verify_file and on_error disagree on {stream!r}")
    try:
        for _ in tfr.iter_records(io.BytesIO(stream), verify=False):
            pass
    except tfr.TFRecordError:
        pass


def fuzz_framing(data: bytes) -> None:
    _check_stream(data, data)


_GOOD_STREAM = b"".join(frame(bytes([i]) * (i * 7 % 50)) for i in range(12))
_GOOD_GZIP = gzip.compress(_GOOD_STREAM, mtime=0)
_GOOD_ZLIB = zlib.compress(_GOOD_STREAM)


def _damage(good: bytes, data: bytes) -> bytes:
    """`good` changed by `data`: pairs (position, xor) flip bytes; the first byte may cut it."""
    out = bytearray(good)
    for k in range(1, len(data) - 1, 2):
        out[data[k] * len(out) // 256] ^= data[k + 1] or 1
    return bytes(out[: len(out) * (data[0] + 1) // 256] if data and data[0] < 64 else out)


def fuzz_gzip(data: bytes) -> None:
    _check_stream(b"\x1f\x8b" + data, None)
    _check_stream(gzip.compress(data, compresslevel=1, mtime=0), data)
    _check_stream(_damage(_GOOD_GZIP, data), None)
    _check_stream(_damage(_GOOD_ZLIB, data), None)


class _IndexFiles:
    """Valid TFRecord files in a temporary folder, for index inputs next to them: a plain one,
    and a GZIP one whose sidecar holds seek points with their windows (indexed_gzip's)."""

    def __init__(self) -> None:
        import numpy as np

        from tfrecord_lite._index.gzip_index import write_gzip_index

        self.folder = tempfile.mkdtemp(prefix="tfrl-fuzz-")
        self.path = os.path.join(self.folder, "data.tfrecord")
        self.records = [bytes([i]) * (i * 5 % 40) for i in range(10)]
        with tfr.TFRecordWriter(self.path) as w:
            for r in self.records:
                w.write(r)
        self.sidecar = Path(
            tfr.write_index(self.path, destination=os.path.join(self.folder, "good.tfrlidx"))
        ).read_bytes()
        text = os.path.join(self.folder, "good.idx")
        tfr.write_text_index(self.path, destination=text)
        self.text = Path(text).read_bytes()
        self.gz_path = os.path.join(self.folder, "data.tfrecord.gz")
        rng = np.random.default_rng(0)  # 1.2 MB that compress to 60 %: seek points with windows
        self.gz_records = [rng.integers(0, 30, int(n), np.uint8).tobytes() for n in rng.integers(0, 80_000, 30)]
        with tfr.TFRecordWriter(self.gz_path, compression="gzip") as w:
            for r in self.gz_records:
                w.write(r)
        self.gz_sidecar = Path(write_gzip_index(self.gz_path, os.path.join(self.folder, "gz.tfrlidx"), spacing=1 << 16))
        self.gz_sidecar_bytes = self.gz_sidecar.read_bytes()

    def read_with(self, index_bytes: bytes, gz: bool = False) -> None:
        """Read the records of the file through `index_bytes` (of the GZIP one: the first, middle and
        last, which inflate from different points): the true records, or a library error."""
        path, records = (self.gz_path, self.gz_records) if gz else (self.path, self.records)
        location = os.path.join(self.folder, "fuzzed.idx")
        Path(location).write_bytes(index_bytes)
        try:
            with tfr.TFRecordFile(path, index=location, on_stale="raise") as f:
                for i in range(len(f)) if not gz else sorted({0, len(f) // 2, len(f) - 1}):
                    if f[i] != records[i]:
                        raise AssertionError(f"record {i} read through index {index_bytes!r} is wrong")
        except tfr.TFRecordError:
            pass


_index_files: _IndexFiles | None = None


def fuzz_index(data: bytes) -> None:
    from tfrecord_lite._index.record_index import parse_text_index

    global _index_files
    if _index_files is None:
        _index_files = _IndexFiles()
    try:
        parse_text_index(data)
    except tfr.TFRecordError:
        pass
    _index_files.read_with(_damage(_index_files.sidecar, data))
    _index_files.read_with(_damage(_index_files.text, data))
    _index_files.read_with(data)
    _index_files.read_with(_damage(_index_files.gz_sidecar_bytes, data), gz=True)
    _index_files.read_with(_damage_ends(_index_files.gz_sidecar_bytes, data), gz=True)


def fuzz_tensor(data: bytes) -> None:
    check_parse(data, runtime=reference.SOUND_ON_MALFORMED_INPUT)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "arrow": fuzz_arrow,
    "example": fuzz_example,
    "framing": fuzz_framing,
    "gzip": fuzz_gzip,
    "index": fuzz_index,
    "journal": fuzz_journal,
    "large": fuzz_large,
    "remote": fuzz_remote,
    "sidecar": fuzz_sidecar,
    "stats": fuzz_stats,
    "tensor": fuzz_tensor,
    "viewer": fuzz_viewer,
}


# ---------------------------------------------------------------- driving it


def corpus(target: str) -> list[bytes]:
    folder = CORPUS / target
    return [p.read_bytes() for p in sorted(folder.iterdir())] if folder.is_dir() else []


def run_hypothesis(target: str, seconds: float | None, count: int, seed: int) -> int:
    """Fuzz `target` with hypothesis: rounds of `count` inputs (seeded: seed, seed + 1, ...)
    until `seconds` have passed (one round without); the inputs tried."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as seeded
    from hypothesis import strategies as st

    seeds = corpus(target) or [b""]
    mutated = st.tuples(st.sampled_from(seeds), st.lists(st.tuples(st.integers(0, 2**16), st.integers(0, 255)))).map(
        lambda t: bytes(_flip(t[0], t[1]))
    )
    numbers = st.lists(st.integers(-(2**70), 2**70) | st.integers(0, 200), max_size=8)
    text = numbers.map(lambda ns: "".join(f"{n}{' ' if i % 2 == 0 else chr(10)}" for i, n in enumerate(ns)).encode())
    blobs = st.one_of(st.binary(max_size=400), mutated, _examples(st), text)
    fuzz = TARGETS[target]
    for blob in seeds:
        fuzz(blob)
    tried, rounds = len(seeds), 0
    deadline = time.monotonic() + seconds if seconds is not None else None
    while True:

        @seeded(seed + rounds)
        @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(blobs)
        def one_round(data: bytes) -> None:
            fuzz(data)

        one_round()
        tried += count
        rounds += 1
        if deadline is None or time.monotonic() >= deadline:
            return tried


def _flip(blob: bytes, changes: list[tuple[int, int]]) -> bytearray:
    out = bytearray(blob)
    for at, value in changes:
        if out:
            out[at % len(out)] = value
    return out


def _examples(st):
    """Encoded Examples with one byte changed: inputs close to valid ones."""
    values = st.fixed_dictionaries(
        {},
        optional={
            "a": st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=5),
            "b": st.lists(st.floats(width=32), min_size=1, max_size=5),
            "c": st.lists(st.binary(max_size=5), min_size=1, max_size=3),
            "d": st.integers(0, 300),
        },
    )
    return st.builds(tfr.encode_example, values).flatmap(
        lambda b: st.tuples(st.just(b), st.integers(0, max(len(b) - 1, 0)), st.integers(0, 255)).map(
            lambda t: t[0][: t[1]] + bytes([t[2]]) + t[0][t[1] + 1 :] if t[0] else t[0]
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Fuzz tfrecord_lite's parsers (atheris, or hypothesis without it).")
    parser.add_argument("--target", choices=sorted(TARGETS), help="one target (default: all, with --hypothesis)")
    parser.add_argument("--hypothesis", nargs="?", type=int, const=2000, metavar="N", help="use hypothesis: N inputs")
    parser.add_argument(
        "--seconds", type=float, help="with --hypothesis: run for about this long in all (rounds of 100)"
    )
    parser.add_argument("--seed", type=int, default=0, help="with --hypothesis: the first round's seed")
    args, rest = parser.parse_known_args()
    if atheris is not None and args.hypothesis is None and args.seconds is None:
        atheris.Setup([sys.argv[0], *rest], TARGETS[args.target or "example"])
        atheris.Fuzz()
        return
    targets = [args.target] if args.target else sorted(TARGETS)
    if "arrow" in targets and importlib.util.find_spec("pyarrow") is None:
        print("fuzz arrow: skipped, it needs pyarrow (pip install 'tfrlite[arrow]')", flush=True)
        targets.remove("arrow")
    for target in targets:
        started = time.monotonic()
        seconds = args.seconds / len(targets) if args.seconds is not None else None
        count = 100 if seconds is not None else args.hypothesis or 2000
        tried = run_hypothesis(target, seconds, count, args.seed)
        print(f"fuzz {target}: {tried} inputs in {time.monotonic() - started:.1f} s, no leaked exception", flush=True)


if __name__ == "__main__":
    main()
