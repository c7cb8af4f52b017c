"""The A/B dashboard page, ``GET /dashboard``, and its static files (served from the package: it works offline).

The page (``service/web/static/dashboard.html`` and ``dashboard.js``) reads ``/v1/experiments`` and
``/v1/experiments/{name}`` every two seconds: per-arm p50/p95/p99 with intervals and over time,
throughput, the speedups against the control, shadow agreement, the sample-ratio check and recent
disagreements. Its form changes weights through ``PUT /v1/experiments/{name}/weights`` with the
admin key the reader types in (with API keys configured, its reads send that key too: reading
needs a key then). Charts are drawn by uPlot (MIT, ``static/vendor/``).

The browser's files live apart from the Python, in ``service/web/``: ``static/``, served as they are under
``/static/``, and ``pages/``, the templates the service renders (the front page).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["mount_dashboard"]

WEB = Path(__file__).parents[2] / "web"
STATIC = WEB / "static"


def mount_dashboard(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/dashboard", include_in_schema=False)
    async def dashboard() -> FileResponse:
        return FileResponse(STATIC / "dashboard.html", media_type="text/html")
