"""The asyncio transport: routing, batch growth, failures, cancellation, bounds, deadlines, stop."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

import pytest

from service.batching import (
    BatcherStoppedError,
    BatchPolicy,
    DeadlineExceededError,
    Job,
    LocalBatcher,
    QueueFullError,
    closed_batches,
    deadline_in,
)
from service.batching.batcher import Batcher, NullHooks, WouldMissDeadlineError
from service.batching.job import Priority
from tests.system.clients import wait_until

# No test here races the wall clock. A decode function blocks on a ``gate`` (an event the test opens) so that
# the queue's state is known; deadlines and ``max_wait_ms`` are an hour away, and a test that needs
# them to pass moves the ``clock`` fixture forward instead of sleeping. BOUND only tells "at once"
# from "never" (or from an hour): it is not a speed limit.
HOUR = 3600.0
HOUR_MS = HOUR * 1000
BOUND = 30.0


def result_of(job: Job) -> tuple[int, ...]:
    return tuple(t * 2 for t in reversed(job.tokens))


class Clock:
    """A fake ``time.monotonic``: the real one plus a skew that ``advance`` moves forward at once.

    The ``clock`` fixture installs it process-wide for one test, so the batcher's deadline checks,
    ``deadline_in`` and the event loop's timers (``loop.time()`` reads ``time.monotonic()``) all
    see the jump. Threads' own waits (``threading.Event.wait``) keep real time.
    """

    def __init__(self) -> None:
        self._real = time.monotonic
        self.skew = 0.0

    def __call__(self) -> float:
        return self._real() + self.skew

    def advance(self, seconds: float) -> None:
        self.skew += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(time, "monotonic", fake)
    return fake


class Recorder:
    """A decode function that records its batches, optionally sleeping or blocking until a test opens ``gate``."""

    def __init__(self, delay: float = 0.0, gate: threading.Event | None = None) -> None:
        self.delay = delay
        self.gate = gate
        self.batches: list[list[Job]] = []
        self.threads: dict[int, set[int]] = {}
        self.started = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, thread: int, jobs: list[Job]) -> list[Any]:
        with self.lock:
            self.batches.append(list(jobs))
            self.threads.setdefault(thread, set()).add(threading.get_ident())
        self.started.set()
        if self.gate is not None and not self.gate.wait(2 * BOUND):
            raise AssertionError("the test never opened the gate")  # fails the batch, never decodes early
        if self.delay:
            time.sleep(self.delay)
        return [result_of(job) for job in jobs]

    @property
    def seen(self) -> list[Job]:
        return [job for batch in self.batches for job in batch]


async def turns(count: int = 20) -> None:
    """Let the event loop go round ``count`` times: enough for a woken thread to take a batch, so
    that a check that one was *not* taken means something (it cannot flake: waiting longer only
    gives the fault more chances to show)."""
    for _ in range(count):
        await asyncio.sleep(0)


def test_is_a_batcher() -> None:
    assert isinstance(LocalBatcher(BatchPolicy(), closed_batches(Recorder())), Batcher)


def test_results_are_routed_to_their_callers() -> None:
    decode = Recorder(delay=0.002)

    async def main() -> None:
        batcher = LocalBatcher(
            BatchPolicy(max_batch_size=16, max_wait_ms=2), closed_batches(decode), threads=3, name="route"
        )
        batcher.start()
        rng = random.Random(7)
        jobs = [Job(tokens=[rng.randrange(1000) for _ in range(rng.randrange(1, 12))]) for _ in range(300)]

        async def one(job: Job) -> None:
            await asyncio.sleep(rng.random() * 0.02)
            assert await batcher.submit(job) == result_of(job)

        await asyncio.gather(*(one(job) for job in jobs))
        await batcher.stop()
        assert sorted(id(j) for j in decode.seen) == sorted(id(j) for j in jobs)  # each decoded exactly once

    asyncio.run(main())
    # One dedicated OS thread per decoding thread index, distinct across them.
    threads = [next(iter(ids)) for ids in decode.threads.values()]
    assert all(len(ids) == 1 for ids in decode.threads.values())
    assert len(set(threads)) == len(threads)


def test_batches_grow_under_load() -> None:
    """Jobs that arrive while the thread is busy gather; once it is free they go in full batches."""
    gate = threading.Event()
    decode = Recorder(gate=gate)

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=32, max_wait_ms=1), closed_batches(decode), threads=1)
        batcher.start()
        first = asyncio.create_task(batcher.submit(Job(tokens=[0, 1])))
        await wait_until(lambda: batcher.in_flight == 1)  # the thread is busy until the gate opens
        rest = [asyncio.create_task(batcher.submit(Job(tokens=[i, i + 1]))) for i in range(1, 50)]
        await wait_until(lambda: batcher.depth == 49)
        gate.set()
        results = await asyncio.gather(first, *rest)
        assert results == [(2 * (i + 1), 2 * i) for i in range(50)]
        await batcher.stop()

    asyncio.run(main())
    assert [len(b) for b in decode.batches] == [1, 32, 17]  # the backlog at once, max_batch_size at most


def test_full_batch_is_taken_without_waiting() -> None:
    """A free thread takes a batch as soon as it is full, not max_wait (an hour) later, even while
    another batch runs (so the idle rule does not apply)."""
    gate = threading.Event()
    decode = Recorder(gate=gate)

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=4, max_wait_ms=HOUR_MS), closed_batches(decode), threads=2)
        batcher.start()
        first = asyncio.create_task(batcher.submit(Job(tokens=[0])))
        await wait_until(lambda: batcher.in_flight == 1)  # one thread busy: the batcher is not idle
        rest = [asyncio.create_task(batcher.submit(Job(tokens=[i]))) for i in range(1, 4)]
        await wait_until(lambda: batcher.depth == 3)
        await turns()
        assert batcher.depth == 3 and batcher.in_flight == 1  # three of four: the free thread waits to fill
        rest.append(asyncio.create_task(batcher.submit(Job(tokens=[4]))))
        await wait_until(lambda: batcher.in_flight == 5)  # the fourth fills it: taken at once
        gate.set()
        assert await asyncio.gather(first, *rest) == [(2 * i,) for i in range(5)]
        await batcher.stop()

    asyncio.run(main())
    assert [len(b) for b in decode.batches] == [1, 4]


def test_runner_error_fails_the_whole_batch_and_the_thread_continues() -> None:
    calls = []

    def decode(thread: int, jobs: list[Job]) -> list[Any]:
        calls.append(len(jobs))
        if len(calls) == 1:
            raise ValueError("engine blew up")
        return [result_of(job) for job in jobs]

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=3, max_wait_ms=50), closed_batches(decode))
        batcher.start()
        outcomes = await asyncio.gather(*(batcher.submit(Job(tokens=[i])) for i in range(3)), return_exceptions=True)
        assert all(isinstance(o, ValueError) for o in outcomes)
        assert await batcher.submit(Job(tokens=[4, 5])) == (10, 8)
        await batcher.stop()

    asyncio.run(main())


def test_per_job_exceptions_and_wrong_result_counts() -> None:
    def decode(thread: int, jobs: list[Job]) -> list[Any]:
        if any(job.payload == "short" for job in jobs):
            return []
        return [KeyError(job.id) if job.payload == "bad" else result_of(job) for job in jobs]

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=2, max_wait_ms=50), closed_batches(decode))
        batcher.start()
        good, bad = await asyncio.gather(
            batcher.submit(Job(tokens=[1])), batcher.submit(Job(tokens=[2], payload="bad")), return_exceptions=True
        )
        assert good == (2,)
        assert isinstance(bad, KeyError)
        with pytest.raises(RuntimeError, match="0 results for 1 jobs"):
            await batcher.submit(Job(tokens=[3], payload="short"))
        await batcher.stop()

    asyncio.run(main())


def test_cancelled_callers_do_not_break_the_batch() -> None:
    gate = threading.Event()
    decode = Recorder(gate=gate)

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=4, max_wait_ms=1), closed_batches(decode))
        batcher.start()
        running = [asyncio.create_task(batcher.submit(Job(tokens=[i]))) for i in range(4)]
        await wait_until(lambda: batcher.in_flight == 4)
        queued_job = Job(tokens=[99])
        queued = asyncio.create_task(batcher.submit(queued_job))
        await wait_until(lambda: batcher.depth == 1)
        running[0].cancel()  # goes away while its batch decodes
        queued.cancel()  # goes away while still queued: never decoded
        await asyncio.wait([running[0], queued])  # both callers are gone
        assert batcher.depth == 0 and batcher.in_flight == 4
        gate.set()
        outcomes = await asyncio.gather(*running, queued, return_exceptions=True)
        assert isinstance(outcomes[0], asyncio.CancelledError)
        assert outcomes[1:4] == [(2,), (4,), (6,)]
        assert isinstance(outcomes[4], asyncio.CancelledError)
        assert await batcher.submit(Job(tokens=[7])) == (14,)
        await batcher.stop()
        assert all(job is not queued_job for job in decode.seen)

    asyncio.run(main())


class Rejections(NullHooks):
    def __init__(self) -> None:
        self.reasons: list[str] = []

    def on_reject(self, name: str, reason: str) -> None:
        self.reasons.append(reason)


def test_withdrawn_queued_jobs_are_counted_by_reason(clock: Clock) -> None:
    """A caller that gives up on queued jobs: past their deadline they count as deadline drops
    (the request timeout and the job deadline fire together), otherwise as cancellations."""
    gate = threading.Event()
    decode = Recorder(gate=gate)
    hooks = Rejections()

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=1, max_wait_ms=0), closed_batches(decode), hooks=hooks)
        batcher.start()
        blocker = asyncio.create_task(batcher.submit(Job(tokens=[0])))
        await wait_until(lambda: batcher.in_flight == 1)
        # Cancelled before its deadline (or without one): a cancellation.
        cancelled = asyncio.create_task(
            batcher.submit_many([Job(tokens=[1], deadline=deadline_in(HOUR)), Job(tokens=[2])])
        )
        await wait_until(lambda: batcher.depth == 2)
        cancelled.cancel()
        await asyncio.wait([cancelled])
        assert hooks.reasons == ["cancelled", "cancelled"] and batcher.depth == 0
        # The caller's timeout and the jobs' deadline are the same instant: whichever fires first,
        # both jobs are dropped unrun and counted as deadline drops.
        deadline = deadline_in(HOUR)  # one request: one deadline for all its jobs
        late = [Job(tokens=[3], deadline=deadline), Job(tokens=[4], deadline=deadline)]
        caller = asyncio.create_task(asyncio.wait_for(batcher.submit_many(late), timeout=HOUR))
        await wait_until(lambda: batcher.depth == 2)  # admitted whole, whatever the machine's load
        clock.advance(HOUR + 1)
        with pytest.raises((asyncio.TimeoutError, DeadlineExceededError)):
            await caller
        assert hooks.reasons.count("deadline") == 2 and batcher.depth == 0
        # The caller's timeout just before the deadline, both due in one turn of the loop (as a request's
        # timeout and its jobs' deadline on a busy machine): the timeout cancels the caller's futures
        # before the deadline drops the jobs, which are counted all the same, once each.
        deadline = deadline_in(HOUR)
        late = [Job(tokens=[5], deadline=deadline), Job(tokens=[6], deadline=deadline)]

        async def give_up() -> None:
            async with asyncio.timeout(HOUR - 1):
                await batcher.submit_many(late)

        caller = asyncio.create_task(give_up())
        await wait_until(lambda: batcher.depth == 2)
        clock.advance(HOUR + 1)
        with pytest.raises(TimeoutError):
            await caller
        assert hooks.reasons.count("deadline") == 4 and batcher.depth == 0
        gate.set()
        assert await blocker == (0,)
        await batcher.stop()
        assert [job.tokens for job in decode.seen] == [[0]]

    asyncio.run(main())


def test_bounded_queue_rejects_instead_of_growing() -> None:
    gate = threading.Event()
    decode = Recorder(gate=gate)

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=1, max_wait_ms=0, max_queue=5), closed_batches(decode))
        batcher.start()
        first = asyncio.create_task(batcher.submit(Job(tokens=[0])))
        await wait_until(lambda: batcher.in_flight == 1)
        queued = [asyncio.create_task(batcher.submit(Job(tokens=[i]))) for i in range(1, 6)]
        await wait_until(lambda: batcher.depth == 5)
        with pytest.raises(QueueFullError) as info:
            await batcher.submit(Job(tokens=[6]))
        assert info.value.depth == 5
        assert 1.0 <= info.value.retry_after <= 60.0
        assert int(info.value.retry_after_header) >= 1
        assert batcher.depth == 5
        gate.set()
        assert await asyncio.gather(first, *queued) == [(2 * i,) for i in range(6)]
        await batcher.stop()

    asyncio.run(main())


def test_service_rate_is_learnt_from_the_batches_run() -> None:
    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_wait_ms=0), closed_batches(Recorder()))
        batcher.start()
        assert not batcher.rate.measured and batcher.estimated_wait(100) == 0.0
        for i in range(5):
            await batcher.submit(Job(tokens=[i, i + 1]))
        assert batcher.rate.measured and batcher.estimated_wait(100) > 0
        await batcher.stop()

    asyncio.run(main())


def test_deadline_passing_in_the_queue_fails_the_job_and_it_is_never_decoded(clock: Clock) -> None:
    gate = threading.Event()
    decode = Recorder(gate=gate)

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=1, max_wait_ms=0), closed_batches(decode))
        batcher.start()
        blocker = asyncio.create_task(batcher.submit(Job(tokens=[1])))
        await wait_until(lambda: batcher.in_flight == 1)
        doomed = Job(tokens=[2], deadline=deadline_in(HOUR))
        waiting = asyncio.create_task(batcher.submit(doomed))
        await wait_until(lambda: batcher.depth == 1)  # queued behind the busy thread
        clock.advance(HOUR + 1)
        with pytest.raises(DeadlineExceededError):
            await asyncio.wait_for(waiting, BOUND)  # promptly: the gate is closed, the thread still busy
        assert batcher.depth == 0 and batcher.in_flight == 1
        gate.set()
        assert await blocker == (2,)
        await batcher.stop()
        assert all(job is not doomed for job in decode.seen)
        # Already expired at submission: refused at once.
        expired = Job(tokens=[3], deadline=time.monotonic() - 1)
        batcher2 = LocalBatcher(BatchPolicy(), closed_batches(decode))
        batcher2.start()
        with pytest.raises(DeadlineExceededError):
            await batcher2.submit(expired)
        await batcher2.stop()

    asyncio.run(main())


def test_job_running_past_its_deadline_still_completes(clock: Clock) -> None:
    gate = threading.Event()
    decode = Recorder(gate=gate)

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_wait_ms=0), closed_batches(decode))
        batcher.start()
        running = asyncio.create_task(batcher.submit(Job(tokens=[4], deadline=deadline_in(HOUR))))
        await wait_until(lambda: batcher.in_flight == 1)
        clock.advance(HOUR + 1)  # the deadline passes while it decodes
        await turns()  # any timer still armed for it has fired by now
        assert not running.done()
        gate.set()
        assert await running == (8,)
        await batcher.stop()

    asyncio.run(main())


def test_stop_with_drain_finishes_queued_jobs() -> None:
    gate = threading.Event()
    decode = Recorder(gate=gate)

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=2, max_wait_ms=HOUR_MS), closed_batches(decode), threads=2)
        batcher.start()
        tasks = [asyncio.create_task(batcher.submit(Job(tokens=[i]))) for i in range(7)]
        await wait_until(lambda: batcher.in_flight == 4 and batcher.depth == 3)  # both threads busy, 3 queued
        stopping = asyncio.create_task(batcher.stop(drain=True))
        await wait_until(lambda: not batcher.running)
        with pytest.raises(BatcherStoppedError):
            await batcher.submit(Job(tokens=[1]))  # nothing new while draining
        assert batcher.depth == 3  # the queued jobs are kept...
        gate.set()
        await asyncio.wait_for(stopping, BOUND)  # ...and run without waiting max_wait (an hour) to fill
        assert [t.result() for t in tasks] == [(2 * i,) for i in range(7)]
        with pytest.raises(BatcherStoppedError):
            await batcher.submit(Job(tokens=[1]))

    asyncio.run(main())
    assert sorted(len(b) for b in decode.batches) == [1, 2, 2, 2]


def test_stop_without_drain_fails_queued_jobs_and_finishes_running_ones() -> None:
    gate = threading.Event()
    decode = Recorder(gate=gate)

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=1, max_wait_ms=0), closed_batches(decode))
        batcher.start()
        running = asyncio.create_task(batcher.submit(Job(tokens=[1])))
        await wait_until(lambda: batcher.in_flight == 1)
        queued = [asyncio.create_task(batcher.submit(Job(tokens=[i]))) for i in range(3)]
        await wait_until(lambda: batcher.depth == 3)
        stopping = asyncio.create_task(batcher.stop(drain=False))
        outcomes = await asyncio.wait_for(asyncio.gather(*queued, return_exceptions=True), BOUND)
        assert all(isinstance(outcome, BatcherStoppedError) for outcome in outcomes), outcomes
        assert batcher.in_flight == 1 and not running.done()  # failed at once, while the running job runs on
        gate.set()
        await stopping
        assert await running == (2,)
        assert len(decode.seen) == 1

    asyncio.run(main())


def test_stop_timeout_releases_callers_of_a_stuck_runner() -> None:
    gate = threading.Event()
    decode = Recorder(gate=gate)

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_wait_ms=0), closed_batches(decode))
        batcher.start()
        stuck = asyncio.create_task(batcher.submit(Job(tokens=[1])))
        await wait_until(lambda: batcher.in_flight == 1)
        await batcher.stop(drain=True, timeout=0.05)
        with pytest.raises(BatcherStoppedError):
            await stuck
        gate.set()

    asyncio.run(main())


def test_submit_requires_a_started_batcher_and_unique_jobs() -> None:
    gate = threading.Event()

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(), closed_batches(Recorder(gate=gate)))
        with pytest.raises(BatcherStoppedError):
            await batcher.submit(Job(tokens=[1]))
        batcher.start()
        with pytest.raises(RuntimeError):
            batcher.start()
        job = Job(tokens=[1])
        first = asyncio.create_task(batcher.submit(job))
        await wait_until(lambda: batcher.depth + batcher.in_flight == 1)
        with pytest.raises(ValueError):
            await batcher.submit(job)
        gate.set()
        await first
        await batcher.stop()

    asyncio.run(main())


def test_hooks_see_the_batching_and_a_broken_hook_is_harmless() -> None:
    events: list[tuple[str, tuple]] = []

    class Hooks:
        def __getattr__(self, method: str):
            def record(*args):
                events.append((method, args))
                if method == "on_depth":
                    raise RuntimeError("broken hook")

            return record

    async def main() -> None:
        batcher = LocalBatcher(
            BatchPolicy(max_batch_size=3, max_wait_ms=20), closed_batches(Recorder()), name="arm-a", hooks=Hooks()
        )
        batcher.start()
        await asyncio.gather(*(batcher.submit(Job(tokens=[1] * n)) for n in (2, 3, 4)))
        await batcher.stop()

    asyncio.run(main())
    kinds = [kind for kind, _ in events]
    assert ("on_batch", ("arm-a", 3, 12)) in events
    assert kinds.count("on_queue_wait") == 3
    assert kinds.count("on_inference") == 1
    assert events[-1] == ("on_depth", ("arm-a", 0, 0))


def test_the_inference_hook_gets_the_decoding_threads_cpu_time_not_its_wall_time() -> None:
    """A batch that waits costs its thread no CPU; one that computes costs about its wall time."""
    seen: list[tuple[float, float]] = []

    class Hooks(NullHooks):
        def on_inference(self, name: str, seconds: float, size: int, cpu_seconds: float) -> None:
            seen.append((seconds, cpu_seconds))

    def decode(thread: int, jobs: list[Job]) -> list[int]:
        until = time.thread_time() + 0.05
        if jobs[0].payload == "wait":
            time.sleep(0.05)
        while jobs[0].payload == "compute" and time.thread_time() < until:
            pass
        return [0 for _ in jobs]

    async def main() -> None:
        batcher = LocalBatcher(BatchPolicy(max_batch_size=1), closed_batches(decode), hooks=Hooks())
        batcher.start()
        await batcher.submit(Job(tokens=[1], payload="wait"))
        await batcher.submit(Job(tokens=[1], payload="compute"))
        await batcher.stop()

    asyncio.run(main())
    (waited, waited_cpu), (computed, computed_cpu) = seen
    assert waited >= 0.05 and waited_cpu < 0.02
    assert computed >= 0.05 and computed_cpu >= 0.05


def test_submit_many_admits_a_request_whole_or_not_at_all() -> None:
    """A request's sentences enter the queue together: no request is left half queued."""

    async def scenario() -> None:
        gate = threading.Event()
        decode = Recorder(gate=gate)
        batcher = LocalBatcher(BatchPolicy(max_batch_size=1, max_wait_ms=0, max_queue=5), closed_batches(decode))
        batcher.start()
        blocker = asyncio.create_task(batcher.submit(Job([0])))
        await wait_until(decode.started.is_set)
        first = asyncio.create_task(batcher.submit_many([Job([1]), Job([2]), Job([3])]))
        await wait_until(lambda: batcher.depth == 3)
        with pytest.raises(QueueFullError) as full:
            await batcher.submit_many([Job([4]), Job([5]), Job([6])])  # 3 + 3 > 5: none of it is queued
        assert batcher.depth == 3 and full.value.retry_after >= 1
        second = asyncio.create_task(batcher.submit_many([Job([7]), Job([8])]))  # 3 + 2 fits
        await wait_until(lambda: batcher.depth == 5)
        gate.set()
        assert await first == [result_of(Job([t])) for t in (1, 2, 3)]
        assert await second == [result_of(Job([t])) for t in (7, 8)]
        await blocker
        decoded = [job.tokens[0] for batch in decode.batches for job in batch]
        assert sorted(decoded) == [0, 1, 2, 3, 7, 8]
        await batcher.stop()

    asyncio.run(scenario())


