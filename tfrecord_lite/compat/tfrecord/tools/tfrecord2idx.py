"""The `tfrecord` package's `tfrecord2idx`: the text index of a TFRecord file, one
"offset length" line per record (`python -m tfrecord_lite.compat.tfrecord.tools.tfrecord2idx`).

Strategy: an uncompressed file's index is the library's `write_text_index` (its records found by
one scan that checks every length CRC, the file written atomically), byte for byte the package's.
A GZIP or ZLIB file, which the package indexes as if it were plain (lines of garbage), gets the
offsets of its records in the uncompressed stream, which is what the package's reader seeks to
in a GZIP file; counted while `iter_records` streams it, CRCs checked. Both are written as every
file a user names is: to a temporary file renamed into place (a symlink at the index's name is
replaced, never followed), with no permission the data file lacks.
"""

from __future__ import annotations

import glob
import os
import sys

import tfrecord_lite as tfr
from tfrecord_lite._compression.kinds import is_compressed
from tfrecord_lite._storage.atomic import write_atomic
from tfrecord_lite._storage.files import sniff_file

__all__ = ["create_index", "create_indices", "main"]

_FRAME = 16  # length, length CRC, payload CRC


def create_index(tfrecord_file: str, index_file: str) -> None:
    """Write the text index of `tfrecord_file` to `index_file`: each record's start and size in bytes."""
    path = os.fspath(tfrecord_file)
    if not is_compressed(sniff_file(path)):
        tfr.write_text_index(path, destination=index_file)
        return
    lines, offset = [], 0
    for record in tfr.iter_records(path):
        lines.append(f"{offset} {len(record) + _FRAME}\n")
        offset += len(record) + _FRAME
    write_atomic(os.fspath(index_file), "".join(lines).encode(), like=path)


def create_indices(tfrecord_dir: str) -> None:
    """An index `NAME.tfindex` beside each `NAME.tfrecord` of a folder."""
    for tfrecord_file in glob.glob(os.path.join(tfrecord_dir, "*.tfrecord")):
        create_index(tfrecord_file, os.path.splitext(tfrecord_file)[0] + ".tfindex")


_USAGE = """Usage:
    To create index for individual tfrecord file:
    tfrecord2idx <tfrecord path> <index path>

    To create index for all tfrecord files in a directory:
    tfrecord2idx <tfrecord dir>

    This will search for all "*.tfrecord" files and create corresponding "*.tfindex" files.
"""


def main(argv: list[str] | None = None) -> int:
    """The package's command: one file and its index path, or a folder."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 1 and os.path.isdir(args[0]):
        create_indices(args[0])
    elif len(args) == 2:
        create_index(args[0], args[1])
    else:
        print(_USAGE)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
