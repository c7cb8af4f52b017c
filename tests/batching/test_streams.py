"""The Redis Streams transport on a real Redis, without a model: a gateway's ``StreamBatcher`` and
``ReplyRouter`` against a worker's ``StreamConsumer`` whose decode the test writes."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
import redis.asyncio as aioredis

from service.batching import BatchPolicy, ClosedBatch, DeadlineExceededError, Job, QueueFullError, deadline_in
from service.batching.batcher import JobFailedError
from service.batching.stream_gateway import ReplyRouter, StreamBatcher
from service.batching.stream_worker import ConsumerEvents, StreamConsumer
from service.batching.streams import (
    GROUP,
    Reply,
    StreamKeys,
    cancel_task,
    decode_job,
    decode_reply,
    encode_error,
    encode_job,
    encode_result,
    ensure_group,
)
from tests.conftest import REDIS_URL
from tests.waiting import wait_until


class Echo:
    """A decode function that answers each job with its tokens doubled; it can be slowed down or made to fail."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.started: list[list[int]] = []  # each job's tokens, once a batch holding it is being decoded
        self.ran: list[list[int]] = []
        self.lock = threading.Lock()

    def __call__(self, worker: int, jobs: list[Job]) -> list[Any]:
        with self.lock:
            self.started += [job.tokens for job in jobs]
        time.sleep(self.delay)
        with self.lock:
            self.ran += [job.tokens for job in jobs]
        out: list[Any] = []
        for job in jobs:
            if job.payload.get("strategy") == "refuse":
                out.append(ValueError("strategy 'refuse' is not offered"))
            else:
                out.append(
                    {"result": {"doubled": [2 * t for t in job.tokens]}, "seconds": 0.001, "batch_size": len(jobs)}
                )
        return out


class Harness:
    """One gateway queue and one worker on a test prefix of the real Redis."""

    def __init__(self, prefix: str, max_queue: int = 100) -> None:
        self.client = aioredis.Redis.from_url(REDIS_URL)
        self.keys = StreamKeys(prefix, "tiny@1/int8")
        self.router = ReplyRouter(self.client, self.keys.reply("gateway-1"), block_ms=100)
        self.batcher = StreamBatcher(
            self.client,
            self.keys,
            "q",
            self.router,
            max_queue=max_queue,
            admit_within=0.5,
            decoding=lambda job: job.payload or {"strategy": "echo"},
            result_of=lambda reply, received: reply.result,
            live_workers=lambda: 1,
        )
        self.events: list[tuple[str, str, int]] = []

    def consumer(self, decode: Echo, name: str = "worker-1", **options: Any) -> StreamConsumer:
        events = ConsumerEvents(
            claimed=lambda q, n: self.events.append(("claimed", q, n)),
            dead_lettered=lambda q, n: self.events.append(("dead", q, n)),
            answered=lambda q, outcome: self.events.append((outcome, q, 1)),
        )
        policy = BatchPolicy(max_batch_size=8, max_wait_ms=1, admit_within=0)
        return StreamConsumer(
            self.client, self.keys, name, lambda: ClosedBatch(decode, 0), policy, ["q"], events=events, **options
        )

    async def __aenter__(self) -> Harness:
        self.router.start()
        self.batcher.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.batcher.stop(drain=False)
        await self.router.stop()
        await self.client.aclose()


async def serve(consumer: StreamConsumer) -> asyncio.Task[None]:
    """Run ``consumer`` (until the test cancels or stops it); return once it has said it is alive (its first
    heartbeat, after which it reads its queues)."""
    task = asyncio.create_task(consumer.run())

    async def alive() -> bool:
        if task.done():
            task.result()  # it stopped: raise why
        return await consumer.client.zscore(consumer.keys.workers, consumer.consumer) is not None

    await wait_until(alive, what=f"{consumer.consumer}'s first heartbeat")
    return task


async def queued(h: Harness, count: int, queue: str = "q") -> None:
    """Until the queue's stream holds ``count`` jobs (added by a submit running in the background)."""

    async def holds() -> bool:
        return await h.client.xlen(h.keys.jobs(queue)) == count

    await wait_until(holds, what=f"{count} jobs in queue {queue}")


def test_jobs_round_trip_and_leave_nothing_behind(redis_prefix: str) -> None:
    async def scenario() -> None:
        async with Harness(redis_prefix) as h:
            decode = Echo()
            worker = await serve(h.consumer(decode))
            jobs = [Job(tokens=[i, i + 1], deadline=deadline_in(10)) for i in range(20)]
            results = await asyncio.gather(*(h.batcher.submit_many(jobs[i : i + 5]) for i in range(0, 20, 5)))
            assert [r["doubled"] for part in results for r in part] == [[2 * i, 2 * i + 2] for i in range(20)]
            stream = h.keys.jobs("q")
            assert await h.client.xlen(stream) == 0
            assert (await h.client.xpending(stream, GROUP))["pending"] == 0
            assert await h.client.zscore(h.keys.workers, "worker-1") is not None
            assert await h.client.sismember(h.keys.queues, "q")
            await cancel_task(worker)

    asyncio.run(scenario())


