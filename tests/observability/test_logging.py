"""JSON logs: one object per line with message, extra fields and exceptions."""

from __future__ import annotations

import io
import json
import logging

from service.observability.log_writer import QueuedLineHandler
from service.observability.logging import configure_logging


def test_json_lines(root_logger: logging.Logger) -> None:
    stream = io.StringIO()
    configure_logging("debug", stream, static={"service": "gecserve"})
    handler = configure_logging("info", stream, static={"service": "gecserve"})  # replaces, never duplicates
    assert [h for h in root_logger.handlers if isinstance(h, QueuedLineHandler)] == [handler]
    log = logging.getLogger("gecserve.test")
    log.debug("hidden")
    log.info("corrected %d sentences", 3, extra={"request_id": "r-1", "arm": "aggressive"})
    try:
        raise ValueError("bad input")
    except ValueError:
        log.exception("failed")
    handler.close()  # the writer thread has written every line queued
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == 2
    first, second = lines
    assert first["msg"] == "corrected 3 sentences"
    assert first["level"] == "info" and first["logger"] == "gecserve.test"
    assert first["request_id"] == "r-1" and first["arm"] == "aggressive" and first["service"] == "gecserve"
    assert first["ts"].endswith("Z")
    assert second["level"] == "error" and "ValueError: bad input" in second["exc"]
