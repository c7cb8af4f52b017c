"""The docs' screenshots of what a newcomer opens: ``python -m bench.served.screenshots --out docs/screenshots``.

Starts the real server on the bundled model with the launch A/B experiment
(``deploy/experiments/accelerated-vs-autoregressive.yaml``), sends it a few seconds of editors' sentences so that
the dashboard has numbers, then drives Debian's Chromium (``bench.served.browser``) over the pages: the front page, the
editor at 1280, 768 and 420 pixels wide with a text holding several kinds of error and the card of a suggestion
opened by Tab (an insertion at 1280, a spelling mistake at 768, a deletion at 420, as a writer would reach them), and
the dashboard. The screenshots are looked at, not compared.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import Browser, Page

from bench.served.browser import chromium
from bench.served.spawn import start_server
from service.config import DEFAULT_MODEL

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENT = ROOT / "deploy" / "experiments" / "accelerated-vs-autoregressive.yaml"
TEXT = (
    "She is best student in the class. I am agree with you.\n"
    "I saw a elephant at the zoo and I have recieved your letter.\n"
    "He wants go home."
)
TRAFFIC = [
    "I saw a elephant at the zoo.",
    "She is best student in the class.",
    "We discussed about the problem yesterday.",
    "He wants go home now.",
    "I have recieved your letter.",
    "I look forward hearing from you.",
]
# width -> how many Tabs from the start of the text reach the suggestion whose card is shown
EDITOR_WIDTHS = {1280: 1, 768: 4, 420: 2}


def traffic(url: str, seconds: float) -> None:
    """Editors' sentences from sticky users for ``seconds``, so that the dashboard's charts have a few buckets."""
    end, i = time.monotonic() + seconds, 0
    with httpx.Client(timeout=30) as client:
        while time.monotonic() < end:
            body = {"text": TRAFFIC[i % len(TRAFFIC)], "client": {"user_id": f"writer-{i % 40}"}}
            client.post(url + "/v1/correct", json=body).raise_for_status()
            i += 1
            time.sleep(0.05)


def editor(browser: Browser, url: str, width: int, tabs: int, out: Path) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(url + "/editor")
    page.wait_for_selector("body[data-loaded]")
    page.fill("#editor", TEXT)
    page.wait_for_selector("#backdrop mark", state="attached")
    page.wait_for_selector("#status[data-busy='false']", timeout=60_000)
    page.focus("#editor")
    page.evaluate("document.getElementById('editor').setSelectionRange(0, 0)")
    for _ in range(tabs):
        page.keyboard.press("Tab")
    page.wait_for_selector("#card:not([hidden])")
    shot(page, out / f"editor-{width}.png")


def shot(page: Page, path: Path) -> None:
    page.screenshot(path=str(path))
    page.close()
    print(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--traffic-s", type=float, default=12.0, help="seconds of requests before the dashboard")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as logs:
        server = start_server(DEFAULT_MODEL, Path(logs), cwd=ROOT, experiment=EXPERIMENT, admin_key="screenshots")
        try:
            traffic(server.url, args.traffic_s)
            with chromium() as browser:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(server.url + "/")
                shot(page, args.out / "front.png")
                for width, tabs in EDITOR_WIDTHS.items():
                    editor(browser, server.url, width, tabs, args.out)
                page = browser.new_page(viewport={"width": 1280, "height": 1400})
                page.goto(server.url + "/dashboard")
                page.wait_for_selector("body[data-loaded]")
                page.wait_for_selector("#chart-p50 .u-legend")
                shot(page, args.out / "dashboard.png")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
