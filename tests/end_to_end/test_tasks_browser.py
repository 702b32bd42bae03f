"""`python3 tasks.py test` sets up the viewer tests' Chromium on a machine without one. Each case
runs tasks.py's `ensure_browser` in a real subprocess whose PATH holds only stand-ins for the system's
programs (an `apt-get` and a venv `python` that log their arguments and do what the case says),
so the order tasks.py tries things in, and what it says when all fail, are what is checked; no real
browser is installed or removed."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# apt-get: logs its arguments; `install` makes `chromium` unless the case makes it fail
APT_GET = """#!/bin/sh
echo "apt-get $*" >> "$LOG"
if [ "$1" = install ]; then
    [ -e "$BIN/apt-install-fails" ] && { rm "$BIN/apt-install-fails"; exit 100; }
    [ -e "$BIN/apt-broken" ] && exit 100
    printf '#!/bin/sh\\n' > "$BIN/chromium"; chmod +x "$BIN/chromium"
fi
exit 0
"""
# the venv's python: `-m playwright install chromium` downloads (a marker file) unless offline;
# `-c CODE` (the "is Playwright's Chromium there" question) answers from the marker
PYTHON = """#!/bin/sh
if [ "$1" = -m ]; then
    echo "python $*" >> "$LOG"
    [ -e "$BIN/offline" ] && exit 1
    touch "$BIN/playwright-chromium"; exit 0
fi
echo "python -c (asks Playwright)" >> "$LOG"
[ -e "$BIN/playwright-chromium" ]
"""


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def ensure_browser(
    tmp_path: Path, *, root: bool, apt: bool = True, flags: tuple[str, ...] = ()
) -> tuple[int, str, list[str]]:
    """Run tasks.ensure_browser in a subprocess; its exit code, output and the stand-ins' log."""
    bin_dir, log = tmp_path / "bin", tmp_path / "log"
    bin_dir.mkdir()
    log.touch()
    for tool in ("rm", "chmod", "touch"):  # what the stand-ins use, and nothing else of the system's
        (bin_dir / tool).symlink_to(shutil.which(tool) or f"/bin/{tool}")
    if apt:
        executable(bin_dir / "apt-get", APT_GET)
    executable(bin_dir / "python", PYTHON)
    for flag in flags:
        if flag == "chromium":
            executable(bin_dir / "chromium", "#!/bin/sh\n")
        else:
            (bin_dir / flag).touch()
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import tasks; "
        "sys.exit(tasks.ensure_browser(Path(sys.argv[2]), root=sys.argv[3] == 'root'))"
    )
    env = {**os.environ, "PATH": str(bin_dir), "LOG": str(log), "BIN": str(bin_dir)}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), str(bin_dir / "python"), "root" if root else "user"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr, log.read_text().splitlines()


def test_a_chromium_on_path_is_used_as_it_is(tmp_path: Path) -> None:
    code, _, calls = ensure_browser(tmp_path, root=True, flags=("chromium",))
    assert (code, calls) == (0, [])


def test_root_installs_debians_chromium(tmp_path: Path) -> None:
    code, out, calls = ensure_browser(tmp_path, root=True)
    assert code == 0, out
    assert calls == ["apt-get install -y -q chromium"]
    assert (tmp_path / "bin" / "chromium").exists()


def test_root_updates_the_package_lists_when_the_first_install_fails(tmp_path: Path) -> None:
    code, out, calls = ensure_browser(tmp_path, root=True, flags=("apt-install-fails",))
    assert code == 0, out
    assert calls == ["apt-get install -y -q chromium", "apt-get update -q", "apt-get install -y -q chromium"]


def test_without_root_playwright_downloads_its_chromium(tmp_path: Path) -> None:
    code, out, calls = ensure_browser(tmp_path, root=False)
    assert code == 0, out
    assert not [call for call in calls if call.startswith("apt-get")]
    assert "python -m playwright install chromium" in calls


def test_playwright_is_the_fallback_when_apt_fails(tmp_path: Path) -> None:
    code, out, calls = ensure_browser(tmp_path, root=True, flags=("apt-broken",))
    assert code == 0, out
    assert calls[0] == "apt-get install -y -q chromium"
    assert calls[-2:] == ["python -m playwright install chromium", "python -c (asks Playwright)"]


def test_playwrights_chromium_already_there_downloads_nothing(tmp_path: Path) -> None:
    code, out, calls = ensure_browser(tmp_path, root=False, apt=False, flags=("playwright-chromium",))
    assert code == 0, out
    assert not [call for call in calls if "install" in call]


def test_when_nothing_works_it_says_how(tmp_path: Path) -> None:
    code, out, _ = ensure_browser(tmp_path, root=False, apt=False, flags=("offline",))
    assert code == 1
    assert "apt-get install chromium" in out
    assert "python -m playwright install chromium" in out


def test_the_test_task_sets_up_the_browser_and_ci_leaves_it_to_it() -> None:
    tasks_py = (ROOT / "tasks.py").read_text()
    assert 'ensure_browser(pythons["py"])' in tasks_py
    assert "apt-get" not in (ROOT / ".ci" / "run").read_text()
