"""Request ids: one per request, held in a context variable and added to every log line of the request.

A caller's own id (HTTP ``X-Request-Id``, gRPC ``x-request-id`` metadata) is kept when it is 1-128
characters of ``A-Z a-z 0-9 . _ : -`` (a UUID, a ULID, a trace id); anything else, or none, is
replaced by a new id (32 hex digits), so a header can put neither markup nor line breaks into the
logs or the response headers. Each request is served in a task of its own (uvicorn, grpc.aio), and
the id is set at its start, so it never leaks from one request into another. ``RequestIdFilter``,
installed on the JSON log handler by ``configure_logging``, adds ``request_id`` to every record
logged while a request is served.
"""

from __future__ import annotations

import logging
import re
import uuid
from contextvars import ContextVar

__all__ = ["REQUEST_ID_HEADER", "RequestIdFilter", "accept_request_id", "current_request_id", "start_request"]

REQUEST_ID_HEADER = "X-Request-Id"
MAX_REQUEST_ID = 128
_VALID = re.compile(rf"[A-Za-z0-9._:-]{{1,{MAX_REQUEST_ID}}}")

current_request_id: ContextVar[str | None] = ContextVar("gecserve_request_id", default=None)


def accept_request_id(given: str | bytes | None) -> str:
    """``given`` when it is a valid request id, else a new one."""
    if isinstance(given, bytes):
        given = given.decode("latin-1")
    if given is not None and _VALID.fullmatch(given):
        return given
    return uuid.uuid4().hex


def start_request(given: str | bytes | None) -> str:
    """Set the id of the request served by the current task (``given``, if valid, or a new one); return it."""
    request_id = accept_request_id(given)
    current_request_id.set(request_id)
    return request_id


class RequestIdFilter(logging.Filter):
    """Adds the current request's id to a record as ``request_id`` (an explicit ``extra=`` one wins)."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = current_request_id.get()
        if request_id is not None and not hasattr(record, "request_id"):
            record.request_id = request_id
        return True
