# Running the `tfrecord-lite` command as a user does: `python -m tfrecord_lite ARGS` in a fresh
# interpreter (this checkout's package first on its path), its output captured. Whatever the
# outcome, a command never ends in a traceback: a failure is a one-line error.
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: Path | None = None,
    shell: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`tfrecord-lite ARGS` in a subprocess: `env` added to this process's environment, `stdin`
    a file to read (else none); with `shell`, through bash, which expands the globs in ARGS."""
    command = [sys.executable, "-m", "tfrecord_lite", *args]
    if shell:
        command = ["bash", "-c", " ".join([shlex.quote(sys.executable), "-m", "tfrecord_lite", *args])]
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    with open(stdin if stdin is not None else os.devnull, "rb") as source:
        proc = subprocess.run(
            command,
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": path, **(env or {})},
            stdin=source,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc
