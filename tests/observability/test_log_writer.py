"""Log lines written by a thread of their own: a stalled stream drops lines, counted, and never blocks a caller."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import threading
import time
from pathlib import Path

import pytest

from service.observability import log_writer
from service.observability.log_writer import QueuedLineHandler, dropped_lines
from service.observability.logging import JsonFormatter
from service.observability.metrics import Metrics
from tests.waiting import wait_for


def _logger(handler: logging.Handler, name: str) -> logging.Logger:
    log = logging.getLogger(name)
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(logging.INFO)
    return log


def _stalled_pipe() -> tuple[int, io.TextIOWrapper]:
    """A full pipe nobody reads yet (filled with line breaks): its read end, and its write end as a text stream,
    whose next write blocks."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(write_end, b"\n" * 4096)
    os.set_blocking(write_end, True)
    return read_end, open(write_end, "w", encoding="utf-8")


def _read_all(read_end: int, into: list[bytes]) -> threading.Thread:
    def drain() -> None:
        while chunk := os.read(read_end, 65536):
            into.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    return reader


def test_a_stalled_stream_drops_lines_counted_and_never_blocks_the_caller() -> None:
    read_end, stream = _stalled_pipe()
    handler = QueuedLineHandler(stream, queue_lines=100)
    handler.setFormatter(JsonFormatter())
    log = _logger(handler, "gecserve.test.stalled")
    before = dropped_lines()
    logged = 5_000
    started = time.monotonic()
    for i in range(logged):
        log.info("line", extra={"i": i})
    assert time.monotonic() - started < 5, "logging waited for the stalled stream"
    dropped = dropped_lines() - before
    assert 0 < dropped < logged
    chunks: list[bytes] = []
    reader = _read_all(read_end, chunks)  # the stream takes lines again
    wait_for(lambda: not handler.lines.qsize(), every=0.01, what="the stalled lines written")
    log.info("after")  # preceded by the line saying how many were dropped since the last one
    handler.close()
    stream.close()
    reader.join(5)
    lines = [json.loads(line) for line in b"".join(chunks).decode().splitlines() if line]
    numbered = [line["i"] for line in lines if line["msg"] == "line"]
    assert numbered == sorted(numbered) and len(numbered) + dropped == logged  # in order, each written or counted
    notes = [line for line in lines if "dropped" in line]
    assert all(note["level"] == "warning" for note in notes) and sum(note["dropped"] for note in notes) == dropped
    assert lines[-2] == notes[-1] and lines[-1]["msg"] == "after"
    assert f"gecserve_log_lines_dropped_total {float(dropped_lines())}" in Metrics().render().decode()


def test_closing_waits_for_a_stalled_stream_no_longer_than_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_writer, "CLOSE_S", 0.3)
    read_end, stream = _stalled_pipe()
    handler = QueuedLineHandler(stream, queue_lines=10)
    handler.setFormatter(JsonFormatter())
    log = _logger(handler, "gecserve.test.closing")
    for i in range(2_000):
        log.info("line", extra={"i": i})
    started = time.monotonic()
    handler.close()
    assert time.monotonic() - started < 1.0
    os.close(read_end)  # the writer thread's blocked write fails, and it ends
    with contextlib.suppress(BrokenPipeError):
        stream.close()


def test_every_line_queued_is_written_when_the_handler_closes_and_later_ones_at_once() -> None:
    stream = io.StringIO()
    handler = QueuedLineHandler(stream)
    handler.setFormatter(JsonFormatter())
    log = _logger(handler, "gecserve.test.closed")
    for i in range(1_000):
        log.info("line", extra={"i": i})
    handler.close()
    log.info("line", extra={"i": 1_000})  # a closed handler writes the line itself (logging.config closes them)
    assert [json.loads(line)["i"] for line in stream.getvalue().splitlines()] == list(range(1_001))


def test_a_forked_child_writes_its_own_lines(tmp_path: Path) -> None:
    with (tmp_path / "log").open("w") as stream:
        handler = QueuedLineHandler(stream)
        handler.setFormatter(JsonFormatter())
        log = _logger(handler, "gecserve.test.forked")
        pid = os.fork()
        if pid == 0:  # the child: no writer thread here
            log.info("child")
            os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        log.info("parent after")
        handler.close()
    assert [json.loads(line)["msg"] for line in (tmp_path / "log").read_text().splitlines()] == [
        "child",
        "parent after",
    ]
