"""Log lines written by a thread of their own, so that a slow or stalled log stream never stalls the service.

A line is formatted where it is logged (the request id is read there) and put on a queue of ``QUEUE_LINES``
lines, which a writer thread writes to the stream. Where the stream does not keep up (a log collector stalled:
Docker's default log mode blocks the writer of a container's stderr), the queue fills, and each line that
finds it full is dropped and counted (``dropped_lines``, the metric ``gecserve_log_lines_dropped_total``); the
first line queued afterwards is preceded by one saying how many were dropped. Closing the handler (``logging``
does at exit) writes what is queued, waiting at most ``CLOSE_S`` seconds for the stream; a closed handler, and
one in a forked child (a preprocessing process), which has no writer thread, write each line as it is logged.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from typing import TextIO

__all__ = ["CLOSE_S", "QUEUE_LINES", "QueuedLineHandler", "dropped_lines"]

QUEUE_LINES = 10_000  # lines waiting for the stream before new ones are dropped (a few MB)
CLOSE_S = 2.0  # the longest closing waits for the stream to take what is queued

_dropped = 0  # lines dropped in this process, by every handler
_dropped_lock = threading.Lock()


def dropped_lines() -> int:
    """The log lines this process dropped because the stream did not keep up."""
    return _dropped


def _count_drop() -> None:
    global _dropped
    with _dropped_lock:
        _dropped += 1


def _write(lines: queue.SimpleQueue[str | None], stream: TextIO) -> None:
    """The writer thread: the queued lines to ``stream`` in order, until ``None``; each turn writes every line
    queued meanwhile at once, so a thread that rarely gets the interpreter lock still keeps up."""
    while True:
        batch = [lines.get()]
        while batch[-1] is not None:
            try:
                batch.append(lines.get_nowait())
            except queue.Empty:
                break
        done = batch[-1] is None
        _write_now(stream, "".join(f"{line}\n" for line in batch if line is not None))
        if done:
            return


class QueuedLineHandler(logging.Handler):
    """Formats each record in the logging thread and queues the line for the writer thread (module docstring)."""

    def __init__(self, stream: TextIO, queue_lines: int = QUEUE_LINES) -> None:
        super().__init__()
        self.stream = stream
        self.lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()  # in C: no Python lock taken per line
        self.queue_lines = queue_lines
        self.unreported = 0  # lines dropped since the last one queued
        self._pid = os.getpid()
        self._stopped = False  # closed: lines are written where they are logged
        self._writer = threading.Thread(target=_write, args=(self.lines, stream), name="log-writer", daemon=True)
        self._writer.start()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        if self._stopped or os.getpid() != self._pid:  # closed, or a forked child (the writer stayed in the parent)
            _write_now(self.stream, f"{line}\n")
            return
        if self.unreported:
            if not self._offer(self._dropped_line()):
                self._drop()
                return
            self.unreported = 0
        if not self._offer(line):
            self._drop()

    def close(self) -> None:
        """Write what is queued, waiting at most ``CLOSE_S`` for the stream, and stop the writer thread; lines
        logged afterwards are written where they are logged (``logging.config`` closes the handlers it finds
        and leaves them on their loggers)."""
        with self.lock:
            if not self._stopped and os.getpid() == self._pid:
                self._stopped = True
                self.lines.put(None)
                self._writer.join(CLOSE_S)
        super().close()

    def _offer(self, line: str) -> bool:
        if self.lines.qsize() >= self.queue_lines:
            return False
        self.lines.put(line)
        return True

    def _drop(self) -> None:
        self.unreported += 1
        _count_drop()

    def _dropped_line(self) -> str:
        note = logging.makeLogRecord(
            {
                "name": __name__,
                "levelno": logging.WARNING,
                "levelname": "WARNING",
                "msg": "log lines dropped: the log stream did not keep up",
                "dropped": self.unreported,
            }
        )
        return self.format(note)


def _write_now(stream: TextIO, text: str) -> None:
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):  # a closed or broken stream: nobody can read the line
        pass
