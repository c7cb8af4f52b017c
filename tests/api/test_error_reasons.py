"""The table of error reasons (``service.error_reasons``) is every reason the service answers, each with one HTTP
status and a gRPC code, and the docs' error table (``docs/errors.md``) is that table. (A body the framework cannot
read, answered as invalid JSON is: ``tests/system/test_unreadable_bodies.py``.)"""

from __future__ import annotations

import re
from pathlib import Path

import grpc

from service.api.http.app import create_app  # the app: every module defining an error class is imported
from service.api.http.error_answers import FRAMEWORK_REASONS
from service.error_reasons import ErrorReason
from service.pipeline.errors import RequestError, status_of

ERRORS_PAGE = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text(encoding="utf-8")


def raised_reasons() -> set[ErrorReason]:
    """The reasons of every request error class (the APIs' own included, all imported with the app) and of the web
    framework's errors."""
    assert create_app  # imported above for the error classes its modules define
    reasons = set(FRAMEWORK_REASONS.values())
    classes: list[type[RequestError]] = [RequestError]
    while classes:
        cls = classes.pop()
        assert isinstance(cls.reason, ErrorReason), cls
        reasons.add(cls.reason)
        classes += cls.__subclasses__()
    return reasons


def test_the_table_is_every_reason_raised() -> None:
    assert raised_reasons() == set(ErrorReason)
    assert all(reason.status == status for status, reason in FRAMEWORK_REASONS.items())


def test_each_status_has_one_grpc_code_and_each_reason_its_status() -> None:
    codes: dict[int, grpc.StatusCode] = {}
    for reason in ErrorReason:
        assert codes.setdefault(reason.status, grpc.StatusCode[reason.grpc_code]) is grpc.StatusCode[reason.grpc_code]
        assert status_of(reason) == reason.status and reason.meaning
    assert (
        codes[429] is codes[413] is grpc.StatusCode.RESOURCE_EXHAUSTED
        and codes[504] is grpc.StatusCode.DEADLINE_EXCEEDED
    )
    assert (status_of("ok"), status_of("cancelled"), status_of("no such reason")) == (200, 499, 500)


def test_the_error_page_is_the_table() -> None:
    rows = re.findall(r"^\| (\d{3}) \| `(\w+)` \| `(\w+)` \| ", ERRORS_PAGE, flags=re.MULTILINE)
    assert rows == [(str(reason.status), reason.value, reason.grpc_code) for reason in ErrorReason]
