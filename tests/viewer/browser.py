"""A headless Chromium driven by Playwright, for the browser tests and the docs' screenshots:
launched from Debian's chromium when it is on PATH, else Playwright's own (`python3 tasks.py test`
sets up one of them), with every request watched."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def chromium() -> Iterator[Any]:
    """A browser (the test skips when Playwright or chromium is missing: conftest makes that a
    failure under TFRECORD_LITE_REQUIRE_BROWSER=1)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        executable = shutil.which("chromium") or p.chromium.executable_path
        if not os.path.exists(executable):
            pytest.skip("no Chromium: neither Debian's chromium nor Playwright's (python3 tasks.py test installs one)")
        browser = p.chromium.launch(executable_path=executable, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Watched:
    """A page whose console errors, page errors and requests are recorded; requests to anywhere
    but `allowed` (URL prefixes) are recorded and aborted."""

    def __init__(self, browser: Any, allowed: tuple[str, ...]) -> None:
        self.context = browser.new_context(viewport={"width": 1100, "height": 800})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.outside: list[str] = []
        self.page.on("console", lambda msg: msg.type == "error" and self.errors.append(msg.text))
        self.page.on("pageerror", lambda err: self.errors.append(str(err)))
        self.page.on("request", lambda req: self.requests.append(req.url))
        self.context.route("**/*", self._route)
        self.allowed = allowed

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.allowed):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def images_decoded(self) -> list[int]:
        """naturalWidth of every image on the page (0: not decoded)."""
        return list(self.page.eval_on_selector_all("img", "els => els.map(e => e.complete ? e.naturalWidth : 0)"))

    def close(self) -> None:
        self.context.close()
