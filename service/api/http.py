"""The HTTP API (FastAPI): translates JSON to the pipeline's types and its errors to status codes."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from service.api import schemas
from service.api.limits import BodyLimit
from service.pipeline.errors import RequestDeadlineError, RequestError
from service.pipeline.pipeline import Pipeline
from service.pipeline.types import Correction, CorrectRequest, GenerateRequest

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": schemas.ErrorResponse, "description": text}
    for code, text in (
        (413, "text over the configured limit"),
        (422, "invalid JSON or fields"),
        (503, "overloaded or not ready; see Retry-After"),
        (504, "request over its deadline"),
    )
}


def _error(status: int, reason: str, message: str, retry_after: str | None = None) -> JSONResponse:
    headers = {"Retry-After": retry_after} if retry_after else None
    return JSONResponse({"error": {"reason": reason, "message": message}}, status_code=status, headers=headers)


def _correction_model(correction: Correction) -> dict[str, Any]:
    return {"text": correction.text, "edits": [e.__dict__ for e in correction.edits]}


def create_app(pipeline: Pipeline) -> FastAPI:
    """The FastAPI application serving ``pipeline``."""
    settings, metrics, stats = pipeline.settings, pipeline.metrics, pipeline.stats
    app = FastAPI(
        title="gecserve",
        version="1",
        description="Grammatical error correction: corrections as character-offset edits.",
    )
    body_limit = settings.max_text_chars * 4 * settings.max_texts + 64 * 1024

    app.add_middleware(
        BodyLimit,
        limit=body_limit,
        too_large=lambda length, limit: _error(
            413, "too_large", f"request body of {length} bytes is over the limit of {limit}"
        ),
    )

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        details = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors())
        metrics.reject("invalid")
        return _error(422, "invalid", details or "invalid request")

    async def serve(route: str, call: Any, sentences: Any) -> Any:
        started = time.monotonic()
        backend, status = "none", 200
        try:
            with metrics.in_progress(route):
                result = await asyncio.wait_for(call(), timeout=settings.request_timeout_s)
            backend = getattr(result, "backend", "generate")
            stats.record_request(backend, time.monotonic() - started, sentences=sentences(result))
            return result
        except TimeoutError as error:
            status = 504
            metrics.reject("deadline")
            raise RequestDeadlineError(f"not answered within {settings.request_timeout_s:g} s") from error
        except RequestError as error:
            status = error.status
            metrics.reject(error.reason)
            raise
        finally:
            metrics.observe_request(route, backend, status, time.monotonic() - started)

    @app.exception_handler(RequestError)
    async def request_error(request: Request, error: RequestError) -> JSONResponse:
        return _error(error.status, error.reason, error.message, error.retry_after)

    @app.post(
        "/v1/correct",
        response_model=schemas.CorrectResponse,
        response_model_exclude_none=True,
        responses=ERROR_RESPONSES,
    )
    async def correct(body: schemas.CorrectBody) -> dict[str, Any]:
        """Corrections of one paragraph (`text`) or several (`texts`) as edits of the original text."""
        request = CorrectRequest(
            texts=[body.text] if body.text is not None else list(body.texts or []),
            single=body.text is not None,
            offset_unit=body.offset_unit,
            backend=body.options.backend,
            alternatives=body.options.alternatives,
            user_id=body.client.user_id,
            session_id=body.client.session_id,
        )
        result = await serve(
            "/v1/correct",
            lambda: pipeline.correct(request),
            lambda r: sum(len({e.sentence for e in c.edits}) or 1 for c in r.corrections),
        )
        response: dict[str, Any] = {
            "model": {"name": result.model_name, "version": result.model_version},
            "backend": result.backend,
            "timings_ms": result.timings.as_ms(),
        }
        if request.single:
            response.update(_correction_model(result.corrections[0]))
        else:
            response["results"] = [_correction_model(c) for c in result.corrections]
        return response

    @app.post("/v1/generate", response_model=schemas.GenerateResponse, responses=ERROR_RESPONSES)
    async def generate(body: schemas.GenerateBody) -> dict[str, Any]:
        """Rewrites of a text: beam-search n-best or seeded sampling."""
        request = GenerateRequest(**body.model_dump())
        result = await serve("/v1/generate", lambda: pipeline.generate(request), lambda r: 1)
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
    async def readyz() -> JSONResponse:
        """Readiness: the model is loaded and warmed up."""
        health = pipeline.health()
        return JSONResponse(health, status_code=200 if health["ready"] else 503)

    @app.get("/metrics")
    async def prometheus(request: Request) -> Response:
        payload, content_type = metrics.render_for(request.headers.get("accept"))
        return Response(payload, media_type=content_type)

    @app.get("/v1/stats")
    async def live_stats() -> dict[str, Any]:
        """p50/p95/p99 latency per backend over 1 and 5 minutes, throughput, mean batch size."""
        return stats.snapshot()

    return app
