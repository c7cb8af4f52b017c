"""JSON responses of the HTTP API: the one shape of every error (``{"error": {"reason", "message",
"request_id"}}``) and how the OpenAPI schema declares it.

Text is passed through as it came: a lone surrogate that a JavaScript editor sent (JSON's
``\\ud800``) comes back in the same form, since an editor's offsets count it. UTF-8 cannot hold a
lone surrogate, so such a body is written with every non-ASCII character escaped instead, which
is the same JSON value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fastapi.responses import JSONResponse

from service.api.schemas import ErrorResponse
from service.error_reasons import ErrorReason
from service.observability.request_id import current_request_id

__all__ = ["TextJSONResponse", "documented_errors", "error_response"]


class TextJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        try:
            return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def error_response(
    reason: str,
    message: str,
    retry_after: str | None = None,
    headers: dict[str, str] | None = None,
    status: int | None = None,
) -> TextJSONResponse:
    """The error body of ``reason`` (``service.error_reasons``), answered with its status unless ``status`` is
    given (the web framework's own, for a reason outside the table)."""
    status = ErrorReason(reason).status if status is None else status
    all_headers = dict(headers or {})
    if retry_after:
        all_headers["Retry-After"] = retry_after
    error = {"reason": reason, "message": message, "request_id": current_request_id.get()}
    return TextJSONResponse({"error": error}, status_code=status, headers=all_headers or None)


def documented_errors(descriptions: Mapping[int, str]) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of a route's errors, in the one error shape, from ``{status: description}``
    (what the route's clients may get: every status it can answer must be declared, or the schema lies)."""
    return {status: {"model": ErrorResponse, "description": text} for status, text in descriptions.items()}
