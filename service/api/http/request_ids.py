"""The HTTP side of request ids, as a plain ASGI middleware (as ``access/limits.py``).

It takes the request's ``X-Request-Id`` (or makes one: ``service/observability/request_id.py``),
sets it for the task serving the request, so that every log line and error body of the request
carries it, and adds it to the response's headers.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.observability.request_id import start_request

__all__ = ["RequestIds"]

HEADER = b"x-request-id"


class RequestIds:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((value for name, value in scope["headers"] if name == HEADER), None)
        header = (HEADER, start_request(given).encode("ascii"))

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        await self.app(scope, receive, send_with_id)
