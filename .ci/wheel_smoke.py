# Smoke test of the built wheel as a user gets it. `tasks.py package` runs this file with the
# python of a fresh venv that holds the wheel and its core dependencies only, from a temporary
# directory outside the checkout, so every import below resolves to the installed copy.
#
# Strategy: check where the package came from and which version it says it is, then do what a
# first-time user does (write and read a file, run the command line) and check that a missing
# extra is reported with the distribution's name. Every failure exits non-zero with a message.
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

import tfrecord_lite as tfr

DISTRIBUTION = "tfrlite"
OPTIONAL_MODULES = ("tensorflow", "torch", "PIL", "fsspec", "tqdm", "pyarrow")


def check_installation() -> None:
    """The package is the venv's copy, its version is the distribution's, and no extra came along."""
    location = Path(tfr.__file__).resolve()
    if not location.is_relative_to(Path(sys.prefix).resolve()):
        sys.exit(f"tfrecord_lite was imported from {location}, not from the venv at {sys.prefix}")
    installed = importlib.metadata.version(DISTRIBUTION)
    if installed != tfr.__version__:
        sys.exit(f"{DISTRIBUTION} is installed as {installed} but tfrecord_lite.__version__ is {tfr.__version__}")
    present = [name for name in OPTIONAL_MODULES if importlib.util.find_spec(name) is not None]
    if present:
        sys.exit(f"installing the wheel alone also installed optional packages: {', '.join(present)}")


def check_round_trip(folder: Path) -> Path:
    """Write Examples to a GZIP file, read them back with a spec; return the file."""
    path = folder / "smoke.tfrecord.gz"
    written: list[dict[str, Any]] = [
        {"label": i, "embedding": np.arange(3, dtype=np.float32) * i, "name": f"item-{i}"} for i in range(5)
    ]
    with tfr.TFRecordWriter(path, compression="gzip") as writer:
        for features in written:
            writer.write_example(features)
    spec = {
        "label": tfr.FixedLenFeature((), "int64"),
        "embedding": tfr.FixedLenFeature((3,), "float32"),
        "name": tfr.FixedLenFeature((), "string"),
    }
    read = [tfr.decode_example(record, spec) for record in tfr.iter_records(path)]
    if len(read) != len(written):
        sys.exit(f"wrote {len(written)} records to {path}, read {len(read)}")
    for want, got in zip(written, read, strict=True):
        same = (
            got["label"] == want["label"]
            and np.array_equal(got["embedding"], want["embedding"])
            and got["name"] == str(want["name"]).encode()
        )
        if not same:
            sys.exit(f"round trip through {path} changed a record: wrote {want}, read {got}")
    return path


def run(command: list[str]) -> str:
    """The stdout of `command`; exit with its output if it fails."""
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"`{' '.join(command)}` exited with {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def check_command_line(path: Path) -> None:
    """The console script and `python -m tfrecord_lite` start, and a command reads the file."""
    script = str(Path(sys.executable).with_name("tfrecord-lite"))
    for command in ([script, "--help"], [sys.executable, "-m", "tfrecord_lite", "--help"]):
        if "count" not in run(command):
            sys.exit(f"`{' '.join(command)}` does not list the commands")
    counted = json.loads(run([script, "count", "--json", str(path)]))
    if counted["total"] != 5:
        sys.exit(f"`tfrecord-lite count` found {counted['total']} records in {path}, not 5")


def check_missing_extra() -> None:
    """A URL without the `remote` extra fails with the install line naming the distribution."""
    try:
        list(tfr.iter_records("s3://bucket/data.tfrecord"))
    except ImportError as err:
        if f"pip install '{DISTRIBUTION}[remote]'" not in str(err):
            sys.exit(f"the missing-fsspec error does not say how to install it: {err}")
    else:
        sys.exit("reading an s3:// URL without fsspec did not raise ImportError")


def main() -> None:
    folder = Path(sys.argv[1])
    check_installation()
    path = check_round_trip(folder)
    check_command_line(path)
    check_missing_extra()
    print(f"smoke test passed: {DISTRIBUTION} {tfr.__version__} from {Path(tfr.__file__).parent}")


if __name__ == "__main__":
    main()
