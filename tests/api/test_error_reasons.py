"""Every reason an error body (or LanguageTool's refusal, in the metrics) can carry is documented in the docs'
error table (``docs/errors.md``) with its status, and a body the framework cannot read is answered as invalid JSON
is: 422 ``invalid``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from service.api.errors import FRAMEWORK_REASONS
from service.api.http import create_app  # the app: every module defining an error class is imported
from service.pipeline.errors import RequestError
from tests.api.server import RunningServer

ERRORS_PAGE = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text(encoding="utf-8")
JSON = {"content-type": "application/json"}


def answered_reasons() -> dict[str, int]:
    """Every reason the service can answer with its status: the request errors (the APIs' own included, all
    imported with the app) and the web framework's."""
    assert create_app  # imported above for the error classes its modules define
    reasons: dict[str, int] = {}
    classes: list[type[RequestError]] = [RequestError]
    while classes:
        cls = classes.pop()
        assert reasons.setdefault(cls.reason, cls.status) == cls.status, f"{cls.reason} has two statuses"
        classes += cls.__subclasses__()
    for status, reason in FRAMEWORK_REASONS.items():
        assert reasons.setdefault(reason, status) == status, f"{reason} has two statuses"
    return reasons


def test_the_error_page_lists_every_reason_with_its_status() -> None:
    reasons = answered_reasons()
    assert {"invalid", "unauthorized", "not_ready", "store_unavailable", "method_not_allowed"} <= reasons.keys()
    rows = [f"| {status} | `{reason}` |" for reason, status in sorted(reasons.items(), key=lambda item: item[1])]
    missing = [row for row in rows if row not in ERRORS_PAGE]
    assert not missing, f"docs/errors.md's table lacks: {missing}"


@pytest.mark.parametrize("body", ["[" * 100_000, '{"text": ' + "[" * 5_000 + "]" * 5_000 + "}"])
@pytest.mark.server
def test_deeply_nested_json_is_invalid(server: RunningServer, body: str) -> None:
    answer = httpx.post(server.url + "/v1/correct", content=body, headers=JSON, timeout=30)
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["reason"] == "invalid"
    assert error["message"] == "the request body is not valid JSON: it is nested too deeply"


@pytest.mark.server
def test_a_body_that_is_not_utf8_is_invalid(server: RunningServer) -> None:
    answer = httpx.post(server.url + "/v1/correct", content=b'{"text": "\xff"}', headers=JSON, timeout=30)
    assert answer.status_code == 422 and answer.json()["error"]["reason"] == "invalid"
    assert answer.json()["error"]["message"].startswith("the request body is not UTF-8")
