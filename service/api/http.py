"""The HTTP API (FastAPI): translates JSON to the pipeline's types and its errors to status codes.

Every error, on every route, has one shape: ``{"error": {"reason", "message"}}`` (``responses.py``).
The request-body limit (``limits.py``) counts bytes as they arrive, so a chunked upload is cut off
at the limit instead of being read in full first. (No ``from __future__ import
annotations`` here: FastAPI reads the generate route's body model, made for the served model, from
its annotation.)
"""

from typing import Any

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from service.api import schemas
from service.api.dashboard import mount_dashboard
from service.api.experiments import experiments_router
from service.api.languagetool import languagetool_router
from service.api.limits import BodyLimit
from service.api.responses import ARM_HEADER, TextJSONResponse, error_response, served_headers
from service.pipeline.errors import InvalidRequestError, RequestError
from service.pipeline.pipeline import Pipeline
from service.pipeline.types import Correction, CorrectRequest, GenerateRequest

__all__ = ["ARM_HEADER", "create_app"]

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": schemas.ErrorResponse, "description": text}
    for code, text in (
        (400, "an unknown arm (in options.backend or X-Gecserve-Arm)"),
        (413, "text or body over the configured limit"),
        (422, "invalid JSON or fields"),
        (500, "a failure inside the service (other requests are unaffected)"),
        (503, "overloaded or not ready; see Retry-After"),
        (504, "request over its deadline"),
    )
}
# The route label of a request refused before it reached the pipeline, by path.
ROUTES = {"/v1/correct": "correct", "/v1/generate": "generate"}
# Reasons of errors raised by the web framework itself, by status.
FRAMEWORK_REASONS = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}


def _correction_model(correction: Correction) -> dict[str, Any]:
    return {"text": correction.text, "edits": [e.__dict__ for e in correction.edits]}


def create_app(pipeline: Pipeline) -> FastAPI:
    """The FastAPI application serving ``pipeline``."""
    settings, stats = pipeline.settings, pipeline.stats
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
    generate_body = schemas.generate_body(pipeline.max_new_tokens)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        details = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors())
        pipeline.refused("http", ROUTES.get(request.url.path, "other"), InvalidRequestError.reason)
        return error_response(422, InvalidRequestError.reason, details or "invalid request")

    @app.exception_handler(HTTPException)
    async def framework_error(request: Request, error: HTTPException) -> Response:
        if isinstance(error.__cause__, UnicodeDecodeError):
            cause = error.__cause__
            return error_response(422, "invalid", f"the request body is not UTF-8 (byte {cause.start}: {cause.reason})")
        reason = FRAMEWORK_REASONS.get(error.status_code, "http_error")
        return error_response(error.status_code, reason, str(error.detail), headers=error.headers)

    @app.exception_handler(RequestError)
    async def request_error(request: Request, error: RequestError) -> Response:
        return error_response(error.status, error.reason, error.message, error.retry_after)

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
        result = await pipeline.correct(request, api="http")
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
    async def generate(body: generate_body) -> dict[str, Any]:  # type: ignore[valid-type]
        """Rewrites of a text: beam-search n-best or seeded sampling."""
        result = await pipeline.generate(GenerateRequest(**body.model_dump()), api="http")
        return {
            "sequences": [{"text": t, "score": s} for t, s in result.sequences],
            "model": {"name": result.model_name, "version": result.model_version},
            "timings_ms": result.timings.as_ms(),
        }

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> Response:
        """Readiness: the model is loaded and warmed up (503 before, and while shutting down)."""
        health = pipeline.health()
        return TextJSONResponse(health, status_code=200 if health["ready"] else 503)

    @app.get("/metrics")
    async def prometheus(request: Request) -> Response:
        payload, content_type = pipeline.metrics.render_for(request.headers.get("accept"))
        return Response(payload, media_type=content_type)

    @app.get("/v1/stats")
    async def live_stats() -> dict[str, Any]:
        """Per arm over 1 and 5 minutes: requests by outcome, p50/p95/p99 latency of the successful ones
        (DDSketch), throughput, mean batch size. This replica's numbers."""
        return stats.snapshot()

    app.include_router(experiments_router(pipeline.experiments, settings.admin_key))
    app.include_router(languagetool_router(pipeline))
    mount_dashboard(app)
    return app
