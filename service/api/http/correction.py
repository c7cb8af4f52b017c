"""The correction routes: ``POST /v1/correct`` and ``POST /v1/generate``, thin calls into the pipeline through the
one request entry (``service/api/entry.py``). (No ``from __future__ import annotations`` here: FastAPI reads the
generate route's body model, made for the served model, from its annotation.)"""

from typing import Any

from fastapi import APIRouter, Header

from service.api import schemas
from service.api.access.control import REFUSALS
from service.api.entry import correct_request, generate_request, served_by
from service.api.responses import TextJSONResponse, documented_errors
from service.pipeline.pipeline import Pipeline
from service.pipeline.types import Correction, CorrectResult

__all__ = ["correct_answer", "correction_router"]

ERROR_RESPONSES = documented_errors(
    {
        400: "an unknown arm (in options.backend or X-Gecserve-Arm)",
        401: REFUSALS[401],
        413: "text or body over the configured limit",
        422: "invalid JSON or fields",
        429: REFUSALS[429],
        500: "a failure inside the service (other requests are unaffected)",
        503: "overloaded or not ready; see Retry-After",
        504: "request over its deadline",
    }
)
# A request's own deadline, shorter than GECSERVE_REQUEST_TIMEOUT_S (never longer): past it, 504 and
# its queued work dropped. gRPC callers set theirs with the call's deadline.
TIMEOUT_HEADER = Header(None, ge=1, le=3_600_000, description="this request's deadline in ms (at most the server's)")


def _seconds(milliseconds: int | None) -> float | None:
    return None if milliseconds is None else milliseconds / 1000


def _correction_model(correction: Correction) -> dict[str, Any]:
    return {"text": correction.text, "edits": [e.__dict__ for e in correction.edits]}


def correct_answer(result: CorrectResult, single: bool) -> dict[str, Any]:
    """The answer to a correction (``single``: one ``text``), as ``schemas.CorrectResponse`` serialises it: its
    fields in its order, null ones left out. Written directly rather than validated against the model on every
    answer (which cost more than the rest of the route); the route still declares the model for its schema."""
    answer = _correction_model(result.corrections[0]) if single else {}
    if not single:
        answer["results"] = [_correction_model(c) for c in result.corrections]
    answer["model"] = {"name": result.model_name, "version": result.model_version}
    answer["arm"] = result.arm
    answer["backend"] = result.backend
    if result.experiment is not None:
        answer["experiment"] = result.experiment
    answer["timings_ms"] = result.timings.as_ms()
    return answer


def correction_router(pipeline: Pipeline) -> APIRouter:
    """The routes that ``pipeline`` serves corrections and rewrites by."""
    router = APIRouter()
    generate_body = schemas.generate_body(pipeline.max_new_tokens)

    @router.post(
        "/v1/correct",
        response_model=schemas.CorrectResponse,
        response_class=TextJSONResponse,
        responses=ERROR_RESPONSES,
    )
    async def correct(
        body: schemas.CorrectBody,
        x_gecserve_arm: str | None = Header(None, max_length=64, description="serve with this arm (an override)"),
        x_gecserve_timeout_ms: int | None = TIMEOUT_HEADER,
    ) -> TextJSONResponse:
        """Corrections of one paragraph (`text`) or several (`texts`) as edits of the original text."""
        request = correct_request(body, x_gecserve_arm)
        result = await pipeline.correct(request, api="http", timeout=_seconds(x_gecserve_timeout_ms))
        return TextJSONResponse(correct_answer(result, request.single), headers=served_by(result))

    @router.post(
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
        request = generate_request(body)
        result = await pipeline.generate(request, api="http", timeout=_seconds(x_gecserve_timeout_ms))
        return {
            "sequences": [{"text": t, "score": s} for t, s in result.sequences],
            "model": {"name": result.model_name, "version": result.model_version},
            "timings_ms": result.timings.as_ms(),
        }

    return router
