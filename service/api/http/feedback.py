"""The feedback route: ``POST /v1/feedback``, what writers did with suggestions, through the one request entry
(``service/api/entry.py``) into the pipeline, which counts it for the arm, model and edit type that made each edit."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.api import schemas
from service.api.access.control import REFUSALS
from service.api.entry import feedback_request
from service.api.responses import TextJSONResponse, documented_errors
from service.pipeline.pipeline import Pipeline

__all__ = ["feedback_router"]


def feedback_router(pipeline: Pipeline) -> APIRouter:
    router = APIRouter()

    @router.post(
        "/v1/feedback",
        response_model=schemas.FeedbackResponse,
        response_class=TextJSONResponse,
        responses=documented_errors(
            {
                401: REFUSALS[401],
                404: "edit ids the service does not know (never answered, or forgotten): named; nothing is counted",
                422: "invalid JSON or fields",
                429: REFUSALS[429],
                503: "the shared feedback store is unreachable; see Retry-After",
            }
        ),
    )
    async def feedback(body: schemas.FeedbackBody) -> dict[str, Any]:
        """What a writer did with suggestions: the `id`s of edits earlier answers carried, `accepted` or
        `dismissed`. Counted per experiment arm, model and edit type (the acceptance rates of
        `GET /v1/experiments/{name}`); the same id and action twice count once, and a changed mind moves the
        id to the other action. All or nothing: an unknown or expired id gets 404 naming it, and nothing counts."""
        report = await pipeline.feedback(feedback_request(body))
        return {"counted": report.counted, "repeated": report.repeated}

    return router
