# Build a free-threaded CPython (3.13, configured with --disable-gil) into a folder, for the test
# environment that runs the threads tests without the GIL (`tasks.py test --only=ft`).
#
# Strategy: no package registry this project reaches ships a free-threaded interpreter (Debian's
# archive has none; python.org and python-build-standalone are not registries), but Debian's archive holds
# CPython's own source release as the orig tarball of its python3.13 package. Download it, check its
# SHA-256 against the value written here, configure with --disable-gil, build with every core and
# install into DEST. stdlib only; run by tasks.py with the system python:
#
#   python3 .ci/free_threaded.py DEST        (DEST/bin/python3.13t and DEST/BUILT afterwards)
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

VERSION = "3.13.5"
SOURCE = f"http://deb.debian.org/debian/pool/main/p/python3.13/python3.13_{VERSION}.orig.tar.xz"
SHA256 = "93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640"


def download(url: str, target: Path) -> None:
    """`url` into `target`, checked against SHA256 (a mirror serving other bytes is refused)."""
    with urllib.request.urlopen(url, timeout=120) as response, open(target, "wb") as out:
        while chunk := response.read(1 << 20):
            out.write(chunk)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    if digest != SHA256:
        sys.exit(f"{url}: SHA-256 {digest}, expected {SHA256}")


BUILD_TOOLS = ("gcc", "make")
BUILD_HEADERS = ("zlib.h", "openssl/ssl.h", "ffi.h")  # pip needs zlib and ssl; ctypes needs libffi
INCLUDE_DIRS = ("/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu", "/usr/local/include")
DEBIAN_PACKAGES = ["gcc", "make", "zlib1g-dev", "libssl-dev", "libffi-dev"]


def ensure_build_tools() -> None:
    """A compiler, make and the headers of the modules pip needs: installed with apt-get when root and
    missing, else named."""
    missing = [tool for tool in BUILD_TOOLS if shutil.which(tool) is None]
    missing += [header for header in BUILD_HEADERS if not any(Path(d, header).exists() for d in INCLUDE_DIRS)]
    if not missing:
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        install = ["apt-get", "install", "-y", "-q", *DEBIAN_PACKAGES]
        if subprocess.run(install, check=False).returncode == 0:
            return
        subprocess.run(["apt-get", "update", "-q"], check=False)  # a fresh machine's lists may be stale
        if subprocess.run(install, check=False).returncode == 0:
            return
    sys.exit(f"building CPython needs {', '.join(missing)}: install {' '.join(DEBIAN_PACKAGES)} (Debian's names)")


def build(source: Path, dest: Path) -> None:
    """configure --disable-gil, make, make install, each into a log whose end is printed if it fails."""
    jobs = str(len(os.sched_getaffinity(0)))
    steps = [
        ["./configure", "--disable-gil", f"--prefix={dest}", "--with-ensurepip=install"],
        ["make", f"-j{jobs}"],
        ["make", "install"],
    ]
    for step in steps:
        log = source / f"{step[0].lstrip('./')}-{step[-1].lstrip('-')}.log"
        with open(log, "w") as out:
            if subprocess.run(step, cwd=source, stdout=out, stderr=subprocess.STDOUT, check=False).returncode:
                sys.stdout.write(log.read_text()[-4000:])
                sys.exit(f"free-threaded CPython: `{' '.join(step)}` failed (the end of its log above)")


def main(dest: Path) -> None:
    ensure_build_tools()
    with tempfile.TemporaryDirectory(prefix="cpython-ft-") as tmp:
        tarball = Path(tmp) / "source.tar.xz"
        download(SOURCE, tarball)
        with tarfile.open(tarball) as archive:
            archive.extractall(tmp, filter="data")
        build(Path(tmp) / f"Python-{VERSION}", dest)
    interpreter = dest / "bin" / "python3.13t"
    check = "import sys; sys.exit(sys._is_gil_enabled())"
    if subprocess.run([str(interpreter), "-c", check], check=False).returncode:
        sys.exit(f"{interpreter} runs with the GIL enabled")
    (dest / "BUILT").write_text(VERSION + "\n")  # what tasks.py looks for: a build that got this far


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 .ci/free_threaded.py DEST")
    main(Path(sys.argv[1]).resolve())