def test_a_full_queue_refuses_all_of_a_request_at_once(redis_prefix: str) -> None:
    async def scenario() -> None:
        async with Harness(redis_prefix, max_queue=3) as h:
            with pytest.raises(QueueFullError) as refused:
                await h.batcher.submit_many([Job(tokens=[i]) for i in range(4)])
            assert await h.client.xlen(h.keys.jobs("q")) == 0  # none of the four was added
            assert 1 <= int(refused.value.retry_after_header) <= 60
            waiting = asyncio.ensure_future(h.batcher.submit_many([Job(tokens=[i]) for i in range(3)]))
            await queued(h, 3)
            assert not waiting.done()  # no worker yet: queued, waiting for answers
            with pytest.raises(QueueFullError):
                await h.batcher.submit(Job(tokens=[9]))
            worker = await serve(h.consumer(Echo()))
            assert [r["doubled"] for r in await waiting] == [[0], [2], [4]]
            await cancel_task(worker)

    asyncio.run(scenario())


async def ghost_reads(h: Harness, times: int) -> None:
    """A worker that reads the queue's jobs and dies without answering; ``times`` deliveries in all."""
    stream = h.keys.jobs("q")
    await h.client.xreadgroup(GROUP, "ghost", {stream: ">"}, count=100)
    for _ in range(times - 1):
        pending = await h.client.xpending_range(stream, GROUP, min="-", max="+", count=100)
        ids = [p["message_id"] for p in pending]
        await h.client.xclaim(stream, GROUP, "ghost", min_idle_time=0, message_ids=ids)


def test_jobs_of_a_dead_worker_are_claimed_and_answered(redis_prefix: str) -> None:
    async def scenario() -> None:
        async with Harness(redis_prefix) as h:
            await ensure_group(h.client, h.keys.jobs("q"))
            submitted = asyncio.ensure_future(
                h.batcher.submit_many([Job(tokens=[i], deadline=deadline_in(30)) for i in range(5)])
            )
            await queued(h, 5)
            await ghost_reads(h, times=1)
            decode = Echo()
            worker = await serve(h.consumer(decode, claim_idle_s=0.3))
            assert [r["doubled"] for r in await asyncio.wait_for(submitted, 10)] == [[2 * i] for i in range(5)]
            assert ("claimed", "q", 5) in h.events
            assert (await h.client.xpending(h.keys.jobs("q"), GROUP))["pending"] == 0
            await cancel_task(worker)

    asyncio.run(scenario())


def test_a_job_delivered_too_often_is_dead_lettered_and_its_caller_told(redis_prefix: str) -> None:
    async def scenario() -> None:
        async with Harness(redis_prefix) as h:
            await ensure_group(h.client, h.keys.jobs("q"))
            submitted = asyncio.ensure_future(h.batcher.submit(Job(tokens=[7], deadline=deadline_in(30))))
            await queued(h, 1)
            await ghost_reads(h, times=3)
            decode = Echo()
            worker = await serve(h.consumer(decode, claim_idle_s=0.3, max_deliveries=3))
            with pytest.raises(JobFailedError) as failed:
                await asyncio.wait_for(submitted, 10)
            assert failed.value.reason == "dead_letter" and "3 times" in str(failed.value)
            assert decode.ran == []  # never decoded
            (dead,) = await h.client.xrange(h.keys.dead("q"))
            assert dead[1][b"tokens"] == b"7" and dead[1][b"reason"] == b"3 deliveries"
            assert ("dead", "q", 1) in h.events
            await cancel_task(worker)

    asyncio.run(scenario())


def test_jobs_past_their_deadline_are_answered_without_decoding(redis_prefix: str) -> None:
    async def scenario() -> None:
        async with Harness(redis_prefix) as h:
            late_job = Job(tokens=[1], deadline=deadline_in(0.3))
            late = asyncio.ensure_future(h.batcher.submit(late_job))
            refused = asyncio.ensure_future(h.batcher.submit(Job(tokens=[2], payload={"strategy": "refuse"})))
            await queued(h, 2)
            # Letting time pass, on purpose: the first job's deadline must expire while no worker runs.
            while time.monotonic() <= late_job.deadline:
                await asyncio.sleep(0.05)
            decode = Echo()
            worker = await serve(h.consumer(decode))
            with pytest.raises(DeadlineExceededError):
                await asyncio.wait_for(late, 10)
            with pytest.raises(ValueError, match="refuse"):
                await asyncio.wait_for(refused, 10)
            assert [1] not in decode.ran
            assert ("deadline", "q", 1) in h.events
            await cancel_task(worker)

    asyncio.run(scenario())


