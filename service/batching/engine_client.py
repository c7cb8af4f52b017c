"""A front-end process's side of the local transport: ``Batcher``s whose batches an engine process assembles and
decodes (``engine_core.py``), reached over one ZeroMQ DEALER socket.

``EngineConnection`` owns the socket: it numbers each request, reads the answers in one task and hands each to its
waiting request, and watches the connection (ZeroMQ's socket monitor). While the engine is not connected (not
started yet, or dead and being restarted) a request fails at once with ``QueueUnavailableError`` (503) rather than
wait in a buffer, and when the engine goes away every request waiting on it fails so; the socket reconnects by
itself when the engine is back. ``EngineBatcher`` is one queue over it: ``submit_many`` sends a request's jobs in
one message, admitted all or none by the engine's batcher, and raises what the engine's batcher raised there.
Its ``check_admission`` reads the wait the engine last reported for the queue, for the requests that can be
refused before they are preprocessed; a report older than ``FRESH_S`` is not read.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import zmq
import zmq.asyncio
from zmq.utils.monitor import parse_monitor_message

from service.batching.batcher import (
    BatcherHooks,
    BatcherStoppedError,
    QueueUnavailableError,
    WouldMissDeadlineError,
)
from service.batching.engine_wire import ANSWER_DECODER, ENCODER, Answer, Submit, WireJob
from service.batching.forwarding import ForwardingBatcher, error_of
from service.batching.job import Job, Priority

__all__ = ["EngineBatcher", "EngineConnection"]

log = logging.getLogger(__name__)

FRESH_S = 1.0  # how long the engine's last reported wait is read by admission
PING_S = 5.0  # how long ``ping`` waits for the engine


class EngineConnection:
    """The front end's socket to one engine process at ``endpoint``; see the module docstring."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self._context = zmq.asyncio.Context()
        self._socket = self._context.socket(zmq.DEALER)
        self._socket.setsockopt(zmq.IMMEDIATE, 1)  # no queueing for an engine that is not connected
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.RECONNECT_IVL, 50)
        self._monitor = self._socket.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED)
        self._numbers = itertools.count()
        self._waiting: dict[int, asyncio.Future[Answer]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.connected = False

    async def start(self) -> None:
        """Connect, and start reading answers and connection events."""
        self._socket.connect(self.endpoint)
        self._tasks = [
            asyncio.create_task(self._read_forever(), name="engine-answers"),
            asyncio.create_task(self._watch_forever(), name="engine-connection"),
        ]

    async def ping(self, timeout: float = PING_S) -> None:
        """Wait until the engine answers (``QueueUnavailableError`` after ``timeout`` seconds)."""
        until = time.monotonic() + timeout
        while True:
            try:
                await self.request("", [])
                return
            except QueueUnavailableError:
                if time.monotonic() > until:
                    raise
                await asyncio.sleep(0.05)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._fail_all(BatcherStoppedError("the front end is stopping"))
        self._socket.disable_monitor()
        self._monitor.close(linger=0)
        self._socket.close(linger=0)
        self._context.term()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    async def request(self, queue: str, jobs: list[WireJob]) -> Answer:
        """Send ``jobs`` for ``queue`` and wait for the engine's answer."""
        if not self.connected:
            raise QueueUnavailableError(f"the engine process at {self.endpoint} is not connected")
        number = next(self._numbers)
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        try:
            await self._socket.send(ENCODER.encode(Submit(number, queue, jobs)), flags=zmq.NOBLOCK, copy=False)
            return await future
        except zmq.Again as error:
            raise QueueUnavailableError(f"the engine process at {self.endpoint} is not connected") from error
        finally:
            self._waiting.pop(number, None)

    async def _read_forever(self) -> None:
        while True:
            data = await self._socket.recv(copy=False)
            answer = ANSWER_DECODER.decode(data.buffer)
            future = self._waiting.pop(answer.request, None)
            if future is not None and not future.done():
                future.set_result(answer)

    async def _watch_forever(self) -> None:
        while True:
            event = parse_monitor_message(await self._monitor.recv_multipart())["event"]
            if event == zmq.EVENT_CONNECTED:
                if not self.connected:
                    log.info("engine connected", extra={"endpoint": self.endpoint})
                self.connected = True
            elif event == zmq.EVENT_DISCONNECTED:
                log.warning("engine disconnected", extra={"endpoint": self.endpoint, "lost": len(self._waiting)})
                self.connected = False
                self._fail_all(QueueUnavailableError("the engine process went away; its jobs were not decoded"))

    def _fail_all(self, error: BaseException) -> None:
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(error)


class EngineBatcher(ForwardingBatcher):
    """One queue decoded by the engine process (see the module docstring).

    ``decoding(job)`` gives the JSON-ready decoding the engine runs for a job; ``result_of(result, received_at)``
    turns one of the answer's results into what ``submit`` returns."""

    def __init__(
        self,
        connection: EngineConnection,
        name: str,
        admit_within: float,
        decoding: Callable[[Job], dict[str, Any]],
        result_of: Callable[[dict[str, Any], float], Any],
        hooks: BatcherHooks | None = None,
    ) -> None:
        super().__init__(name, hooks)
        self.connection = connection
        self.admit_within = admit_within
        self.decoding = decoding
        self.result_of = result_of
        self._wait = 0.0
        self._wait_at = -FRESH_S

    @property
    def depth(self) -> int:
        """Nothing waits here: jobs queue in the engine process."""
        return 0

    async def submit_many(self, jobs: Sequence[Job]) -> list[Any]:
        now = time.monotonic()
        self._check_sendable(jobs, now)
        wire = [
            WireJob(
                job.id,
                job.tokens,
                int(job.priority),
                None if job.deadline is None else job.deadline - now,
                job.keep_bias,
                self.decoding(job),
            )
            for job in jobs
        ]
        self._in_flight += len(jobs)
        try:
            answer = await self.connection.request(self.name, wire)
        except QueueUnavailableError:
            self._hooks.on_reject(self.name, "unavailable")
            raise
        finally:
            self._in_flight -= len(jobs)
        received = time.monotonic()
        self._wait, self._wait_at = answer.wait, received
        if answer.results is None:
            raise error_of(answer.error or "failed", answer.message, self.name, answer.depth, answer.retry_after)
        return [self.result_of(result, received) for result in answer.results]

    def check_admission(self, priority: Priority, deadline: float) -> None:
        """See ``Batcher.check_admission``: the wait the engine last reported, while fresh."""
        now = time.monotonic()
        if self.admit_within <= 0 or priority == Priority.SHADOW or now - self._wait_at > FRESH_S:
            return
        if self._wait > (deadline - now) * self.admit_within:
            self._hooks.on_reject(self.name, WouldMissDeadlineError.reason)
            raise WouldMissDeadlineError(
                0, self._wait, self.name, f"queue {self.name!r} needs about {self._wait:.2f} s for the work queued now"
            )
