"""The editor page and its files are served by the service itself (no CDN): ``GET /editor``, the page's script and
style, and ``/static/gecserve.js``, the client other editors embed."""

from __future__ import annotations

import httpx
import pytest

from tests.system.server import RunningServer

pytestmark = pytest.mark.server


def test_the_editor_page_and_its_files_are_served(server: RunningServer) -> None:
    page = httpx.get(server.url + "/editor", timeout=30)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for path in ("/static/gecserve.js", "/static/labels.js", "/static/editor.js", "/static/editor.css"):
        assert f'"{path}"' in page.text
        served = httpx.get(server.url + path, timeout=30)
        assert served.status_code == 200, path
        expected = "text/css" if path.endswith(".css") else "javascript"
        assert expected in served.headers["content-type"], path
    assert "http://" not in page.text.replace(server.url, "") and "https://" not in page.text  # nothing from a CDN
    client = httpx.get(server.url + "/static/gecserve.js", timeout=30).text
    assert "window.gecserve" in client and 'offset_unit: "utf16"' in client


def test_the_editor_page_is_not_in_the_api_schema(server: RunningServer) -> None:
    assert "/editor" not in httpx.get(server.url + "/openapi.json", timeout=30).json()["paths"]
