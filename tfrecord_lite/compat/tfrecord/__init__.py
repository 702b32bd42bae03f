"""A drop-in for the `tfrecord` package 1.14.6: `import tfrecord_lite.compat.tfrecord as tfrecord`.

Strategy: the package's module tree, name for name (`reader`, `writer`, `iterator_utils`,
`example_pb2`, `tools.tfrecord2idx`, `torch.dataset`), and its top-level names (the readers'
and writer's functions, re-exported as the package does). The values, dtypes and shapes are the
package's; the records come from the library's readers and writer (CRCs checked, GZIP read
anywhere, every record in exactly one DataLoader worker). `torch` is a submodule loaded on first
use (PEP 562), so importing this package never imports torch. The differences from the package
are listed in docs/from-tfrecord.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tfrecord_lite.compat.tfrecord import example_pb2, iterator_utils, reader, tools, writer
from tfrecord_lite.compat.tfrecord.iterator_utils import cycle, sample_iterators, shuffle_iterator
from tfrecord_lite.compat.tfrecord.reader import (
    example_loader,
    extract_feature_dict,
    multi_tfrecord_loader,
    process_feature,
    sequence_loader,
    tfrecord_iterator,
    tfrecord_loader,
)
from tfrecord_lite.compat.tfrecord.writer import TFRecordWriter

if TYPE_CHECKING:
    from tfrecord_lite.compat.tfrecord import torch

__all__ = [
    "TFRecordWriter",
    "cycle",
    "example_loader",
    "example_pb2",
    "extract_feature_dict",
    "iterator_utils",
    "multi_tfrecord_loader",
    "process_feature",
    "reader",
    "sample_iterators",
    "sequence_loader",
    "shuffle_iterator",
    "tfrecord_iterator",
    "tfrecord_loader",
    "tools",
    "torch",
    "writer",
]


def __getattr__(name: str) -> Any:
    if name == "torch":  # imports torch: only when used
        module = importlib.import_module(f"{__name__}.torch")
        globals()["torch"] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
