"""The admin key: endpoints that change state need ``Authorization: Bearer <GECSERVE_ADMIN_KEY>``.

With no key configured they answer 403, never open. The key is compared in constant time and
never logged. Reading (stats, experiments, the dashboard) is open.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

from fastapi import Header
from pydantic import SecretStr

from service.pipeline.errors import RequestError

__all__ = ["ForbiddenError", "UnauthorizedError", "admin_guard"]


class ForbiddenError(RequestError):
    status, reason = 403, "forbidden"


class UnauthorizedError(RequestError):
    status, reason = 401, "unauthorized"


def admin_guard(key: SecretStr | None) -> Callable[[str | None], Awaitable[None]]:
    """A FastAPI dependency that lets a request through only with the admin key."""

    async def require_admin(authorization: str | None = Header(None)) -> None:
        if key is None:
            raise ForbiddenError("admin endpoints are disabled: set GECSERVE_ADMIN_KEY to enable them")
        scheme, _, token = (authorization or "").partition(" ")
        expected = key.get_secret_value().encode("utf-8")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode("utf-8"), expected):
            raise UnauthorizedError("this endpoint needs 'Authorization: Bearer <admin key>'")

    return require_admin
