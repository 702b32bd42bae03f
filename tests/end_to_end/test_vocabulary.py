"""One vocabulary for the whole API (docs/conventions.md), held over every public callable.

Every public function, class and public method of a public class in `tfrecord_lite` and its adapter
modules is walked with `inspect.signature`:

- an input is `source`: no parameter carries another input name (`path`, `paths`, `inputs`, ...);
- a target is `destination`, or `prefix` where shards are made: no other output name;
- a reader (a callable taking `source` and any option only readers take) takes every reader option, each with the
  annotation and default of `READ_OPTIONS`, and everything after `source` keyword-only;
- a writer's `compression` is typed as a reader's and defaults to None (written uncompressed).

The adapters of optional engines (Ray, HF, Dask, Spark) are walked where those engines are installed.
`tfrecord_lite.compat.tfrecord` is the `tfrecord` package's API, names and all, and is not walked."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import tfrecord_lite
from tfrecord_lite._stream.options import READ_OPTIONS

INPUT_NAMES = {"sources", "inputs", "path", "paths", "tfrecord_path", "records", "data", "path_or_file", "root"}
OUTPUT_NAMES = {"dest", "out", "out_path", "out_prefix", "out_dir", "index_path", "target"}
# the options only a reader of records takes: with `source`, any of them makes a callable a reader (a
# writer takes `compression` and `storage_options` too, meaning what it writes and where)
READS_RECORDS = {"verify", "on_error", "max_skipped", "max_record_bytes"}
# readers that read damage by design: they list or skip it, so they take no verify / on_error / max_skipped
DAMAGE_READERS = {"verify_file", "salvage"}
# callables whose first parameter is a record's bytes and whose specs may follow it positionally, as in
# tf.io.parse_example(serialized, features)
DECODERS = {
    "decode_example",
    "decode_examples",
    "decode_sequence_example",
    "decode_sequence_examples",
    "decode_raw",
    "parse_tensor",
    "decode_arrow",
    "decode_sequence_arrow",
    "decode_image",
    "decode_image_bytes",
    "parse_image_record",
}

ADAPTERS = [
    pytest.param("torch", marks=pytest.mark.torch),
    pytest.param("torchdata", marks=pytest.mark.torch),
    "images",
    "arrow",
    "viewer",
    "events",
    "tfds",
    pytest.param("ray", marks=pytest.mark.ray),
    pytest.param("hf", marks=pytest.mark.hf),
    pytest.param("dask", marks=pytest.mark.dask),
    pytest.param("spark", marks=pytest.mark.spark),
]
# the extra each adapter needs to import; a missing one skips (the suites that require it fail instead)
NEEDS = {
    "torch": "torch",
    "torchdata": "torchdata.nodes",
    "images": "PIL",
    "arrow": "pyarrow",
    "ray": "ray",
    "hf": "datasets",
    "dask": "dask",
}


def public_callables(module: Any) -> Iterator[tuple[str, Callable[..., Any]]]:
    """(qualified name, callable) of every public function, class and public method of a class."""
    for name in module.__all__:
        value = getattr(module, name)
        if not callable(value) or (inspect.isclass(value) and issubclass(value, BaseException)):
            continue
        if inspect.isclass(value) and (dataclasses.is_dataclass(value) or value.__module__.endswith(".proto")):
            continue  # value types: their parameters are their fields
        yield name, value
        if inspect.isclass(value):
            for attr, member in vars(value).items():
                if not attr.startswith("_") and inspect.isfunction(member):
                    yield f"{name}.{attr}", member


def parameters(function: Callable[..., Any]) -> list[inspect.Parameter]:
    try:
        signature = inspect.signature(function)
    except ValueError:  # a builtin without a signature
        return []
    return [p for p in signature.parameters.values() if p.name not in ("self", "cls")]


def problems_of(name: str, function: Callable[..., Any]) -> list[str]:
    params = parameters(function)
    names = [p.name for p in params]
    writes = name.split(".")[-1].startswith("write")  # a writer's method: its input is what it writes
    found = [f"{name}: input named {n!r}, not 'source'" for n in names if n in INPUT_NAMES and not writes]
    found += [f"{name}: target named {n!r}, not 'destination' or 'prefix'" for n in names if n in OUTPUT_NAMES]
    if "source" in names and names[0] != "source":
        found.append(f"{name}: 'source' is parameter {names.index('source') + 1}, not the first")
    options = [p for p in params if p.name in READ_OPTIONS]
    is_reader = "source" in names and any(p.name in READS_RECORDS for p in options)
    for p in options:
        annotation, default = READ_OPTIONS[p.name]
        if p.name == "compression" and not is_reader:
            default = None  # a writer's: what it writes
        if str(p.annotation) != annotation:
            found.append(f"{name}: {p.name} is annotated {p.annotation!r}, not {annotation!r}")
        if p.default != default:
            found.append(f"{name}: {p.name} defaults to {p.default!r}, not {default!r}")
        if p.kind is not inspect.Parameter.KEYWORD_ONLY:
            found.append(f"{name}: {p.name} can be passed by position")
    if is_reader:
        wanted = set(READ_OPTIONS) - ({"verify", "on_error", "max_skipped"} if name in DAMAGE_READERS else set())
        found += [f"{name}: reads records but takes no {option!r}" for option in sorted(wanted - set(names))]
        if name.split(".")[-1] not in DECODERS:
            found += [
                f"{name}: {p.name} follows 'source' but can be passed by position"
                for p in params[1:]
                if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
            ]
    return found


def check(module: Any) -> None:
    found = [problem for name, value in public_callables(module) for problem in problems_of(name, value)]
    assert not found, "\n".join(found)


def test_the_package_speaks_one_vocabulary() -> None:
    check(tfrecord_lite)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_each_adapter_speaks_it_too(adapter: str) -> None:
    if adapter in NEEDS:
        pytest.importorskip(NEEDS[adapter])
    if adapter == "spark":
        pytest.importorskip("pyspark")
    check(importlib.import_module(f"tfrecord_lite.{adapter}"))


def test_the_rules_catch_each_kind_of_slip() -> None:
    """Each rule fires on a callable that breaks it, so a pass above means something."""

    def reader(source: Any, features: Any = None, *, compression: Any = "auto", verify: bool = True) -> None: ...

    def saver(data: Any, out_path: Any, compression: Any = "gzip") -> None: ...

    slips = "\n".join(problems_of("reader", reader) + problems_of("saver", saver))
    for expected in (
        "reader: features follows 'source' but can be passed by position",
        "reader: compression is annotated",
        "reader: reads records but takes no 'on_error'",
        "saver: input named 'data'",
        "saver: target named 'out_path'",
        "saver: compression defaults to 'gzip', not None",
        "saver: compression can be passed by position",
    ):
        assert expected in slips
