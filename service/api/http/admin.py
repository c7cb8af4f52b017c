"""The admin key: endpoints that change state need ``Authorization: Bearer <GECSERVE_ADMIN_KEY>``.

With no key configured they answer 403, never open. The key is compared in constant time (the
hashes of both, so not even its length shows) and never logged. The state-changing endpoints are
the experiments' start, weights and stop (``experiments.py``); the others only read, or serve
corrections. With API keys configured, reading needs an API key (or the admin key: ``access/control.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import Header
from pydantic import SecretStr

from service.api.access.auth import UnauthorizedError, same_secret
from service.error_reasons import ErrorReason
from service.pipeline.errors import RequestError

__all__ = ["ADMIN_REFUSALS", "ForbiddenError", "admin_guard"]

ADMIN_REFUSALS = {
    401: "no admin key, or a wrong one",
    403: "admin endpoints are disabled (no GECSERVE_ADMIN_KEY)",
}
"""What ``admin_guard`` answers, as the routes behind it declare it (``documented_errors``)."""


class ForbiddenError(RequestError):
    reason = ErrorReason.FORBIDDEN


def admin_guard(key: SecretStr | None) -> Callable[[str | None], Awaitable[None]]:
    """A FastAPI dependency that lets a request through only with the admin key."""

    async def require_admin(authorization: str | None = Header(None)) -> None:
        if key is None:
            raise ForbiddenError("admin endpoints are disabled: set GECSERVE_ADMIN_KEY to enable them")
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not same_secret(token.strip(), key.get_secret_value()):
            raise UnauthorizedError("this endpoint needs 'Authorization: Bearer <admin key>'")

    return require_admin
