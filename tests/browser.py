"""Driving Debian's Chromium from the tests (tests/test_site.py, tests/test_lab.py) through Playwright, offline:
nothing downloads a browser, and every request that would leave the machine is recorded and refused."""
from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = next((p for p in ("/usr/lib/chromium/chromium", "/usr/bin/chromium") if Path(p).exists()), None)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@contextlib.contextmanager
def chromium() -> Iterator:
    """A headless Debian Chromium (a Playwright Browser); the test is skipped, with the reason, without one."""
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run does it): browser test skipped")
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """``folder`` served over HTTP on 127.0.0.1 (a free port) for as long as the block runs; yields its URL."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Visit:
    """A page opened with its problems recorded: console errors, uncaught exceptions, HTTP errors, and requests
    that would leave ``origin`` (refused)."""

    page: object
    errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)


def visit(context, origin: str) -> Visit:
    """A new page of ``context`` that records its problems (see Visit); navigate it with ``.page.goto``."""
    seen = Visit(context.new_page())
    page = seen.page
    page.on("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.errors.append(str(e)))
    page.on("response", lambda r: seen.errors.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None)

    def guard(route):  # anything not served by our loopback server is recorded and refused
        if route.request.url.startswith((origin, "data:", "blob:")):
            route.continue_()
        else:
            seen.external.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    return seen
