"""JSON responses of the HTTP API, and the one shape of every error: ``{"error": {"reason", "message"}}``.

Text is passed through as it came: a lone surrogate that a JavaScript editor sent (JSON's
``\\ud800``) comes back in the same form, since an editor's offsets count it. UTF-8 cannot hold a
lone surrogate, so such a body is written with every non-ASCII character escaped instead, which
is the same JSON value.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse

__all__ = ["TextJSONResponse", "error_response"]


class TextJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        try:
            return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def error_response(
    status: int, reason: str, message: str, retry_after: str | None = None, headers: dict[str, str] | None = None
) -> TextJSONResponse:
    all_headers = dict(headers or {})
    if retry_after:
        all_headers["Retry-After"] = retry_after
    return TextJSONResponse(
        {"error": {"reason": reason, "message": message}}, status_code=status, headers=all_headers or None
    )
