# The threads the library starts for num_threads= (named tfrecord_lite...), counted apart from any
# other test's threads, which may end meanwhile.
from __future__ import annotations

import threading
import time


def pool_threads() -> int:
    """The live threads the library started."""
    return sum(thread.name.startswith("tfrecord_lite") for thread in threading.enumerate())


def wait_for_threads(count: int) -> int:
    """The library's live threads once they are back to `count` (or after 5 s)."""
    deadline = time.monotonic() + 5
    while pool_threads() > count and time.monotonic() < deadline:
        time.sleep(0.01)
    return pool_threads()
