"""The HTTP API (FastAPI): translates JSON to the pipeline's types and its errors to status codes.

Every error, on every route, has one shape: ``{"error": {"reason", "message", "request_id"}}``
(``responses.py``). Around the routes, outermost first, plain ASGI middlewares: the request id
(``request_ids.py``); ``Connection: close`` on every answer while the service drains (after SIGTERM a
client's pooled connection is closed after its answer, so its next request opens a connection to a
replica that is not leaving, and never races the server closing the connection idle); CORS when
``GECSERVE_CORS_ORIGINS`` names origins (Starlette's); API keys and rate limits (``access.py``); and the
request-body limit (``limits.py``), which counts bytes as they arrive, so a chunked upload is cut off at
the limit instead of being read in full first. (No ``from __future__ import annotations`` here: FastAPI
reads the generate route's body model, made for the served model, from its annotation.)
"""

from typing import Any

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse, Response
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api import schemas
from service.api.access import AccessControl, AccessMiddleware, declare_refusals
from service.api.dashboard import mount_dashboard
from service.api.experiments import experiments_router
from service.api.languagetool import languagetool_router
from service.api.limits import BodyLimit
from service.api.request_ids import RequestIds
from service.api.responses import (
    ARM_HEADER,
    EXPERIMENT_HEADER,
    TextJSONResponse,
    documented_errors,
    error_response,
    served_headers,
)
from service.observability.request_id import REQUEST_ID_HEADER, current_request_id
from service.pipeline.errors import InvalidRequestError, RequestError
from service.pipeline.pipeline import Pipeline
from service.pipeline.types import Correction, CorrectRequest, GenerateRequest

__all__ = ["ARM_HEADER", "create_app"]

ERROR_RESPONSES = documented_errors(
    {
        400: "an unknown arm (in options.backend or X-Gecserve-Arm)",
        401: "no API key, or one that is not valid (when keys are configured)",
        413: "text or body over the configured limit",
        422: "invalid JSON or fields",
        429: "the API key is over its rate limit; see Retry-After",
        500: "a failure inside the service (other requests are unaffected)",
        503: "overloaded or not ready; see Retry-After",
        504: "request over its deadline",
    }
)
# /readyz answers its health report with 200 when ready and 503 when not.
READINESS_RESPONSES: dict[int | str, dict[str, Any]] = {
    503: {
        "description": "not ready: loading, warming up, shutting down, or no live engine worker",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
# /metrics: Prometheus' text format, or OpenMetrics when the scraper asks for it.
METRICS_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the metrics",
        "content": {"application/openmetrics-text": {"schema": {"type": "string"}}},
    }
}
# The route label of a request refused before it reached the pipeline, by path.
ROUTES = {"/v1/correct": "correct", "/v1/generate": "generate"}
# Reasons of errors raised by the web framework itself, by status (a body it cannot read, 400, is answered
# 422 invalid, as invalid JSON is).
FRAMEWORK_REASONS = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}


def _unreadable(cause: BaseException | None) -> str:
    """Why FastAPI could not read a request body (``cause``: what it raised)."""
    if isinstance(cause, UnicodeDecodeError):
        return f"the request body is not UTF-8 (byte {cause.start}: {cause.reason})"
    if isinstance(cause, RecursionError):
        return "the request body is not valid JSON: it is nested too deeply"
    if cause is None:
        return "the request body could not be read"
    return f"the request body could not be read ({type(cause).__name__})"


class CloseWhileDraining:
    """``Connection: close`` on the answers to requests that arrive while ``pipeline`` drains."""

    def __init__(self, app: ASGIApp, pipeline: Pipeline) -> None:
        self.app = app
        self.pipeline = pipeline

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.pipeline.draining:
            await self.app(scope, receive, send)
            return

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), (b"connection", b"close")]
            await send(message)

        await self.app(scope, receive, send_closing)


def _correction_model(correction: Correction) -> dict[str, Any]:
    return {"text": correction.text, "edits": [e.__dict__ for e in correction.edits]}


# A request's own deadline, shorter than GECSERVE_REQUEST_TIMEOUT_S (never longer): past it, 504 and
# its queued work dropped. gRPC callers set theirs with the call's deadline.
TIMEOUT_HEADER = Header(None, ge=1, le=3_600_000, description="this request's deadline in ms (at most the server's)")


def _seconds(milliseconds: int | None) -> float | None:
    return None if milliseconds is None else milliseconds / 1000


