"""Which zlib implementation inflates (and, when asked, deflates) GZIP / ZLIB
streams. All three speak the stdlib `zlib` API (decompressobj / compressobj,
`error`), so callers take a module from `library()` and use it as zlib. The order:
ISA-L (`isal.isal_zlib`, extra [fast]) first, then zlib-ng (`zlib_ng.zlib_ng`),
then the stdlib. On a GZIP TFRecord here (a loaded 2-core VM, medians of 5) ISA-L
inflated at 1.9x the stdlib and zlib-ng at 1.5x; ISA-L's deflate ran 8x the
stdlib's level 6 at the same ratio, zlib-ng's 1.5x; and ISA-L's wheels are small
and self-contained. So ISA-L is the one [fast] installs, and zlib-ng is used when
it is the one present. TFRECORD_LITE_INFLATE=isal|zlib-ng|zlib forces one (an
ImportError when it is not installed). Default writes never come here: they use
the stdlib with TensorFlow's settings, so their bytes are TensorFlow's. Each kind's
`wbits` (the argument of that API for its format, the same for every library) is in
kinds.py, with the rule that sends a GZIP member whose header carries a header CRC to the
stdlib: ISA-L misreads such a header when its input is cut inside it.

rapidgzip's parallel inflate is not used for big single files
(benchmarks/gzip_parallel.py): on a 1 GiB GZIP TFRecord here (2 cores shared with
other jobs) it took 13.2 s of CPU with 2 threads and 5.9 s with 1, against ISA-L's
5.5 s, and longer in wall time (79 s, 56 s, against 25 s). Its second thread at best
halves the wall time on an idle machine, at twice the CPU, and whether a core is
free cannot be known from inside the process; and reading records, the framing loop
(22 s of CPU for that file's 20M records), not the inflate, is the bound. A GZIP
file with a sidecar index is inflated in threads from its seek points instead
(_index/parallel_inflate.py).
"""

from __future__ import annotations

import functools
import importlib
import os
import zlib
from types import ModuleType
from typing import Any

ENV_VAR = "TFRECORD_LITE_INFLATE"
# name -> module that provides the zlib API, best first
LIBRARIES = {"isal": "isal.isal_zlib", "zlib-ng": "zlib_ng.zlib_ng", "zlib": "zlib"}


def decompressor(wbits: int, zdict: Any = None, *, stdlib: bool = False) -> Any:
    """A decompressor of library()'s (the stdlib's when `stdlib`) for a stream of `wbits`
    (each kind's is in kinds.py; a negative one is raw deflate), primed with `zdict` when given."""
    lib = zlib if stdlib else library()
    return lib.decompressobj(wbits) if zdict is None else lib.decompressobj(wbits, zdict=zdict)


def library(name: str | None = None) -> ModuleType:
    """The zlib-compatible module to use: `name` if given, else the env var's choice, else the
    best installed one (ISA-L > zlib-ng > stdlib)."""
    return _find(name or os.environ.get(ENV_VAR) or None)


@functools.cache
def _find(name: str | None) -> ModuleType:
    if name is not None:
        if name not in LIBRARIES:
            raise ValueError(f"{ENV_VAR}={name!r} is not one of {', '.join(LIBRARIES)}")
        try:
            return importlib.import_module(LIBRARIES[name])
        except ImportError:
            raise ImportError(
                f"{ENV_VAR}={name} asks for {name}, which is not installed: pip install 'tfrlite[fast]'"
                if name == "isal"
                else f"{ENV_VAR}={name} asks for {name}, which is not installed: pip install {name}"
            ) from None
    for module in LIBRARIES.values():
        try:
            return importlib.import_module(module)
        except ImportError:
            continue
    raise AssertionError("unreachable: the stdlib zlib is always there")  # pragma: no cover


def library_name(module: ModuleType) -> str:
    """'isal' | 'zlib-ng' | 'zlib' for a module returned by `library`."""
    return next(name for name, path in LIBRARIES.items() if module.__name__ == path)
