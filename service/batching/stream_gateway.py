"""The gateway's side of the Redis Streams transport: jobs go out on a queue's stream, results come
back on the gateway's own reply stream.

``StreamBatcher`` is a ``Batcher`` whose workers are other processes (``gecserve worker``).
``submit_many`` adds a request's jobs to the queue's stream in one Lua script, all or none, only
while the stream holds fewer than ``max_queue`` jobs (waiting or decoding): the bound holds across
every gateway, and a full queue answers ``QueueFullError`` (503) with a ``Retry-After`` from the
backlog and the decoding time the replies report. Work that the backlog would keep past its
deadline is refused the same way (``WouldMissDeadlineError``), as in the local batcher; work that
finds the stream empty (as this gateway last saw it) never is.

``ReplyRouter`` reads the gateway's reply stream (one blocking ``XREAD`` loop), hands each reply to
the waiting job, and deletes what it read. It keeps the stream's TTL fresh, and deletes the stream
on a clean stop. If Redis fails, every job still waiting fails at once with ``QueueUnavailableError``
(503): jobs may have been lost with the server, and a caller must not wait for them until its deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

import redis.asyncio as aioredis
from redis.exceptions import RedisError
from redis.typing import StreamIdT

from service.batching.admission import ServiceRate
from service.batching.batcher import (
    BatcherHooks,
    BatcherStoppedError,
    QueueFullError,
    QueueUnavailableError,
    WouldMissDeadlineError,
)
from service.batching.forwarding import ForwardingBatcher, error_of
from service.batching.job import Job, Priority
from service.batching.streams import (
    REPLY_TTL_S,
    Reply,
    StreamKeys,
    StreamsRead,
    cancel_task,
    decode_reply,
    encode_job,
    ensure_group,
)

__all__ = ["ReplyRouter", "StreamBatcher"]

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 5.0

# Adds every job of a request, or none: KEYS[1] the stream; ARGV: max_queue, job count, then per job
# its field count and its field/value pairs. Returns {-1, depth} when full, else {depth before}.
ADMIT = """
local depth = redis.call('XLEN', KEYS[1])
local count = tonumber(ARGV[2])
if depth + count > tonumber(ARGV[1]) then return {-1, depth} end
local at = 3
for _ = 1, count do
  local n = tonumber(ARGV[at])
  redis.call('XADD', KEYS[1], '*', unpack(ARGV, at + 1, at + n))
  at = at + n + 1
end
return {depth}
"""


class ReplyRouter:
    """The gateway's reply stream; see the module docstring."""

    def __init__(self, client: aioredis.Redis, key: str, block_ms: int = 1000, ttl_s: float = REPLY_TTL_S) -> None:
        self.client = client
        self.key = key
        self.block_ms = block_ms
        self.ttl_s = ttl_s
        self._waiting: dict[str, asyncio.Future[Reply]] = {}
        self._task: asyncio.Task[None] | None = None
        self._last_id: bytes | str = "0-0"
        self.healthy = True

    def start(self) -> None:
        self._task = asyncio.create_task(self._read_forever(), name="reply-router")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_task(self._task)
        self._fail_all(BatcherStoppedError("the gateway is stopping"))
        with contextlib.suppress(RedisError, OSError):  # the key expires anyway
            await self.client.delete(self.key)

    def expect(self, job_id: str) -> asyncio.Future[Reply]:
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._waiting[job_id] = future
        return future

    def forget(self, job_id: str) -> None:
        self._waiting.pop(job_id, None)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    async def _read_forever(self) -> None:
        backoff = 0.0
        while True:
            try:
                await self.client.expire(self.key, int(self.ttl_s))
                batches = cast(
                    StreamsRead | None,
                    await self.client.xread({self.key: self._last_id}, count=512, block=self.block_ms),
                )
                for _, entries in batches or ():
                    read: list[StreamIdT] = []
                    for entry_id, fields in entries:
                        self._last_id = entry_id
                        read.append(entry_id)
                        reply = decode_reply(fields)
                        future = self._waiting.pop(reply.job_id, None)
                        if future is not None and not future.done():
                            future.set_result(reply)
                    if read:
                        await self.client.xdel(self.key, *read)
                if not self.healthy:
                    log.info("reply stream reachable again", extra={"stream": self.key})
                self.healthy, backoff = True, 0.0
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as error:
                if self.healthy:
                    log.warning("reply stream unreachable", extra={"stream": self.key, "error": repr(error)})
                self.healthy = False
                self._fail_all(QueueUnavailableError(f"the job queue is unreachable: {error}"))
                backoff = min(MAX_BACKOFF_S, max(0.1, 2 * backoff))
                await asyncio.sleep(backoff)

    def _fail_all(self, error: BaseException) -> None:
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(error)


