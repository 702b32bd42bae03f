# A fuzzer for the decoders, in the manner of tomli's fuzzer/: arbitrary bytes go
# through every entry point that parses untrusted data (decode_example,
# decode_sequence_example, decode_examples, iter_records) and each must either
# return or raise one of the library's own errors — never IndexError,
# struct.error, a MemoryError from a corrupt length, or any other leak. The
# Example decoder is also checked differentially against the protobuf runtime:
# both accept (with equal values) or both reject. The batched decoder must agree
# with the single-record one.
#
#   pip install atheris && python fuzzer/fuzz.py [libFuzzer flags, e.g. -max_total_time=60 corpus/]
#   python fuzzer/fuzz.py --hypothesis 5000     # no atheris: hypothesis drives the same checks
from __future__ import annotations

import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _setup():
    try:
        import atheris
    except ImportError:
        atheris = None
    if atheris is not None and "--hypothesis" not in sys.argv:
        with atheris.instrument_imports():
            import tfrecord_lite as tfr
    else:
        import tfrecord_lite as tfr
    from google.protobuf.message import DecodeError as ProtobufDecodeError

    from tests import reference

    return atheris, tfr, reference, ProtobufDecodeError


atheris, tfr, reference, ProtobufDecodeError = _setup()
SPEC = {
    "a": tfr.VarLenFeature("int64"),
    "b": tfr.VarLenFeature("float32"),
    "c": tfr.VarLenFeature("bytes"),
    "d": tfr.FixedLenFeature([], "int64", default_value=0),
}


def test_one_input(data: bytes) -> None:
    try:
        ours = tfr.decode_example(data)
    except tfr.DecodeError as err:
        if "group" in str(err):
            return  # documented: upb accepts some malformed group encodings that we reject
        ours = None
    try:
        theirs = reference.decode_example(data)
    except ProtobufDecodeError:
        theirs = None
    if (ours is None) != (theirs is None) or (ours is not None and not reference.same_features(ours, theirs)):
        raise AssertionError(f"decode_example and protobuf disagree on {data!r}: {ours!r} vs {theirs!r}")

    try:
        single = [tfr.decode_example(data, SPEC)] * 2
    except tfr.TFRecordError as err:
        single = err
    try:
        batch = tfr.decode_examples([data, data], SPEC)
    except tfr.TFRecordError as err:
        if not isinstance(single, tfr.TFRecordError) or str(err) != str(single):
            raise AssertionError(f"decode_examples raised {err!r} where decode_example gave {single!r}") from err
    else:
        if isinstance(single, Exception):
            raise AssertionError(f"decode_examples accepted {data!r} which decode_example rejects: {single!r}")
        for key, _spec in SPEC.items():
            for i in range(2):
                got = batch[key][i] if key in ("c", "d") else batch[key].row(i)
                if not reference.same_value(got, single[i][key]):
                    raise AssertionError(f"decode_examples differs on {key!r} for {data!r}")

    try:
        tfr.decode_sequence_example(data)
    except tfr.DecodeError:
        pass
    try:
        for _ in tfr.iter_records(io.BytesIO(data)):
            pass
    except tfr.TFRecordError:
        pass


def main() -> None:
    if atheris is not None and "--hypothesis" not in sys.argv:
        atheris.Setup(sys.argv, test_one_input)
        atheris.Fuzz()
        return
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    count = int(sys.argv[sys.argv.index("--hypothesis") + 1]) if "--hypothesis" in sys.argv[:-1] else 2000
    blobs = st.one_of(
        st.binary(max_size=200),
        st.builds(
            tfr.encode_example,
            st.fixed_dictionaries(
                {},
                optional={
                    "a": st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=5),
                    "b": st.lists(st.floats(width=32), min_size=1, max_size=5),
                    "c": st.lists(st.binary(max_size=5), min_size=1, max_size=3),
                    "d": st.integers(0, 300),
                },
            ),
        ).flatmap(
            lambda b: st.tuples(st.just(b), st.integers(0, max(len(b) - 1, 0)), st.integers(0, 255)).map(
                lambda t: t[0][: t[1]] + bytes([t[2]]) + t[0][t[1] + 1 :] if t[0] else t[0]
            )
        ),
    )

    @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(blobs)
    def run(data: bytes) -> None:
        test_one_input(data)

    run()
    print(f"fuzzed {count} inputs: no disagreement, no leaked exception")


if __name__ == "__main__":
    main()
