"""Request-size limit as a plain ASGI middleware: a body declared over the limit gets 413 before
it is read.

Plain ASGI rather than Starlette's ``@app.middleware("http")``, which runs every request through
an extra task and memory streams.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send


class BodyLimit:
    """Answers ``too_large(length)`` for requests whose ``Content-Length`` exceeds ``limit`` bytes."""

    def __init__(self, app: ASGIApp, limit: int, too_large: Callable[[int, int], Response]) -> None:
        self.app = app
        self.limit = limit
        self.too_large = too_large

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"content-length":
                    if value.isdigit() and int(value) > self.limit:
                        await self.too_large(int(value), self.limit)(scope, receive, send)
                        return
                    break
        await self.app(scope, receive, send)