def test_submit_many_withdraws_the_rest_when_one_job_fails(clock: Clock) -> None:
    async def scenario() -> None:
        gate = threading.Event()
        decode = Recorder(gate=gate)
        batcher = LocalBatcher(BatchPolicy(max_batch_size=1, max_wait_ms=0, max_queue=10), closed_batches(decode))
        batcher.start()
        blocker = asyncio.create_task(batcher.submit(Job([0])))
        await wait_until(decode.started.is_set)
        soon = Job([1], deadline=deadline_in(HOUR))
        request = asyncio.create_task(batcher.submit_many([Job([2]), soon, Job([3])]))
        await wait_until(lambda: batcher.depth == 3)  # all three queued
        clock.advance(HOUR + 1)  # one of them expires
        with pytest.raises(DeadlineExceededError):
            await asyncio.wait_for(request, BOUND)
        assert batcher.depth == 0  # the others left the queue with it
        gate.set()
        await blocker
        assert [job.tokens[0] for batch in decode.batches for job in batch] == [0]
        await batcher.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize("idle_dispatch", [True, False])
def test_an_idle_batcher_does_not_wait_to_fill(idle_dispatch: bool, clock: Clock) -> None:
    """Idle: a lone job runs at once instead of waiting max_wait for company; without idle
    dispatch it waits for max_wait (an hour on the fake clock), then goes; busy: jobs gather."""
    gate = threading.Event()
    decode = Recorder(gate=gate)
    policy = BatchPolicy(max_batch_size=8, max_wait_ms=HOUR_MS, dispatch_when_idle=idle_dispatch)

    async def waits_for_max_wait(batcher: LocalBatcher, queued: int) -> None:
        await turns()
        assert batcher.in_flight == 0 and batcher.depth == queued  # not yet
        clock.advance(HOUR - 60)
        await turns()
        assert batcher.in_flight == 0 and batcher.depth == queued  # a minute short of max_wait: still not
        clock.advance(61)

    async def main() -> None:
        batcher = LocalBatcher(policy, closed_batches(decode))
        batcher.start()
        first = asyncio.create_task(batcher.submit(Job(tokens=[1])))
        if not idle_dispatch:
            await waits_for_max_wait(batcher, 1)
        await wait_until(lambda: batcher.in_flight == 1)  # at once (BOUND, not an hour)
        rest = [asyncio.create_task(batcher.submit(Job(tokens=[i]))) for i in range(2, 6)]
        await wait_until(lambda: batcher.depth == 4)
        gate.set()  # the thread frees up: the four queued jobs go together
        assert await first == (2,)
        if not idle_dispatch:
            await waits_for_max_wait(batcher, 4)
        assert await asyncio.wait_for(asyncio.gather(*rest), BOUND) == [(4,), (6,), (8,), (10,)]
        await batcher.stop()
        assert [len(batch) for batch in decode.batches] == [1, 4]

    asyncio.run(main())


