"""The `tfrecord` package's `tools`: `tfrecord2idx` and its `create_index`.

Strategy: the package's names re-exported from the one module that holds them.
"""

from __future__ import annotations

from tfrecord_lite.compat.tfrecord.tools import tfrecord2idx
from tfrecord_lite.compat.tfrecord.tools.tfrecord2idx import create_index

__all__ = ["create_index", "tfrecord2idx"]
