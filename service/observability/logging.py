"""Structured logs: one JSON object per line on stderr (or any stream), set up by one call.

Lines are written by a thread of their own (``log_writer``): a stalled stream drops lines, counted, rather
than stalling the event loop.

Every line logged while a request is served carries its ``request_id`` (``request_id.py``). Every request
that reaches the pipeline, or is refused on its way there, is logged once at INFO by ``log_request``
(logger ``gecserve.requests``): what served it, how it ended and how long it took, never its text.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

from service.observability.log_writer import QueuedLineHandler
from service.observability.request_id import RequestIdFilter

__all__ = ["JsonFormatter", "configure_logging", "log_request"]

REQUEST_LOG = logging.getLogger("gecserve.requests")

# Attributes every LogRecord has; anything else on a record came from ``extra=`` and is logged.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """Formats a record as JSON: ts, level, logger, msg, the ``static`` fields, ``extra=`` fields, exc."""

    def __init__(self, static: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.static = dict(static or {})

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        entry: dict[str, Any] = {
            "ts": ts,
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            **self.static,
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def configure_logging(
    level: int | str = "INFO", stream: TextIO | None = None, static: Mapping[str, Any] | None = None
) -> QueuedLineHandler:
    """Send the root logger's records as JSON lines to ``stream`` (stderr by default).

    Calling it again replaces (and closes) the handler it installed before; other handlers are left alone.
    ``static`` fields (service name, role, version) are added to every line, and the request id to
    every line logged while a request is served.
    """
    root = logging.getLogger()
    for installed in list(root.handlers):
        if isinstance(installed, QueuedLineHandler):
            root.removeHandler(installed)
            installed.close()
    handler = QueuedLineHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter(static))
    handler.addFilter(RequestIdFilter())
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    return handler


def log_request(
    api: str,
    route: str,
    outcome: str,
    status: int,
    arm: str,
    experiment: str,
    seconds: float,
    sentences: int,
) -> None:
    """The one line of a request: ``api`` (http, grpc), ``route`` (its metrics label), ``outcome`` (ok or the
    error reason, as in the metrics), ``status`` (HTTP; a gRPC call's code is the one this status maps to), the
    ``arm`` and ``experiment`` that served it, its latency and the sentences answered (0 unless it succeeded)."""
    REQUEST_LOG.info(
        "request",
        extra={
            "api": api,
            "route": route,
            "outcome": outcome,
            "status": status,
            "arm": arm,
            "experiment": experiment,
            "latency_ms": round(seconds * 1000, 3),
            "sentences": sentences,
        },
    )
