"""Access control of both APIs: the API key a request presents, then its key's rate limit.

``AccessControl.admit`` is the one check; HTTP runs it in ``AccessMiddleware`` (a plain ASGI
middleware, as ``limits.py``), gRPC at the start of each method, and LanguageTool's ``/v2/check`` in
its route, where LanguageTool's ``apiKey`` form field is a credential too and errors are answered
in LanguageTool's plain-text form. With no API key configured every request is admitted.

A key is presented as ``X-Api-Key: KEY`` or ``Authorization: Bearer KEY`` (gRPC: the metadata
``x-api-key`` or ``authorization``); a missing or unknown key is 401 ``unauthorized``, a key over
its rate limit 429 ``rate_limited`` with ``Retry-After``. Refusals are logged with the request id
and, for a known key, its name: never the key. Left open whatever the keys (``OPEN_PATHS``):
liveness and readiness (probes), ``/metrics`` (the scraper), the API docs and schema, the front
page, the dashboard page and its static files (the figures it shows are read from ``/v1/experiments``, which
needs a key), the editor page (its checks are ``/v1/correct`` requests, which need a key), and
LanguageTool's start-up calls. Every other route, those added later included, needs a key.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.types import ASGIApp, Receive, Scope, Send

from service.api.access.auth import KeyRing, UnauthorizedError, load_keys
from service.api.access.ratelimit import Bucket, RateLimitedError, RateLimiter, retry_after
from service.api.responses import error_response
from service.config import Settings
from service.observability.metrics import Metrics
from service.pipeline.errors import RequestError

__all__ = [
    "OPEN_PATHS",
    "REFUSALS",
    "AccessControl",
    "AccessMiddleware",
    "declare_refusals",
    "guarded",
    "presented_key",
]

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset(
    {
        "/",
        "/healthz",
        "/readyz",
        "/metrics",
        "/docs",
        "/docs/oauth2-redirect",
        "/redoc",
        "/openapi.json",
        "/dashboard",
        "/editor",
        "/v2/languages",
        "/v2/info",
        "/v2/healthcheck",
        "/v2/maxtextlength",
        "/v2/configinfo",
    }
)
OPEN_PREFIXES = ("/static/",)
# The routes admit the request themselves (apiKey is in their form): /v2/check, and /v2/words* (words.py).
SELF_CHECKED = frozenset({"/v2/check", "/v2/words", "/v2/words/add", "/v2/words/delete"})
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="gecserve"'}


REFUSALS = {
    401: "no API key, or one that is not valid (when keys are configured)",
    429: "the API key is over its rate limit; see Retry-After",
}
"""What the middleware answers before any route runs, as the schema declares it: on every route it guards
(``declare_refusals``), and in the routes' own tables of errors, which name these by status."""


def guarded(path: str) -> bool:
    """True when ``AccessMiddleware`` checks the key of a request for ``path`` (a route may be a
    template: ``/v1/experiments/{name}``)."""
    return path not in OPEN_PATHS and path not in SELF_CHECKED and not path.startswith(OPEN_PREFIXES)


def declare_refusals(app: FastAPI) -> None:
    """Make ``app``'s OpenAPI schema declare the middleware's answers (``REFUSALS``, in the error
    shape) on every route it guards: it answers them before any route runs, so routes that do not
    list them would have the schema lie about what their clients may get."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                description=app.description,
                routes=app.routes,
            )
            content = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}}
            for path, operations in schema["paths"].items():
                for operation in operations.values() if guarded(path) else ():
                    for status, text in REFUSALS.items():
                        operation["responses"].setdefault(str(status), {"description": text, "content": content})
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def presented_key(authorization: str | None, *keys: str | None) -> str | None:
    """The key a request presents: the first of ``keys`` given (``X-Api-Key``, ...), else the
    ``Authorization: Bearer`` token."""
    for key in keys:
        if key:
            return key
    scheme, _, token = (authorization or "").partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


class AccessControl:
    """API keys and their buckets; ``admit`` refuses (``RequestError``) or returns the key's name."""

    def __init__(self, keys: KeyRing, limiter: RateLimiter, default: Bucket | None, metrics: Metrics) -> None:
        self.keys = keys
        self.limiter = limiter
        self.default = default
        self.metrics = metrics

    @classmethod
    def from_settings(cls, settings: Settings, metrics: Metrics) -> AccessControl:
        """The keys, limits and limiter the settings configure (``KeyFileError`` for a bad entry)."""
        keys = KeyRing(load_keys(settings.api_keys_file, settings.api_keys), settings.admin_key)
        default = Bucket(settings.rate_limit_per_s, settings.rate_limit_burst) if settings.rate_limit_per_s else None
        limited = keys.enabled and (default is not None or any(k.rate for k in keys.keys))
        limiter = RateLimiter(settings.redis_url if limited else None, settings.redis_prefix, metrics.rate_limit_error)
        return cls(keys, limiter, default, metrics)

    @property
    def enabled(self) -> bool:
        return self.keys.enabled

    async def admit(self, presented: str | None) -> str | None:
        """The name of the presented key (None when no keys are configured); 401 or 429 otherwise."""
        if not self.keys.enabled:
            return None
        if presented is None:
            log.info("access refused", extra={"reason": "no_key"})
            raise UnauthorizedError(
                "an API key is needed: 'X-Api-Key: <key>' or 'Authorization: Bearer <key>' "
                "(gRPC metadata: x-api-key or authorization; /v2/check: apiKey)"
            )
        key = self.keys.identify(presented)
        if key is None:
            log.info("access refused", extra={"reason": "unknown_key"})
            raise UnauthorizedError("the API key is not valid")
        bucket = Bucket(key.rate, key.burst) if key.rate and key.burst else self.default
        if bucket is None or key is self.keys.admin:
            return key.name
        wait = await self.limiter.take(key.name, bucket)
        if wait > 0:
            self.metrics.rate_limited(key.name)
            raise RateLimitedError(
                f"the key {key.name!r} is over its rate limit ({bucket.rate:g} requests/s, {bucket.burst} at once)",
                retry_after=retry_after(wait),
            )
        return key.name

    async def close(self) -> None:
        await self.limiter.close()


class AccessMiddleware:
    """Admits HTTP requests outside ``OPEN_PATHS``; ``refused(path, reason)`` records each refusal."""

    def __init__(self, app: ASGIApp, access: AccessControl, refused: Callable[[str, str], None]) -> None:
        self.app = app
        self.access = access
        self.refused = refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not self.access.enabled or not guarded(path):
            await self.app(scope, receive, send)
            return
        headers = {name: value.decode("latin-1") for name, value in scope["headers"]}
        try:
            await self.access.admit(presented_key(headers.get(b"authorization"), headers.get(b"x-api-key")))
        except RequestError as error:
            self.refused(path, error.reason)
            extra = CHALLENGE if error.status == 401 else None
            await error_response(error.reason, error.message, error.retry_after, extra)(scope, receive, send)
            return
        await self.app(scope, receive, send)
