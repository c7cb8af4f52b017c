"""The engine process's side of the local transport: a ZeroMQ ROUTER socket that front-end processes send
requests to, and one ``LocalBatcher`` per queue that batches them together.

``gecserve engine`` (``service.engine_process``) runs an ``EngineCore`` with the running batches its engines
decode (``RemoteBatch``: each job carries its decoding, as a worker's jobs do). Every front end's jobs for a
queue meet in that queue's one batcher, so batches fill across processes, and admission (the queue's bound, the
wait before a deadline) is the batcher's, as in one process. Each ``Submit`` is answered once
(``engine_wire.Answer``); a ``Submit`` with no jobs is a ping. ``stop`` stops reading, lets the queued and
running jobs finish (up to ``drain_s``) and answers them before the socket closes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import msgspec
import zmq
import zmq.asyncio

from service.batching.batcher import BatcherHooks, QueueFullError
from service.batching.engine_wire import ENCODER, SUBMIT_DECODER, Answer, Submit
from service.batching.forwarding import reason_of
from service.batching.job import Job, Priority
from service.batching.local import LocalBatcher
from service.batching.policy import BatchPolicy
from service.batching.running import RunningBatch

__all__ = ["EngineCore"]

log = logging.getLogger(__name__)


class EngineCore:
    """See the module docstring. ``batches(thread)`` makes decoding thread ``thread``'s running batch, for every
    queue; ``threads`` decoding threads a queue."""

    def __init__(
        self,
        endpoint: str,
        policy: BatchPolicy,
        batches: Callable[[int], RunningBatch],
        threads: int,
        hooks: BatcherHooks | None = None,
        drain_s: float = 20.0,
    ) -> None:
        self.endpoint = endpoint
        self.policy = policy
        self.batches = batches
        self.threads = threads
        self.hooks = hooks
        self.drain_s = drain_s
        self.batchers: dict[str, LocalBatcher] = {}
        self._context = zmq.asyncio.Context()
        self._socket = self._context.socket(zmq.ROUTER)
        self._socket.setsockopt(zmq.LINGER, 1000)
        self._serving: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()

    def bind(self) -> None:
        """Listen at ``endpoint`` (a restarted engine takes over its predecessor's)."""
        self._socket.bind(self.endpoint)

    @property
    def busy(self) -> bool:
        """Some queue holds or decodes work."""
        return any(batcher.depth or batcher.in_flight for batcher in self.batchers.values())

    def stop(self) -> None:
        """Stop reading; ``run`` then drains and returns."""
        self._stopping.set()

    async def run(self) -> None:
        """Answer requests until ``stop``, then drain."""
        stopping = asyncio.create_task(self._stopping.wait())
        try:
            while True:
                receiving = asyncio.ensure_future(self._socket.recv_multipart(copy=False))
                done, _ = await asyncio.wait({receiving, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if receiving not in done:
                    receiving.cancel()
                    break
                identity, data = receiving.result()
                try:
                    submit = SUBMIT_DECODER.decode(data.buffer)
                except msgspec.DecodeError as error:  # not a front end's: nobody to answer
                    log.warning("engine: an unreadable message was dropped", extra={"error": str(error)})
                    continue
                self._start(bytes(identity.buffer), submit)
        finally:
            stopping.cancel()
            for batcher in self.batchers.values():
                await batcher.stop(drain=True, timeout=self.drain_s)
            if self._serving:
                await asyncio.wait(self._serving, timeout=1.0)
            self._socket.close()
            self._context.term()

    def _start(self, identity: bytes, submit: Submit) -> None:
        task = asyncio.create_task(self._serve(identity, submit))
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    def _batcher(self, queue: str) -> LocalBatcher:
        batcher = self.batchers.get(queue)
        if batcher is None:
            batcher = LocalBatcher(self.policy, self.batches, self.threads, name=queue, hooks=self.hooks)
            batcher.start()
            self.batchers[queue] = batcher
        return batcher

    async def _serve(self, identity: bytes, submit: Submit) -> None:
        answer = Answer(submit.request, results=[])
        if submit.jobs:
            batcher = self._batcher(submit.queue)
            answer = await self._decode(batcher, submit)
            answer.wait = batcher.estimated_wait(0, Priority.INTERACTIVE, 0)
        try:
            await self._socket.send_multipart([identity, ENCODER.encode(answer)])
        except zmq.ZMQError as error:  # the front end went away: nobody waits for this answer
            log.info("engine: an answer could not be sent", extra={"error": repr(error)})

    @staticmethod
    async def _decode(batcher: LocalBatcher, submit: Submit) -> Answer:
        now = time.monotonic()
        jobs = [
            Job(
                tokens=job.tokens,
                priority=Priority(job.priority),
                deadline=None if job.seconds_left is None else now + job.seconds_left,
                keep_bias=job.keep_bias,
                payload=job.decoding,
                id=job.id,
            )
            for job in submit.jobs
        ]
        request = submit.request
        try:
            return Answer(request, results=await batcher.submit_many(jobs))
        except Exception as error:
            reason = reason_of(error)
            if reason == "failed":
                log.warning("engine: decoding failed", extra={"queue": batcher.name, "error": repr(error)})
                return Answer(request, error=reason, message=f"decoding failed: {type(error).__name__}")
            depth, retry_after = (error.depth, error.retry_after) if isinstance(error, QueueFullError) else (0, 0.0)
            return Answer(request, error=reason, message=str(error), depth=depth, retry_after=retry_after)
