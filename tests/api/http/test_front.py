"""The front page's URLs (``page_urls``), as the start-up log's ready line names them: a server listening on every
interface is opened at localhost. (The page itself, on a real server: ``tests/system/test_front.py``.)"""

from __future__ import annotations

import pytest

from service.api.http.front import page_urls


@pytest.mark.parametrize(
    ("host", "base"),
    [
        ("0.0.0.0", "http://localhost:8000"),
        ("::", "http://localhost:8000"),
        ("10.0.0.5", "http://10.0.0.5:8000"),
        ("::1", "http://[::1]:8000"),
    ],
)
def test_a_server_on_every_interface_is_opened_at_localhost(host: str, base: str) -> None:
    assert page_urls(host, 8000)["home"] == base + "/"
