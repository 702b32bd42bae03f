"""The cores this process may run on: the one question every part that starts threads asks.

Strategy: the scheduler's affinity mask (`os.sched_getaffinity`, which a container's CPU set and
`taskset` narrow), else `os.cpu_count()` where there is no such call. Asked once per process: a
DataLoader worker forked from a process that asked asks again, as its mask may differ.
"""

from __future__ import annotations

import os

_asked: tuple[int, int] | None = None  # (pid, cores) of the process that asked


def usable_cores() -> int:
    """The cores this process may run on (at least 1)."""
    global _asked
    pid = os.getpid()
    if _asked is None or _asked[0] != pid:
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - not on Linux
            cores = os.cpu_count() or 1
        _asked = (pid, max(1, cores))
    return _asked[1]
