"""The request-body limit, as a plain ASGI middleware.

A body declared (``Content-Length``) over the limit gets 413 at once, before it is read. A body
that declares no length (a chunked upload) is counted as it arrives and cut off at the limit: the
413 is raised from inside the read, so the app answers it in the usual error shape and the rest
is never buffered. (Starlette's own body limit answers a declared-length overflow in plain text,
whatever the app's error handlers say; hence this one.)
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    """Refuses request bodies over ``limit`` bytes: ``too_large(length, limit)`` when declared, 413 when streamed."""

    def __init__(self, app: ASGIApp, limit: int, too_large: Callable[[int, int], Response]) -> None:
        self.app = app
        self.limit = limit
        self.too_large = too_large

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                if value.isdigit() and int(value) > self.limit:
                    await self.too_large(int(value), self.limit)(scope, receive, send)
                    return
                break
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise HTTPException(413, f"the request body is over the limit of {self.limit} bytes")
            return message

        await self.app(scope, counted, send)
