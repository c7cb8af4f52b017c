"""JSON logs: one object per line with message, extra fields and exceptions."""

from __future__ import annotations

import io
import json
import logging

from service.observability.logging import configure_logging


def test_json_lines() -> None:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        stream = io.StringIO()
        configure_logging("debug", stream, static={"service": "gecserve"})
        configure_logging("info", stream, static={"service": "gecserve"})  # replaces, never duplicates
        log = logging.getLogger("gecserve.test")
        log.debug("hidden")
        log.info("corrected %d sentences", 3, extra={"request_id": "r-1", "arm": "aggressive"})
        try:
            raise ValueError("bad input")
        except ValueError:
            log.exception("failed")
        lines = [json.loads(line) for line in stream.getvalue().splitlines()]
        assert len(lines) == 2
        first, second = lines
        assert first["msg"] == "corrected 3 sentences"
        assert first["level"] == "info" and first["logger"] == "gecserve.test"
        assert first["request_id"] == "r-1" and first["arm"] == "aggressive" and first["service"] == "gecserve"
        assert first["ts"].endswith("Z")
        assert second["level"] == "error" and "ValueError: bad input" in second["exc"]
    finally:
        for handler in list(root.handlers):
            if handler not in saved[0]:
                root.removeHandler(handler)
        root.setLevel(saved[1])