class SteppedBatch:
    """A running batch whose jobs need ``tokens[0]`` passes each; every pass waits for the test to
    release it, so which jobs ran together is known without racing the clock."""

    def __init__(self, max_rows: int) -> None:
        self.max_rows = max_rows
        self.held: dict[Job, int] = {}
        self.joins: list[tuple[list[int], int]] = []  # (joining job ids, rows already running)
        self.finished: list[int] = []
        self.passes = threading.Semaphore(0)
        self.most_rows = 0

    @property
    def active(self) -> int:
        return len(self.held)

    def advance(self, joining: list[Job], wake: threading.Event, deliver) -> None:
        self.joins.append(([job.id for job in joining], len(self.held)))
        for job in joining:
            if job.payload == "boom":
                raise RuntimeError("decoder broke")
            self.held[job] = job.tokens[0]
        self.most_rows = max(self.most_rows, len(self.held))
        while self.held:
            assert self.passes.acquire(timeout=BOUND)
            for job in list(self.held):
                self.held[job] -= 1
                if self.held[job] == 0:
                    del self.held[job]
                    self.finished.append(job.id)  # before deliver: the test may read it once answered
                    deliver([(job, result_of(job))])
            if wake.is_set() and len(self.held) < self.max_rows:
                break


def _stepped(policy: BatchPolicy) -> tuple[LocalBatcher, SteppedBatch]:
    stepped = SteppedBatch(policy.max_batch_size)
    return LocalBatcher(policy, lambda thread: stepped), stepped


