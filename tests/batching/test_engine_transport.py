"""The local transport between processes, over a real ZeroMQ socket: a front end's ``EngineBatcher`` and an
``EngineCore`` on the same event loop (as two processes would be, through ``ipc://``): results in order, the
engine's refusals raised as the same errors with their retry times, admission from the wait last reported, and an
engine that goes away and comes back."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from service.batching import BatchPolicy, DeadlineExceededError, Job, QueueFullError, closed_batches
from service.batching.batcher import QueueUnavailableError, WouldMissDeadlineError
from service.batching.engine_client import EngineBatcher, EngineConnection
from service.batching.engine_core import EngineCore
from service.batching.job import Priority

BOUND = 30.0
HOUR = 3600.0


class Engine:
    """Sums each job's tokens; ``gate`` holds every batch until the test opens it."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()

    def decode(self, thread: int, jobs: list[Job]) -> list[dict[str, Any]]:
        self.gate.wait(BOUND)
        return [{"sum": sum(job.tokens), "decoding": job.payload} for job in jobs]


def core(endpoint: str, engine: Engine, **policy: Any) -> EngineCore:
    settings = {"max_batch_size": 4, "max_wait_ms": 0.0, "max_queue": 8, "admit_within": 0.5} | policy
    return EngineCore(endpoint, BatchPolicy(**settings), closed_batches(engine.decode), threads=1, drain_s=1.0)


def batcher(connection: EngineConnection, name: str = "accelerated") -> EngineBatcher:
    made = EngineBatcher(connection, name, 0.5, lambda job: {"strategy": name}, lambda result, received: result)
    made.start()
    return made


def run(tmp_path: Path, scenario: Callable[[EngineConnection], Awaitable[None]]) -> None:
    """``scenario`` with a front end's connection to ``ipc://`` in ``tmp_path``, on one event loop."""

    async def main() -> None:
        connection = EngineConnection(f"ipc://{tmp_path}/engine.sock")
        await connection.start()
        try:
            await scenario(connection)
        finally:
            await connection.stop()

    asyncio.run(main())


async def running(engine_core: EngineCore, connection: EngineConnection) -> asyncio.Task[None]:
    engine_core.bind()
    task = asyncio.create_task(engine_core.run())
    await connection.ping(BOUND)
    return task


async def decoding(engine_core: EngineCore) -> None:
    """Until the queue ``accelerated`` of ``engine_core`` decodes a job."""
    while not engine_core.batchers or not engine_core.batchers["accelerated"].in_flight:
        await asyncio.sleep(0.01)


async def stopped(engine_core: EngineCore, task: asyncio.Task[None]) -> None:
    engine_core.stop()
    await asyncio.wait_for(task, BOUND)


def test_results_come_back_in_order_with_their_decoding(tmp_path: Path) -> None:
    async def scenario(connection: EngineConnection) -> None:
        engine_core = core(connection.endpoint, Engine())
        task = await running(engine_core, connection)
        queue = batcher(connection)
        jobs = [Job(tokens=list(range(n))) for n in range(1, 11)]
        many, more, one = await asyncio.gather(
            queue.submit_many(jobs[:6]), queue.submit_many(jobs[6:]), queue.submit(Job(tokens=[]))
        )
        assert [result["sum"] for result in [*many, *more]] == [sum(range(n)) for n in range(1, 11)]
        assert one == {"sum": 0, "decoding": {"strategy": "accelerated"}}
        assert queue.in_flight == 0
        await stopped(engine_core, task)

    run(tmp_path, scenario)


def test_a_full_queue_is_refused_across_the_socket_with_its_retry_time(tmp_path: Path) -> None:
    async def scenario(connection: EngineConnection) -> None:
        engine = Engine()
        engine_core = core(connection.endpoint, engine, max_queue=3)
        task = await running(engine_core, connection)
        queue = batcher(connection)
        engine.gate.clear()
        first = asyncio.create_task(queue.submit_many([Job(tokens=[1, 2])]))  # in a batch, held at the gate
        await decoding(engine_core)
        filling = asyncio.gather(queue.submit_many([Job(tokens=[3]) for _ in range(3)]))  # fills the queue
        while engine_core.batchers["accelerated"].depth < 3:
            await asyncio.sleep(0.01)
        with pytest.raises(QueueFullError) as refused:
            await queue.submit_many([Job(tokens=[4])])
        assert type(refused.value) is QueueFullError
        assert refused.value.depth == 3 and refused.value.retry_after > 0
        engine.gate.set()
        answered, (behind,) = await first, await filling
        assert [r["sum"] for r in answered] == [3] and [r["sum"] for r in behind] == [3, 3, 3]
        await stopped(engine_core, task)

    run(tmp_path, scenario)


def test_admission_reads_the_wait_the_engine_last_reported(tmp_path: Path) -> None:
    async def scenario(connection: EngineConnection) -> None:
        engine = Engine()
        engine_core = core(connection.endpoint, engine)
        task = await running(engine_core, connection)
        queue = batcher(connection)
        now = time.monotonic()
        await queue.submit(Job(tokens=[1, 2, 3]))  # measured: the engine reports its wait from now on
        engine.gate.clear()
        held = [asyncio.create_task(queue.submit(Job(tokens=list(range(50))))) for _ in range(8)]
        while engine_core.batchers["accelerated"].depth < 4:
            await asyncio.sleep(0.01)
        engine.gate.set()
        await asyncio.gather(*held)  # each answer reports the wait behind the work still queued
        queue.check_admission(Priority.INTERACTIVE, now + HOUR)
        queue.check_admission(Priority.SHADOW, time.monotonic())  # shadow work is never refused so
        with pytest.raises(WouldMissDeadlineError):
            queue.check_admission(Priority.INTERACTIVE, time.monotonic())  # no time left: any wait is too long
        with pytest.raises(DeadlineExceededError):
            await queue.submit(Job(tokens=[1], deadline=time.monotonic() - 1))
        await stopped(engine_core, task)

    run(tmp_path, scenario)


def test_an_engine_that_goes_away_fails_its_requests_at_once_and_one_that_comes_back_serves(tmp_path: Path) -> None:
    async def scenario(connection: EngineConnection) -> None:
        engine = Engine()
        first_core = core(connection.endpoint, engine)
        task = await running(first_core, connection)
        queue = batcher(connection)
        engine.gate.clear()
        waiting = asyncio.create_task(queue.submit(Job(tokens=[5])))
        await decoding(first_core)
        first_core._socket.close(linger=0)  # the engine dies with the job unanswered: its socket closes
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        with pytest.raises(QueueUnavailableError):
            await asyncio.wait_for(waiting, BOUND)
        assert not connection.connected
        with pytest.raises(QueueUnavailableError):
            await queue.submit(Job(tokens=[6]))
        engine.gate.set()
        second_core = core(connection.endpoint, Engine())  # a restart binds the same endpoint
        again = await running(second_core, connection)
        assert (await queue.submit(Job(tokens=[7])))["sum"] == 7
        await stopped(second_core, again)

    run(tmp_path, scenario)
