"""The front page, ``GET /``, on a real server with the bundled model: it says what the service is, links the
editor, the dashboard, the API docs and health (each of which answers), and names the model served, its version and
its licence; the start-up log's ready line names the same URLs, and how many start-up objects it froze
(``service.engine.collector``)."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from service.config import DEFAULT_MODEL
from tests.system.server import RunningServer

pytestmark = pytest.mark.server

MANIFEST = json.loads((DEFAULT_MODEL / "manifest.json").read_text(encoding="utf-8"))


def test_the_front_page_links_every_page_and_names_the_model(bundled: RunningServer) -> None:
    page = httpx.get(bundled.url + "/", timeout=30)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    links = dict(re.findall(r"<a id='link-([a-z_]+)' href='([^']+)'", page.text))
    assert links == {"editor": "/editor", "dashboard": "/dashboard", "api_docs": "/docs", "health": "/readyz"}
    for path in links.values():
        assert httpx.get(bundled.url + path, timeout=30).status_code == 200, path
    assert "Grammar and spelling correction for English" in page.text
    assert f"<strong id='model-name'>{MANIFEST['name']}</strong>" in page.text
    assert f"<strong id='model-version'>{MANIFEST['version']}</strong>" in page.text
    assert "NON-COMMERCIAL RESEARCH USE ONLY." in page.text  # the licence's first sentence, the rest folded
    assert f"curl -s {bundled.url}/v1/correct" in page.text  # the example is addressed to this server
    assert "/" not in httpx.get(bundled.url + "/openapi.json", timeout=30).json()["paths"]


def test_the_ready_line_names_the_urls(bundled: RunningServer) -> None:
    lines = [json.loads(line) for line in bundled.log().splitlines() if line.startswith("{")]
    (ready,) = [line for line in lines if line["msg"].startswith("ready")]
    base = bundled.url  # GECSERVE_HOST=127.0.0.1 here
    assert ready["urls"] == {
        "home": base + "/",
        "editor": base + "/editor",
        "dashboard": base + "/dashboard",
        "api_docs": base + "/docs",
        "health": base + "/readyz",
    }
    assert ready["msg"] == (
        f"ready: open {base}/ (editor {base}/editor, dashboard {base}/dashboard, API docs {base}/docs)"
    )
    assert ready["grpc_port"] == bundled.grpc_port
    assert ready["frozen_objects"] > 100_000  # the model's start-up objects, out of the collector's walks