def test_jobs_join_a_running_batch_and_leave_when_done() -> None:
    async def main() -> None:
        batcher, stepped = _stepped(BatchPolicy(max_batch_size=4, max_wait_ms=HOUR_MS))
        batcher.start()
        long = Job(tokens=[5])
        long_task = asyncio.ensure_future(batcher.submit(long))
        await wait_until(lambda: len(stepped.joins) == 1)
        short = Job(tokens=[1])
        short_task = asyncio.ensure_future(batcher.submit(short))
        await wait_until(lambda: batcher.depth == 1)
        stepped.passes.release()  # one pass of the long job; the batch then makes room
        await wait_until(lambda: len(stepped.joins) == 2)
        assert stepped.joins[1] == ([short.id], 1)  # joined while the long job was running
        stepped.passes.release(10)
        assert await asyncio.wait_for(short_task, BOUND) == (2,)
        assert await asyncio.wait_for(long_task, BOUND) == (10,)
        assert stepped.finished == [short.id, long.id]
        await batcher.stop()

    asyncio.run(main())


def test_a_running_batch_never_holds_more_than_the_batch_size() -> None:
    async def main() -> None:
        batcher, stepped = _stepped(BatchPolicy(max_batch_size=2, max_wait_ms=HOUR_MS))
        batcher.start()
        stepped.passes.release(1000)
        jobs = [Job(tokens=[1 + i % 3]) for i in range(9)]
        results = await asyncio.wait_for(asyncio.gather(*(batcher.submit(job) for job in jobs)), BOUND)
        assert results == [result_of(job) for job in jobs]
        assert stepped.most_rows == 2
        assert batcher.in_flight == 0
        await batcher.stop()

    asyncio.run(main())