def create_app(pipeline: Pipeline, access: AccessControl | None = None) -> FastAPI:
    """The FastAPI application serving ``pipeline``, admitting requests by ``access`` (by default the
    settings' keys and limits; ``serve`` passes the one it shares with gRPC)."""
    settings, stats = pipeline.settings, pipeline.stats
    access = access or AccessControl.from_settings(settings, pipeline.metrics)
    body_limit = settings.max_text_chars * 4 * settings.max_texts + 64 * 1024
    app = FastAPI(
        title="gecserve",
        version="1",
        description="Grammatical error correction: corrections as character-offset edits.",
    )
    app.add_middleware(
        BodyLimit,
        limit=body_limit,
        too_large=lambda length, limit: error_response(
            413, "too_large", f"the request body of {length} bytes is over the limit of {limit} bytes"
        ),
    )
    app.add_middleware(
        AccessMiddleware,
        access=access,
        refused=lambda path, reason: pipeline.refused("http", ROUTES.get(path, "other"), reason),
    )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=[origin.strip() for origin in settings.cors_origins.split(",") if origin.strip()],
            allow_methods=["GET", "POST", "PUT"],
            allow_headers=["Authorization", "X-Api-Key", "Content-Type", REQUEST_ID_HEADER, ARM_HEADER],
            expose_headers=[REQUEST_ID_HEADER, ARM_HEADER, EXPERIMENT_HEADER, "Retry-After"],
            max_age=600,
        )
    app.add_middleware(CloseWhileDraining, pipeline=pipeline)
    app.add_middleware(RequestIds)
    generate_body = schemas.generate_body(pipeline.max_new_tokens)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        details = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors())
        pipeline.refused("http", ROUTES.get(request.url.path, "other"), InvalidRequestError.reason)
        return error_response(422, InvalidRequestError.reason, details or "invalid request")

    @app.exception_handler(HTTPException)
    async def framework_error(request: Request, error: HTTPException) -> Response:
        if error.status_code == 400:  # FastAPI could not read the body: a body that is not JSON is invalid
            pipeline.refused("http", ROUTES.get(request.url.path, "other"), InvalidRequestError.reason)
            return error_response(422, InvalidRequestError.reason, _unreadable(error.__cause__))
        reason = FRAMEWORK_REASONS.get(error.status_code, "http_error")
        return error_response(error.status_code, reason, str(error.detail), headers=error.headers)

    @app.exception_handler(RequestError)
    async def request_error(request: Request, error: RequestError) -> Response:
        return error_response(error.status, error.reason, error.message, error.retry_after)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> Response:
        # Answered outside the middlewares (Starlette re-raises the error, and the server logs it).
        request_id = current_request_id.get() or ""
        message = f"the request failed inside the service: {type(error).__name__}"
        return error_response(500, "internal", message, headers={REQUEST_ID_HEADER: request_id})

    @app.post(
        "/v1/correct",
        response_model=schemas.CorrectResponse,
        response_model_exclude_none=True,
        response_class=TextJSONResponse,
        responses=ERROR_RESPONSES,
    )
    async def correct(
        body: schemas.CorrectBody,
        response: Response,
        x_gecserve_arm: str | None = Header(None, max_length=64, description="serve with this arm (an override)"),
        x_gecserve_timeout_ms: int | None = TIMEOUT_HEADER,
    ) -> dict[str, Any]:
        """Corrections of one paragraph (`text`) or several (`texts`) as edits of the original text."""
        arm = body.options.backend
        if arm and x_gecserve_arm and arm != x_gecserve_arm:
            raise InvalidRequestError(f"options.backend {arm!r} and {ARM_HEADER} {x_gecserve_arm!r} disagree")
        request = CorrectRequest(
            texts=[body.text] if body.text is not None else list(body.texts or []),
            single=body.text is not None,
            offset_unit=body.offset_unit,
            arm=arm or x_gecserve_arm,
            alternatives=body.options.alternatives,
            spelling=body.options.spelling,
            user_id=body.client.user_id,
            session_id=body.client.session_id,
        )
        result = await pipeline.correct(request, api="http", timeout=_seconds(x_gecserve_timeout_ms))
        response.headers.update(served_headers(result))
        answer: dict[str, Any] = {
            "model": {"name": result.model_name, "version": result.model_version},
            "arm": result.arm,
            "backend": result.backend,
            "experiment": result.experiment,
            "timings_ms": result.timings.as_ms(),
        }
        if request.single:
            answer.update(_correction_model(result.corrections[0]))
        else:
            answer["results"] = [_correction_model(c) for c in result.corrections]
        return answer

    @app.post(
        "/v1/generate",
        response_model=schemas.GenerateResponse,
        response_class=TextJSONResponse,
        responses=ERROR_RESPONSES,
    )
    async def generate(
        body: generate_body,  # type: ignore[valid-type]
        x_gecserve_timeout_ms: int | None = TIMEOUT_HEADER,
    ) -> dict[str, Any]:
        """Rewrites of a text: beam-search n-best or seeded sampling."""
        request = GenerateRequest(**body.model_dump())
        result = await pipeline.generate(request, api="http", timeout=_seconds(x_gecserve_timeout_ms))
        return {
            "sequences": [{"text": t, "score": s} for t, s in result.sequences],
            "model": {"name": result.model_name, "version": result.model_version},
            "timings_ms": result.timings.as_ms(),
        }

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz", responses=READINESS_RESPONSES)
    async def readyz() -> Response:
        """Readiness: the model is loaded and warmed up (503 before, and while shutting down)."""
        health = pipeline.health()
        return TextJSONResponse(health, status_code=200 if health["ready"] else 503)

    @app.get("/metrics", response_class=PlainTextResponse, responses=METRICS_RESPONSES)
    async def prometheus(request: Request) -> Response:
        payload, content_type = pipeline.metrics.render_for(request.headers.get("accept"))
        return Response(payload, media_type=content_type)

    @app.get("/v1/stats")
    async def live_stats() -> dict[str, Any]:
        """Per arm over 1 and 5 minutes: requests by outcome, p50/p95/p99 latency of the successful ones
        (DDSketch), throughput, mean batch size. This replica's numbers."""
        return stats.snapshot()

    app.include_router(experiments_router(pipeline.experiments, settings.admin_key))
    app.include_router(languagetool_router(pipeline, access))
    mount_dashboard(app)
    declare_refusals(app)
    return app
