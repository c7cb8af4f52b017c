"""The routes operators and their tools call: liveness, readiness, Prometheus metrics and the live numbers."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response

from service.api.responses import TextJSONResponse
from service.pipeline.pipeline import Pipeline

__all__ = ["operations_router"]

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


def operations_router(pipeline: Pipeline) -> APIRouter:
    """``/healthz``, ``/readyz``, ``/metrics`` and ``/v1/stats`` of ``pipeline``."""
    router = APIRouter()

    @router.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @router.get("/readyz", responses=READINESS_RESPONSES)
    async def readyz() -> Response:
        """Readiness: the model is loaded and warmed up (503 before, and while shutting down)."""
        health = pipeline.health()
        return TextJSONResponse(health, status_code=200 if health["ready"] else 503)

    @router.get("/metrics", response_class=PlainTextResponse, responses=METRICS_RESPONSES)
    async def prometheus(request: Request) -> Response:
        payload, content_type = pipeline.metrics.render_for(request.headers.get("accept"))
        return Response(payload, media_type=content_type)

    @router.get("/v1/stats")
    async def live_stats() -> dict[str, Any]:
        """Per arm over 1 and 5 minutes: requests by outcome, p50/p95/p99 latency of the successful ones
        (DDSketch), throughput, mean batch size. This replica's numbers."""
        return pipeline.stats.snapshot()

    return router