def test_a_failing_running_batch_fails_the_jobs_it_holds_and_the_thread_continues() -> None:
    async def main() -> None:
        batcher, stepped = _stepped(BatchPolicy(max_batch_size=4, max_wait_ms=HOUR_MS))
        batcher.start()
        held = asyncio.ensure_future(batcher.submit(Job(tokens=[3])))
        await wait_until(lambda: len(stepped.joins) == 1)
        boom = asyncio.ensure_future(batcher.submit(Job(tokens=[1], payload="boom")))
        await wait_until(lambda: batcher.depth == 1)
        stepped.passes.release()
        for task in (held, boom):
            with pytest.raises(RuntimeError, match="decoder broke"):
                await asyncio.wait_for(task, BOUND)
        stepped.held.clear()  # a real running batch starts over after a failure
        stepped.passes.release(5)
        assert await asyncio.wait_for(batcher.submit(Job(tokens=[2])), BOUND) == (4,)
        assert batcher.in_flight == 0
        await batcher.stop()

    asyncio.run(main())


def test_stop_drains_a_running_batch() -> None:
    async def main() -> None:
        batcher, stepped = _stepped(BatchPolicy(max_batch_size=4, max_wait_ms=HOUR_MS))
        batcher.start()
        running = asyncio.ensure_future(batcher.submit(Job(tokens=[4])))
        await wait_until(lambda: len(stepped.joins) == 1)
        stopping = asyncio.ensure_future(batcher.stop(drain=True, timeout=BOUND))
        stepped.passes.release(4)
        assert await asyncio.wait_for(running, BOUND) == (8,)
        await stopping

    asyncio.run(main())