def test_a_stopping_worker_finishes_its_batch_and_leaves(redis_prefix: str) -> None:
    async def scenario() -> None:
        async with Harness(redis_prefix) as h:
            decode = Echo(delay=0.5)
            consumer = h.consumer(decode)
            worker = await serve(consumer)
            submitted = asyncio.ensure_future(h.batcher.submit_many([Job(tokens=[i]) for i in range(3)]))
            await wait_until(lambda: decode.started, what="a batch being decoded")  # read, and decoding (0.5 s)
            consumer.stop()
            assert [r["doubled"] for r in await asyncio.wait_for(submitted, 10)] == [[0], [2], [4]]
            await asyncio.wait_for(worker, 10)
            assert (await h.client.xpending(h.keys.jobs("q"), GROUP))["pending"] == 0
            assert await h.client.zscore(h.keys.workers, "worker-1") is None
            consumers = await h.client.xinfo_consumers(h.keys.jobs("q"), GROUP)
            assert [c["name"] for c in consumers] == []

    asyncio.run(scenario())


def test_replies_reach_only_the_gateway_that_asked(redis_prefix: str) -> None:
    async def scenario() -> None:
        async with Harness(redis_prefix) as h:
            other = ReplyRouter(h.client, h.keys.reply("gateway-2"), block_ms=100)
            other.start()
            second = StreamBatcher(
                h.client,
                h.keys,
                "q",
                other,
                100,
                0.5,
                lambda job: {"strategy": "echo"},
                lambda reply, received: ("gateway-2", reply.result),
                lambda: 1,
            )
            second.start()
            worker = await serve(h.consumer(Echo()))
            mine, theirs = await asyncio.gather(
                h.batcher.submit_many([Job(tokens=[i]) for i in range(10)]),
                second.submit_many([Job(tokens=[i]) for i in range(10, 20)]),
            )
            assert [r["doubled"] for r in mine] == [[2 * i] for i in range(10)]
            assert [r for r, _ in theirs] == ["gateway-2"] * 10
            assert 0 < await h.client.ttl(h.keys.reply("gateway-2")) <= 60
            await other.stop()
            assert not await h.client.exists(h.keys.reply("gateway-2"))  # a clean stop leaves nothing
            await cancel_task(worker)

    asyncio.run(scenario())


def test_reply_codec_round_trip() -> None:
    job = Job(tokens=[5, 6, 7], deadline=deadline_in(2.0), keep_bias=-1.0 / 3)
    fields = encode_job(job, "reply:g", {"strategy": "beam", "params": {"num_beams": 4}})
    entry = decode_job({k.encode(): v.encode() for k, v in fields.items()})
    assert entry.job.tokens == [5, 6, 7] and entry.job.id == job.id and entry.reply_to == "reply:g"
    assert entry.job.keep_bias == job.keep_bias  # exactly: the worker decodes what the gateway would
    assert entry.decoding == {"strategy": "beam", "params": {"num_beams": 4}}
    assert abs(entry.job.deadline - job.deadline) < 0.01
    assert decode_reply(encode_result("a", {"x": 1}, 0.5, 3)) == Reply("a", {"x": 1}, 0.5, 3)
    assert decode_reply(encode_error("b", "deadline", "late")) == Reply("b", error="deadline", message="late")


def test_a_worker_given_queues_serves_only_those(redis_prefix: str) -> None:
    async def scenario() -> None:
        async with Harness(redis_prefix) as h:
            other = StreamBatcher(
                h.client,
                h.keys,
                "r",
                h.router,
                100,
                0.5,
                lambda job: {"strategy": "echo"},
                lambda reply, received: reply.result,
                lambda: 1,
            )
            other.start()
            policy = BatchPolicy(max_batch_size=8, max_wait_ms=1, admit_within=0)
            only_r = StreamConsumer(h.client, h.keys, "worker-r", lambda: ClosedBatch(Echo(), 0), policy, ["r"])
            worker = await serve(only_r)
            on_q = asyncio.ensure_future(h.batcher.submit(Job(tokens=[1])))
            await queued(h, 1)  # on q before the job on r: the worker has read since, and served only r
            assert (await asyncio.wait_for(other.submit(Job(tokens=[2])), 10))["doubled"] == [4]
            # Letting time pass, on purpose: nothing to poll for, the point is that q's job is never taken.
            await asyncio.sleep(0.5)
            assert not on_q.done() and await h.client.xlen(h.keys.jobs("q")) == 1
            await cancel_task(worker)
            on_q.cancel()

    asyncio.run(scenario())