class StreamBatcher(ForwardingBatcher):
    """A queue whose batches are assembled and decoded by workers (``gecserve worker``); see the module docstring.

    ``decoding(job)`` gives the JSON-ready decoding a job's worker must run; ``result_of(reply,
    received_at)`` turns a reply into what ``submit`` returns; ``live_workers()`` counts the workers
    seen recently (the backlog is divided among them).
    """

    def __init__(
        self,
        client: aioredis.Redis,
        keys: StreamKeys,
        name: str,
        router: ReplyRouter,
        max_queue: int,
        admit_within: float,
        decoding: Callable[[Job], dict[str, Any]],
        result_of: Callable[[Reply, float], Any],
        live_workers: Callable[[], int],
        hooks: BatcherHooks | None = None,
    ) -> None:
        super().__init__(name, hooks)
        self.client = client
        self.keys = keys
        self.stream = keys.jobs(name)
        self.router = router
        self.max_queue = max_queue
        self.admit_within = admit_within
        self.decoding = decoding
        self.result_of = result_of
        self.live_workers = live_workers
        # Here: decoding seconds per job, from the replies; each reply records its batch, so a batch of
        # 8 is 8 entries, and every entry of the window counts the same.
        self.rate = ServiceRate(prior_s_per_token=0.01, half_life=math.inf)
        self._admit = client.register_script(ADMIT)
        self._depth = 0
        self._registered = False

    @property
    def depth(self) -> int:
        """Jobs in the stream (waiting or decoding) when this gateway last looked."""
        return self._depth

    def observe_depth(self, depth: int) -> None:
        self._depth = depth
        self._hooks.on_depth(self.name, depth, self._in_flight)

    async def register(self) -> None:
        """Make the stream's consumer group and list the queue for workers that serve every queue
        (idempotent: the gateway repeats it, so a restarted Redis gets both back)."""
        await ensure_group(self.client, self.stream)
        await self.client.sadd(self.keys.queues, self.name)
        self._registered = True

    async def submit_many(self, jobs: Sequence[Job]) -> list[Any]:
        now = time.monotonic()
        self._check_sendable(jobs, now)
        self._check_wait(jobs, now)
        for job in jobs:
            job.enqueued_at = now
        futures = [self.router.expect(job.id) for job in jobs]
        try:
            await self._add(jobs)
            self._in_flight += len(jobs)
            try:
                replies = await asyncio.gather(*futures)
            finally:
                self._in_flight -= len(jobs)
        finally:
            for job in jobs:
                self.router.forget(job.id)
        received = time.monotonic()
        outcomes = [self._outcome(job, reply, received) for job, reply in zip(jobs, replies, strict=True)]
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return outcomes

    def check_admission(self, priority: Priority, deadline: float) -> None:
        """See ``Batcher.check_admission``."""
        if self.admit_within <= 0 or not self.rate.measured or priority == Priority.SHADOW:
            return
        wait = self.rate.seconds_for(self._depth, max(1, self.live_workers()))
        if wait > (deadline - time.monotonic()) * self.admit_within:
            raise self._refuse(
                WouldMissDeadlineError, f"queue {self.name!r} needs about {wait:.2f} s for the work queued now"
            )

    def _check_wait(self, jobs: Sequence[Job], now: float) -> None:
        deadlines = [job.deadline for job in jobs if job.deadline is not None]
        if not deadlines or self.admit_within <= 0 or not self.rate.measured:
            return
        if self._depth == 0:  # an empty stream: nothing to wait for, the workers are free for this work
            return
        if all(job.priority == Priority.SHADOW for job in jobs):
            return
        wait = self.rate.seconds_for(self._depth + len(jobs), max(1, self.live_workers()))
        if wait > (min(deadlines) - now) * self.admit_within:
            raise self._refuse(
                WouldMissDeadlineError, f"queue {self.name!r} needs about {wait:.2f} s for this work, past its deadline"
            )

    async def _add(self, jobs: Sequence[Job]) -> None:
        args: list[Any] = [self.max_queue, len(jobs)]
        for job in jobs:
            fields = encode_job(job, self.router.key, self.decoding(job))
            args.append(2 * len(fields))
            for key, value in fields.items():
                args += [key, value]
        try:
            if not self._registered:
                await self.register()
            outcome = await self._admit(keys=[self.stream], args=args)
        except (RedisError, OSError) as error:
            self._hooks.on_reject(self.name, "unavailable")
            raise QueueUnavailableError(f"the job queue is unreachable: {error}") from error
        if int(outcome[0]) < 0:
            self.observe_depth(int(outcome[1]))
            raise self._refuse(QueueFullError)
        self.observe_depth(int(outcome[0]) + len(jobs))

    def _refuse(self, error: type[QueueFullError], detail: str = "") -> QueueFullError:
        self._hooks.on_reject(self.name, error.reason)
        retry = self.rate.seconds_for(self._depth, max(1, self.live_workers())) if self.rate.measured else 2.0
        return error(self._depth, retry, self.name, detail)

    def _outcome(self, job: Job, reply: Reply, received: float) -> Any:
        if reply.error is None:
            if reply.batch_size:
                self.rate.record(reply.seconds, reply.batch_size)
            self._hooks.on_queue_wait(self.name, max(0.0, received - reply.seconds - job.enqueued_at))
            return self.result_of(reply, received)
        self._hooks.on_reject(self.name, reply.error)
        return error_of(reply.error, reply.message)