def test_a_running_batch_takes_only_what_fits_the_token_budget_left() -> None:
    async def main() -> None:
        batcher, stepped = _stepped(BatchPolicy(max_batch_size=4, max_batch_tokens=10, max_wait_ms=HOUR_MS))
        batcher.start()
        running = asyncio.ensure_future(batcher.submit(Job(tokens=[2] + [1] * 7)))  # 8 tokens, 2 passes
        await wait_until(lambda: len(stepped.joins) == 1)
        small, large = Job(tokens=[1, 1]), Job(tokens=[1] * 5)
        waits = [asyncio.ensure_future(batcher.submit(job)) for job in (small, large)]
        await wait_until(lambda: batcher.depth == 2)
        stepped.passes.release()
        await wait_until(lambda: len(stepped.joins) == 2)
        assert stepped.joins[1] == ([small.id], 1)  # 8 + 2 fit the 10-token budget, 8 + 5 do not
        stepped.passes.release(10)
        await asyncio.wait_for(asyncio.gather(running, *waits), BOUND)
        joined_large = next(rows for ids, rows in stepped.joins if large.id in ids)
        assert joined_large <= 1  # only once the 8-token job had left
        await batcher.stop()

    asyncio.run(main())


def test_check_admission_refuses_before_any_work_when_the_queue_alone_is_too_long() -> None:
    gate = threading.Event()

    def decode(thread: int, jobs: list[Job]) -> list[Any]:
        gate.wait(BOUND)
        return [result_of(job) for job in jobs]

    async def main() -> None:
        batcher = LocalBatcher(
            BatchPolicy(max_batch_size=2, max_wait_ms=HOUR_MS, admit_within=0.5), closed_batches(decode)
        )
        batcher.start()
        soon = time.monotonic() + 1.0
        batcher.check_admission(Priority.INTERACTIVE, soon)  # nothing measured, nothing queued
        batcher.rate.record(0.2, 10)  # 20 ms a token
        batcher.check_admission(Priority.INTERACTIVE, soon)  # nothing queued
        waits = [asyncio.ensure_future(batcher.submit(Job(tokens=[1] * 10))) for _ in range(5)]
        await wait_until(lambda: batcher.depth == 3)  # 30 tokens queued, 20 running: 0.8 s of work ahead
        with pytest.raises(WouldMissDeadlineError) as refused:
            batcher.check_admission(Priority.INTERACTIVE, soon)
        assert refused.value.retry_after > 0
        batcher.check_admission(Priority.INTERACTIVE, time.monotonic() + HOUR)  # a far deadline fits
        batcher.check_admission(Priority.SHADOW, soon)  # shadow work is refused by the queue itself
        gate.set()
        await asyncio.wait_for(asyncio.gather(*waits), BOUND)
        await batcher.stop()

    asyncio.run(main())
