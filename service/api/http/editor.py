"""The editor page, ``GET /editor``: a writer's text checked as they type, and the JavaScript client it uses.

The page (``service/web/static/editor.html``, ``editor.js``, ``editor.css``) checks each changed paragraph through
``static/gecserve.js``, the client other editors can embed too: ``window.gecserve.correct(text, {engine,
spelling})`` answers as ``POST /v1/correct`` does, with UTF-16 offsets. The engine is pluggable: ``server`` (this
service), ``device`` (the model in the browser: ``static/device/``, the files of ``service/api/http/device.py``) and
``auto``. The files are served from the package, as the dashboard's: no CDN, it works offline. Like the dashboard,
the page and its files are open whatever the API keys; the requests it makes present the key the writer types in.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import FileResponse

from service.api.http.dashboard import STATIC

__all__ = ["mount_editor"]


def mount_editor(app: FastAPI) -> None:
    """``GET /editor``; its static files are under ``/static/``, which ``mount_dashboard`` mounts."""

    @app.get("/editor", include_in_schema=False)
    async def editor() -> FileResponse:
        return FileResponse(STATIC / "editor.html", media_type="text/html")
