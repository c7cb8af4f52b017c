"""A body the framework cannot read (nested too deeply, not UTF-8) is answered as invalid JSON is: 422 ``invalid``,
in the one error shape, by a real server. (The table of error reasons: ``tests/api/test_error_reasons.py``.)"""

from __future__ import annotations

import httpx
import pytest

from tests.system.server import RunningServer

pytestmark = pytest.mark.server

JSON = {"content-type": "application/json"}


@pytest.mark.parametrize("body", ["[" * 100_000, '{"text": ' + "[" * 5_000 + "]" * 5_000 + "}"])
def test_deeply_nested_json_is_invalid(server: RunningServer, body: str) -> None:
    answer = httpx.post(server.url + "/v1/correct", content=body, headers=JSON, timeout=30)
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["reason"] == "invalid"
    assert error["message"] == "the request body is not valid JSON: it is nested too deeply"


def test_a_body_that_is_not_utf8_is_invalid(server: RunningServer) -> None:
    answer = httpx.post(server.url + "/v1/correct", content=b'{"text": "\xff"}', headers=JSON, timeout=30)
    assert answer.status_code == 422 and answer.json()["error"]["reason"] == "invalid"
    assert answer.json()["error"]["message"].startswith("the request body is not UTF-8")
