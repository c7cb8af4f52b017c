"""The front page, ``GET /``: what the service is, where to go (the editor, the dashboard, the API docs, health),
and the default model it serves, with its version and licence.

``PAGES`` is the one list of those places: the page links them, and ``page_urls`` gives them as URLs for the start-up
log's ready line, so that whoever runs ``make serve`` reads where to open it. The page is rendered on each request
from ``service/web/pages/front.html``, since the default model can change at run time (``POST /v1/models``). Like
the editor and the dashboard, it is open whatever the API keys (``access.control.OPEN_PATHS``): it shows nothing but
names.
"""

from __future__ import annotations

import html
from string import Template

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

from service.api.http.dashboard import WEB
from service.pipeline.served import ServedModel
from service.repository.repository import ModelRepository

__all__ = ["PAGES", "mount_front", "page_urls"]

TEMPLATE = Template((WEB / "pages" / "front.html").read_text(encoding="utf-8"))
# (key, title, path, what a newcomer finds there), in the order the page lists them
PAGES = (
    ("editor", "Editor", "/editor", "write, and see suggestions as you type; accept them with a click or a key"),
    ("dashboard", "Dashboard", "/dashboard", "a running A/B experiment: latency, throughput, acceptance per arm"),
    ("api_docs", "API docs", "/docs", "every HTTP route with its schema and examples, to try in the browser"),
    ("health", "Health", "/readyz", "ready once the model is loaded and warmed up (liveness: /healthz)"),
)
# what a browser on this machine opens for a server listening on every interface
_ANY_INTERFACE = {"0.0.0.0", "::", ""}


def page_urls(host: str, port: int) -> dict[str, str]:
    """The front page (``home``) and the pages it links, as URLs for a server on ``host``:``port``."""
    shown = "localhost" if host in _ANY_INTERFACE else f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    return {"home": base + "/", **{key: base + path for key, _, path, _ in PAGES}}


def _licence(text: str) -> str:
    """The licence's first sentence, shown in full below it when there is more."""
    first, _, rest = text.partition(". ")
    if not rest:
        return html.escape(text)
    return f"<strong>{html.escape(first)}.</strong> <details><summary>the terms</summary>{html.escape(rest)}</details>"


def render(models: ModelRepository[ServedModel], base_url: str) -> str:
    """The front page, naming the default model as it is now, its example addressed to ``base_url``."""
    model = models.default
    if model is None:
        served = "<p>The model is loading: <a href='/readyz'>/readyz</a> says when it is ready.</p>"
    else:
        manifest = model.manifest
        licence = str(manifest.extra.get("licence", "")) or "not stated in its manifest"
        served = (
            f"<p>Serving <strong id='model-name'>{html.escape(model.name)}</strong>, version "
            f"<strong id='model-version'>{html.escape(manifest.version)}</strong> "
            f"({html.escape(model.variant)}; every served model: <a href='/v1/models'>/v1/models</a>).</p>"
            f"<div id='model-licence'>Its weights' licence: {_licence(licence)}</div>"
        )
    links = "\n".join(
        f"<li><a id='link-{key}' href='{path}'>{title}</a> <span>{html.escape(what)}</span></li>"
        for key, title, path, what in PAGES
    )
    return TEMPLATE.substitute(links=links, model=served, base_url=html.escape(base_url.rstrip("/")))


def mount_front(app: FastAPI, models: ModelRepository[ServedModel]) -> None:
    """``GET /``, the front page of the models in ``models``."""

    @app.get("/", include_in_schema=False)
    async def front(request: Request) -> HTMLResponse:
        return HTMLResponse(render(models, str(request.base_url)))
