"""Debian's Chromium driven by Playwright: the dashboard's browser test and its screenshot.

Playwright's own browser download cannot run here (no internet), so the system's
``/usr/bin/chromium`` is launched, headless, without a sandbox (it runs as root in CI), and
without the background connections a closed network refuses.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright

__all__ = ["CHROMIUM", "chromium"]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium for the duration of the block."""
    if CHROMIUM is None:
        raise RuntimeError("no chromium on PATH: apt-get install chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()
