"""The A/B dashboard page, ``GET /dashboard``, and its static files (served from the package: it works offline).

The page reads ``/v1/experiments`` and ``/v1/experiments/{name}`` every two seconds and changes
weights through ``PUT /v1/experiments/{name}/weights`` with the admin key the reader types in.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["STATIC", "mount_dashboard"]

STATIC = Path(__file__).parent / "static"


def mount_dashboard(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/dashboard", include_in_schema=False)
    async def dashboard() -> FileResponse:
        return FileResponse(STATIC / "dashboard.html", media_type="text/html")
