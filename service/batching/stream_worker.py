"""A worker's side of the Redis Streams transport: read jobs, batch them, decode, reply, acknowledge.

``StreamConsumer`` reads its queues' streams through the consumer group ``workers`` and feeds each
queue's jobs to a ``LocalBatcher``, so batches are assembled by the same policy as in one process
(max batch, token budget, max wait, deadlines, priority). It reads only while a queue holds less
than two batches locally, so one worker never hoards what an idle one could decode. For each job,
the reply (its result, or why there is none) is written to the gateway's reply stream and the job
is acknowledged and deleted in the same transaction: a job is never acknowledged unanswered.

No lost jobs: a job stays pending in the group until it is acknowledged. A worker keeps its own
pending jobs fresh (``XCLAIM ... JUSTID`` resets their idle time) while it holds them, however long
a batch runs; a worker that dies stops doing so, and after ``claim_idle_s`` another worker claims
them (``XPENDING`` with ``IDLE``, then ``XCLAIM``) and decodes them. A job delivered
``max_deliveries`` times without an answer (it killed every worker that took it) goes to the queue's
dead-letter stream and its caller gets an error. Jobs past their deadline are answered
``deadline`` without being decoded. ``stop`` ends reading, finishes every job held (reply and
acknowledge), and leaves the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError
from redis.typing import KeyT, StreamIdT, StreamRangeResponse

from service.batching.batcher import BatcherHooks, BatcherStoppedError, DeadlineExceededError
from service.batching.local import LocalBatcher
from service.batching.policy import BatchPolicy
from service.batching.running import RunningBatch
from service.batching.streams import (
    GROUP,
    REPLY_TTL_S,
    Fields,
    JobEntry,
    ReplyFields,
    StreamKeys,
    StreamsRead,
    cancel_task,
    decode_job,
    encode_error,
    encode_result,
    ensure_group,
)

__all__ = ["ConsumerEvents", "StreamConsumer"]

log = logging.getLogger(__name__)

REPLY_MAXLEN = 100_000
DEAD_MAXLEN = 10_000


@dataclass
class ConsumerEvents:
    """Callbacks for the worker's metrics: ``claimed(queue, n)``, ``dead_lettered(queue, n)``,
    ``answered(queue, outcome)`` with outcome ``decoded``, ``deadline``, ``invalid`` or ``failed``."""

    claimed: Callable[[str, int], None] = lambda queue, count: None
    dead_lettered: Callable[[str, int], None] = lambda queue, count: None
    answered: Callable[[str, str], None] = lambda queue, outcome: None


@dataclass
class _Queue:
    name: str
    stream: str
    batcher: LocalBatcher
    held: set[str] = field(default_factory=set)  # entry ids read and not yet acknowledged


class StreamConsumer:
    """See the module docstring. ``batches()`` makes each queue's running batch, which decodes the jobs (each
    job's ``payload`` is its decoding, as sent) and delivers per job ``{"result", "seconds", "batch_size"}`` or an
    exception (``service.inference.remote``). ``queues``: the queues to serve (None: every queue the gateways
    have registered)."""

    def __init__(
        self,
        client: aioredis.Redis,
        keys: StreamKeys,
        consumer: str,
        batches: Callable[[], RunningBatch],
        policy: BatchPolicy,
        queues: list[str] | None = None,
        hooks: BatcherHooks | None = None,
        events: ConsumerEvents | None = None,
        claim_idle_s: float = 3.0,
        max_deliveries: int = 3,
        heartbeat_s: float = 1.0,
        block_ms: int = 200,
    ) -> None:
        self.client = client
        self.keys = keys
        self.consumer = consumer
        self.batches = batches
        self.policy = policy
        self.fixed_queues = queues
        self.hooks = hooks
        self.events = events or ConsumerEvents()
        self.claim_idle_s = claim_idle_s
        self.max_deliveries = max_deliveries
        self.heartbeat_s = heartbeat_s
        self.block_ms = block_ms
        self.queues: dict[str, _Queue] = {}
        self._serving: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()

    # -- lifecycle --------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve until ``stop`` is called, then finish what is held and leave."""
        tasks = [
            asyncio.create_task(self._every(self.heartbeat_s, self._heartbeat), name="heartbeat"),
            asyncio.create_task(self._every(self.claim_idle_s / 3, self._refresh_held), name="refresh"),
            asyncio.create_task(self._every(self.claim_idle_s / 2, self._claim_idle), name="claim"),
        ]
        try:
            await self._heartbeat()
            await self._read_until_stopped()
        finally:
            for task in tasks:
                await cancel_task(task)
            await self._leave()

    def stop(self) -> None:
        self._stopping.set()

    async def _leave(self) -> None:
        if self._serving:
            await asyncio.gather(*self._serving, return_exceptions=True)
        for queue in self.queues.values():
            await queue.batcher.stop(drain=True)
        with contextlib.suppress(RedisError, OSError):
            await self.client.zrem(self.keys.workers, self.consumer)
            for queue in self.queues.values():
                if not queue.held:
                    await self.client.xgroup_delconsumer(queue.stream, GROUP, self.consumer)

    async def _every(self, seconds: float, action: Callable[[], Any]) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await action()
            except (RedisError, OSError) as error:
                log.warning("worker %s: %s failed: %r", self.consumer, action.__name__, error)

    # -- reading ----------------------------------------------------------------------------

    async def _heartbeat(self) -> None:
        """Say this worker is alive, and pick up queues registered since (with their groups)."""
        now = time.time()
        await self.client.zadd(self.keys.workers, {self.consumer: now})
        await self.client.zremrangebyscore(self.keys.workers, "-inf", now - 3600)
        if self.fixed_queues is not None:
            names = self.fixed_queues
        else:
            names = sorted(_str(name) for name in await self.client.smembers(self.keys.queues))
        for name in names:
            if name not in self.queues:
                await ensure_group(self.client, self.keys.jobs(name))
                self._add_queue(name)

    def _add_queue(self, name: str) -> None:
        make = self.batches
        batcher = LocalBatcher(self.policy, lambda thread: make(), threads=1, name=name, hooks=self.hooks)
        batcher.start()
        self.queues[name] = _Queue(name, self.keys.jobs(name), batcher)

    async def _read_until_stopped(self) -> None:
        backoff = 0.0
        while not self._stopping.is_set():
            room: dict[KeyT, StreamIdT] = {
                q.stream: ">" for q in self.queues.values() if q.batcher.depth < 2 * self.policy.max_batch_size
            }
            if not room:
                await self._pause(self.block_ms / 1000)
                continue
            try:
                batches = cast(
                    StreamsRead | None,
                    await self.client.xreadgroup(
                        GROUP, self.consumer, room, count=self.policy.max_batch_size, block=self.block_ms
                    ),
                )
                backoff = 0.0
            except ResponseError as error:
                if "NOGROUP" not in str(error):
                    raise
                log.warning("worker %s: a consumer group vanished (Redis restarted?); recreating", self.consumer)
                for queue in self.queues.values():
                    await ensure_group(self.client, queue.stream)
                continue
            except (RedisError, OSError) as error:
                backoff = min(5.0, max(0.1, 2 * backoff))
                log.warning("worker %s: reading failed (%r); retrying in %.1f s", self.consumer, error, backoff)
                await self._pause(backoff)
                continue
            for stream, entries in batches or ():
                self._serve_entries(self.queues[self.keys.queue_of(_str(stream))], entries)

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    def _serve_entries(self, queue: _Queue, entries: Sequence[tuple[bytes | str | None, Fields | None]]) -> None:
        for read_id, fields in entries:
            entry_id = _str(read_id)
            if entry_id in queue.held:
                continue  # claimed back while still held here
            queue.held.add(entry_id)
            task = asyncio.create_task(self._serve(queue, entry_id, fields))
            self._serving.add(task)
            task.add_done_callback(self._serving.discard)

    # -- one job ----------------------------------------------------------------------------

    async def _serve(self, queue: _Queue, entry_id: str, fields: Fields | None) -> None:
        try:
            if not fields:  # deleted from the stream meanwhile: nothing to answer
                await self._acknowledge(queue, entry_id, None, None)
                return
            entry: JobEntry = decode_job(fields)
            entry.job.payload = entry.decoding
            job_id = entry.job.id
            try:
                answer = await queue.batcher.submit(entry.job)
                reply, outcome = encode_result(job_id, **answer), "decoded"
            except BatcherStoppedError:
                return  # left pending: another worker claims it
            except DeadlineExceededError as error:
                reply, outcome = encode_error(job_id, "deadline", f"not decoded in time: {error}"), "deadline"
            except ValueError as error:  # decoding settings the engine refuses
                reply, outcome = encode_error(job_id, "invalid", str(error)), "invalid"
            except Exception as error:
                log.warning("worker %s: decoding job %s failed: %r", self.consumer, job_id, error)
                reply, outcome = encode_error(job_id, "failed", f"decoding failed: {type(error).__name__}"), "failed"
            self.events.answered(queue.name, outcome)
            await self._acknowledge(queue, entry_id, entry.reply_to, reply)
        except Exception:
            log.exception("worker %s: job %s of %s failed", self.consumer, entry_id, queue.name)
        finally:
            queue.held.discard(entry_id)

    async def _acknowledge(
        self, queue: _Queue, entry_id: str, reply_to: str | None, reply: ReplyFields | None, attempts: int = 5
    ) -> None:
        """Write the reply, then acknowledge and delete the job, in one transaction (retried)."""
        for attempt in range(attempts):
            try:
                async with self.client.pipeline(transaction=True) as pipe:
                    if reply_to is not None and reply is not None:
                        pipe.xadd(reply_to, reply, maxlen=REPLY_MAXLEN, approximate=True)
                        pipe.expire(reply_to, int(REPLY_TTL_S))
                    pipe.xack(queue.stream, GROUP, entry_id)
                    pipe.xdel(queue.stream, entry_id)
                    await pipe.execute()
                return
            except (RedisError, OSError) as error:
                if attempt == attempts - 1:
                    log.warning("worker %s: could not answer %s (%r); left pending", self.consumer, entry_id, error)
                    return
                await asyncio.sleep(0.1 * 2**attempt)

    # -- keeping jobs alive, and claiming the dead's ----------------------------------------

    async def _refresh_held(self) -> None:
        for queue in self.queues.values():
            if queue.held:
                held: list[StreamIdT] = [*queue.held]
                await self.client.xclaim(
                    queue.stream, GROUP, self.consumer, min_idle_time=0, message_ids=held, justid=True
                )

    async def _claim_idle(self) -> None:
        if self._stopping.is_set():
            return
        idle_ms = int(self.claim_idle_s * 1000)
        for queue in self.queues.values():
            pending = await self.client.xpending_range(
                queue.stream, GROUP, min="-", max="+", count=self.policy.max_batch_size, idle=idle_ms
            )
            if not pending:
                continue
            dead = [_str(p["message_id"]) for p in pending if int(p["times_delivered"]) >= self.max_deliveries]
            if dead:
                await self._dead_letter(queue, dead)
            retry: list[StreamIdT] = [
                _str(p["message_id"]) for p in pending if int(p["times_delivered"]) < self.max_deliveries
            ]
            if retry:
                # without justid, XCLAIM answers the claimed entries themselves: (entry id, fields)
                claimed = cast(
                    StreamRangeResponse,
                    await self.client.xclaim(
                        queue.stream, GROUP, self.consumer, min_idle_time=idle_ms, message_ids=retry
                    ),
                )
                if claimed:
                    log.info("worker %s: claimed %d idle jobs of %s", self.consumer, len(claimed), queue.name)
                    self.events.claimed(queue.name, len(claimed))
                    self._serve_entries(queue, claimed)

    async def _dead_letter(self, queue: _Queue, entry_ids: list[str]) -> None:
        for entry_id in entry_ids:
            entries = await self.client.xrange(queue.stream, min=entry_id, max=entry_id)
            fields = entries[0][1] if entries else None
            if fields:
                entry = decode_job(fields)
                await self.client.xadd(
                    self.keys.dead(queue.name),
                    {**{_str(k): _str(v) for k, v in fields.items()}, "reason": f"{self.max_deliveries} deliveries"},
                    maxlen=DEAD_MAXLEN,
                    approximate=True,
                )
                message = f"job delivered {self.max_deliveries} times and never answered: dead-lettered"
                reply = encode_error(entry.job.id, "dead_letter", message)
                await self._acknowledge(queue, entry_id, entry.reply_to, reply)
            else:
                await self._acknowledge(queue, entry_id, None, None)
            log.warning("worker %s: dead-lettered job %s of %s", self.consumer, entry_id, queue.name)
        self.events.dead_lettered(queue.name, len(entry_ids))


def _str(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
