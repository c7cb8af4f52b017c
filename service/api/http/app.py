"""The HTTP API (FastAPI): the application, its middlewares and its routes' modules (``correction.py``,
``operations.py``, ``feedback.py``, ``experiments.py``, ``models.py``, ``words.py``, the front page, the dashboard,
the editor page, and LanguageTool's, ``service/api/languagetool/``), with its errors (``errors.py``).

Every error, on every route, has one shape: ``{"error": {"reason", "message", "request_id"}}``
(``service/api/responses.py``). Around the routes, outermost first, plain ASGI middlewares: the request id
(``request_ids.py``); ``Connection: close`` on every answer while the service drains (after SIGTERM a
client's pooled connection is closed after its answer, so its next request opens a connection to a
replica that is not leaving, and never races the server closing the connection idle); CORS when
``GECSERVE_CORS_ORIGINS`` names origins (Starlette's); API keys and rate limits (``access/control.py``); and the
request-body limit (``access/limits.py``), which counts bytes as they arrive, so a chunked upload is cut off at
the limit instead of being read in full first.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.access.control import AccessControl, AccessMiddleware, declare_refusals
from service.api.access.limits import BodyLimit
from service.api.entry import ARM_HEADER, EXPERIMENT_HEADER
from service.api.http.correction import correction_router
from service.api.http.dashboard import mount_dashboard
from service.api.http.device import device_router
from service.api.http.editor import mount_editor
from service.api.http.error_answers import ROUTES, install_error_handlers
from service.api.http.experiments import experiments_router
from service.api.http.feedback import feedback_router
from service.api.http.front import mount_front
from service.api.http.models import models_router
from service.api.http.operations import operations_router
from service.api.http.request_ids import RequestIds
from service.api.http.words import words_router
from service.api.languagetool.check import languagetool_router
from service.api.responses import error_response
from service.error_reasons import ErrorReason
from service.observability.request_id import REQUEST_ID_HEADER
from service.pipeline.pipeline import Pipeline

__all__ = ["create_app"]


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


def create_app(pipeline: Pipeline, access: AccessControl | None = None) -> FastAPI:
    """The FastAPI application serving ``pipeline``, admitting requests by ``access`` (by default the
    settings' keys and limits; ``serve`` passes the one it shares with gRPC)."""
    settings = pipeline.settings
    access = access or AccessControl.from_settings(settings, pipeline.metrics)
    app = FastAPI(
        title="gecserve",
        version="1",
        description="Grammatical error correction: corrections as character-offset edits.",
        # FastAPI's OpenTelemetry instrumentation, off: the service's metrics are Prometheus's (``/metrics``), and
        # checking for a configured OpenTelemetry provider cost every request a lookup in the environment
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.add_middleware(
        BodyLimit,
        limit=settings.max_text_chars * 4 * settings.max_texts + 64 * 1024,
        too_large=lambda length, limit: error_response(
            ErrorReason.TOO_LARGE, f"the request body of {length} bytes is over the limit of {limit} bytes"
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
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "X-Api-Key", "Content-Type", REQUEST_ID_HEADER, ARM_HEADER],
            expose_headers=[REQUEST_ID_HEADER, ARM_HEADER, EXPERIMENT_HEADER, "Retry-After"],
            max_age=600,
        )
    app.add_middleware(CloseWhileDraining, pipeline=pipeline)
    app.add_middleware(RequestIds)
    install_error_handlers(app, pipeline)
    app.include_router(correction_router(pipeline))
    app.include_router(operations_router(pipeline))
    app.include_router(feedback_router(pipeline))
    experiments = pipeline.experiments
    app.include_router(experiments_router(experiments.admin, experiments.reports, settings.admin_key))
    fixed_models = settings.engine_dir is not None  # a front end of the process layout
    app.include_router(models_router(pipeline.models, experiments.admin, settings.admin_key, fixed_models))
    app.include_router(languagetool_router(pipeline, access))
    app.include_router(words_router(pipeline.words, access))
    app.include_router(device_router(settings.model_path, settings.max_text_chars))
    mount_front(app, pipeline.models)
    mount_dashboard(app)
    mount_editor(app)
    declare_refusals(app)
    return app
