"""The in-process transport: an asyncio queue drained by decoding threads.

Each of ``threads`` decoding threads (a task on the event loop with a thread of its own) waits for jobs, lets the
batch fill for up to ``max_wait_ms`` (counted from the oldest queued job, so a backlog is taken at once), takes a
batch through the policy and advances its running batch with it in its own thread, so a thread can own its own
engine. While the threads are busy, jobs accumulate and batches grow. ``batches(thread_index)``
makes a thread's running batch (``service.batching.running``): a closed one decodes each batch to
the end; an iteration-level one keeps decoding the jobs it holds and takes queued jobs into its
free rows between passes, within the same batch and token budgets. All bookkeeping happens on the
event loop thread; only the running batch runs elsewhere.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from service.batching.admission import ServiceRate
from service.batching.batcher import (
    BatcherHooks,
    BatcherStoppedError,
    DeadlineExceededError,
    EvictedError,
    NullHooks,
    QueueFullError,
    WouldMissDeadlineError,
)
from service.batching.job import Job, Priority
from service.batching.policy import (
    BatchPolicy,
    batch_ready,
    effective_class,
    padded_tokens,
    ready_at,
    select_batch,
    split_expired,
)
from service.batching.running import ResultCountError, RunningBatch

__all__ = ["LocalBatcher"]

log = logging.getLogger(__name__)


@dataclass
class _Finished:
    """What a thread's running batch delivered during its current call."""

    jobs: int = 0
    tokens: int = 0
    abandoned: int = 0


@dataclass(eq=False)
class _Entry:
    future: asyncio.Future[Any]
    timer: asyncio.TimerHandle | None = None
    queued: bool = True  # still in the pending list (not taken, expired or dropped)


class LocalBatcher:
    """An asyncio auto-batching queue (see the module docstring).

    ``batches(i)`` makes decoding thread ``i``'s running batch, advanced in that thread: give each thread index
    its own engine. ``hooks`` receives the observations listed in ``BatcherHooks``; ``name`` labels them (the
    queue's name).
    """

    def __init__(
        self,
        policy: BatchPolicy,
        batches: Callable[[int], RunningBatch],
        threads: int = 1,
        name: str = "default",
        hooks: BatcherHooks | None = None,
    ) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self.policy = policy
        self.name = name
        self.threads = threads
        self._batches = batches
        self._running: dict[int, dict[Job, None]] = {}  # per thread: jobs its running batch holds
        self._wakes: list[threading.Event] = []
        self._hooks: BatcherHooks = hooks if hooks is not None else NullHooks()
        self._pending: list[Job] = []
        self._entries: dict[Job, _Entry] = {}
        self._in_flight = 0
        self._in_flight_tokens = 0
        self._state = "new"  # new -> running -> stopping -> stopped
        self._draining = False
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._executors: list[ThreadPoolExecutor] = []
        # Per thread: when its last batch ended, if work was waiting then (the gap to its next
        # batch is then part of the cost of serving a backlog: event-loop time, hand-offs).
        self._backlog_since: dict[int, float] = {}
        self._unrecorded: dict[int, float] = {}  # per thread: decoding time not yet in ``rate``
        self._finished: dict[int, _Finished] = {}
        self.rate = ServiceRate()
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- public surface ---------------------------------------------------------------------

    @property
    def depth(self) -> int:
        return len(self._pending)

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def running(self) -> bool:
        return self._state == "running"

    def estimated_wait(self, tokens: int = 0, priority: Priority = Priority.INTERACTIVE, jobs: int = 1) -> float:
        """Seconds before ``jobs`` more jobs of ``tokens`` tokens in all at ``priority`` would be done
        (0 until a batch is measured)."""
        if not self.rate.measured:
            return 0.0
        ahead = self._ahead(priority, time.monotonic())
        work = sum(job.length for job in ahead) + self._in_flight_tokens / 2 + tokens
        return self.rate.seconds_for(work, self.threads, self._batches_for(len(ahead) + jobs))

    def _ahead(self, priority: Priority, now: float) -> list[Job]:
        """The queued jobs a job at ``priority`` would wait for (same or better class)."""
        return [job for job in self._pending if effective_class(job, now, self.policy) <= int(priority)]

    def _batches_for(self, jobs: int) -> int:
        return math.ceil(jobs / self.policy.max_batch_size)

    def start(self) -> None:
        if self._state != "new":
            raise RuntimeError(f"batcher {self.name!r} was already started")
        self._loop = asyncio.get_running_loop()
        for index in range(self.threads):
            executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{self.name}-thread{index}")
            self._executors.append(executor)
            task = self._loop.create_task(self._work(index, executor), name=f"{self.name}-thread{index}")
            self._tasks.append(task)
        self._state = "running"

    async def submit(self, job: Job) -> Any:
        (entry,) = self._admit([job])
        return await self._wait(job, entry)

    async def submit_many(self, jobs: Sequence[Job]) -> list[Any]:
        """Queue all of ``jobs`` or none (one request's sentences are admitted together).

        Results come back in order; on the first failure the other jobs are withdrawn (queued
        ones leave the queue; running ones finish without a caller).
        """
        entries = self._admit(jobs)
        waits = [asyncio.ensure_future(self._wait(job, entry)) for job, entry in zip(jobs, entries, strict=True)]
        try:
            return list(await asyncio.gather(*waits))
        finally:
            for job, entry, wait in zip(jobs, entries, waits, strict=True):
                if not wait.done():
                    self._withdraw(job, entry)  # now, not when the cancelled task next runs
                    wait.cancel()

    def check_admission(self, priority: Priority, deadline: float) -> None:
        """See ``Batcher.check_admission`` (the same estimate as ``_admit``'s, for no work of its own)."""
        if self.policy.admit_within <= 0 or priority == Priority.SHADOW:
            return
        wait = self.estimated_wait(0, priority, 0)
        if wait > (deadline - time.monotonic()) * self.policy.admit_within:
            raise self._refuse(
                WouldMissDeadlineError, f"queue {self.name!r} needs about {wait:.2f} s for the work queued now"
            )

    def _admit(self, jobs: Sequence[Job]) -> list[_Entry]:
        """Check and enqueue ``jobs`` without yielding to the event loop: all of them or none, so
        concurrent requests cannot overfill the queue between the check and the enqueueing.

        Refused: past the bound (``QueueFullError``; served work first evicts queued shadow
        jobs), or when the work ahead and their own would take more than ``policy.admit_within``
        of the time left before their deadline (``WouldMissDeadlineError``), unless the queue is
        idle for them (nothing running, nothing queued at their priority or a better one). Shadow
        jobs only enter a queue that holds nothing else."""
        if self._state != "running" or self._loop is None:
            self._hook("on_reject", "stopped")
            raise BatcherStoppedError(f"batcher {self.name!r} is not running")
        now = time.monotonic()
        for job in jobs:
            if job in self._entries:
                raise ValueError(f"job {job.id} is already queued")
            if job.expired(now):
                self._hook("on_reject", "deadline")
                raise DeadlineExceededError(f"job {job.id} expired before it was queued")
        shadow = all(job.priority == Priority.SHADOW for job in jobs)
        if shadow:
            busy = any(job.priority != Priority.SHADOW for job in self._pending)
            if busy or len(self._pending) + len(jobs) > self.policy.shadow_capacity:
                raise self._refuse(QueueFullError, "shadow work waits for an idle queue")
        elif len(self._pending) + len(jobs) > self.policy.max_queue:
            self._evict_shadow(len(self._pending) + len(jobs) - self.policy.max_queue)
            if len(self._pending) + len(jobs) > self.policy.max_queue:
                raise self._refuse(QueueFullError)
        deadlines = [job.deadline for job in jobs if job.deadline is not None]
        priority = min(job.priority for job in jobs)
        idle = self._in_flight == 0 and not self._ahead(priority, now)  # nothing to wait for: never refused
        if deadlines and not shadow and not idle and self.policy.admit_within > 0:
            wait = self.estimated_wait(sum(job.length for job in jobs), priority, len(jobs))
            if wait > (min(deadlines) - now) * self.policy.admit_within:
                raise self._refuse(
                    WouldMissDeadlineError,
                    f"queue {self.name!r} needs about {wait:.2f} s for this work, past its deadline",
                )
        entries = [self._enqueue(job, now) for job in jobs]
        self._changed()
        return entries

    def _refuse(self, error: type[QueueFullError], detail: str = "") -> QueueFullError:
        self._hook("on_reject", error.reason)
        backlog = sum(job.length for job in self._pending) + self._in_flight_tokens
        batches = self._batches_for(len(self._pending))
        retry = self.rate.seconds_for(backlog, self.threads, batches) if self.rate.measured else 2.0
        return error(len(self._pending), retry, self.name, detail)

    def _evict_shadow(self, count: int) -> None:
        """Drop up to ``count`` queued shadow jobs, newest first, to make room for served work."""
        for job in sorted(
            (job for job in self._pending if job.priority == Priority.SHADOW), key=lambda job: job.age_key
        )[::-1][:count]:
            self._remove_pending(job)
            self._fail(job, EvictedError(f"shadow job {job.id} made room for served work"), "evicted")

    def _enqueue(self, job: Job, now: float) -> _Entry:
        assert self._loop is not None
        job.enqueued_at = now
        entry = _Entry(self._loop.create_future())
        if job.deadline is not None:
            entry.timer = self._loop.call_later(job.deadline - now, self._expire_queued, job)
        self._entries[job] = entry
        self._pending.append(job)
        return entry

    async def _wait(self, job: Job, entry: _Entry) -> Any:
        try:
            return await entry.future
        finally:
            self._withdraw(job, entry)

    def _withdraw(self, job: Job, entry: _Entry) -> None:
        """Forget a job's caller (idempotent). Normal completion: the thread already removed the
        job. Cancelled caller: drop the job if it is still queued; if it is running, its batch
        finishes without it."""
        if entry.timer is not None:
            entry.timer.cancel()
        if entry.queued and self._remove_pending(job):
            entry.queued = False
            # Dropped unrun: counted like the queue's own drops (the caller's deadline usually
            # fires together with the job's), or as a cancellation (the caller went away).
            self._hook("on_reject", "deadline" if job.expired(time.monotonic()) else "cancelled")
            self._changed()
        self._entries.pop(job, None)

    async def stop(self, drain: bool = True, timeout: float | None = None) -> None:
        """See ``Batcher.stop``. After ``timeout`` seconds, whatever is left (queued jobs and
        callers of running batches) fails with ``BatcherStoppedError``; decoding threads that are
        still busy finish in the background."""
        if self._state == "new":
            self._state = "stopped"
            return
        if self._state == "running":
            self._state = "stopping"
            self._draining = drain
            if not drain:
                self._fail_all_pending()
            self._wake.set()
        if self._tasks:
            _, late = await asyncio.wait(self._tasks, timeout=timeout)
            for task in late:
                task.cancel()
            if late:
                await asyncio.gather(*late, return_exceptions=True)
        self._fail_all_pending()
        for executor in self._executors:
            executor.shutdown(wait=False)
        self._state = "stopped"
        self._changed()

    # -- decoding threads -------------------------------------------------------------------

    async def _work(self, index: int, executor: ThreadPoolExecutor) -> None:
        current = self._batches(index)
        wake = threading.Event()
        self._wakes.append(wake)
        self._running[index] = {}
        while True:
            try:
                if current.active == 0:
                    batch = await self._next_batch()
                    if batch is None:
                        return
                else:
                    batch = self._take_into(index, current)
                await self._run(index, executor, current, batch, wake)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not silently kill the thread
                log.exception("batcher %s thread %d failed; continuing", self.name, index)
                await asyncio.sleep(0.01)

    def _take_into(self, index: int, current: RunningBatch) -> list[Job]:
        """Queued jobs for the free rows of thread ``index``'s running batch (none when it is
        full), chosen by the policy as a batch of that many rows would be, within the token budget
        left by the jobs it holds."""
        running = self._running[index]
        rows = self.policy.max_batch_size - current.active
        tokens = self.policy.max_batch_tokens - sum(job.length for job in running)
        now = time.monotonic()
        live = self._sweep_expired(now)
        if rows <= 0 or tokens <= 0 or not live:
            return []
        room = dataclasses.replace(self.policy, max_batch_size=rows, max_batch_tokens=tokens)
        selection = select_batch(live, now, room)
        if padded_tokens(selection.batch) > tokens:  # the anchor alone is over what is left: wait
            return []
        self._pending = selection.remaining
        return selection.batch

    def _sweep_expired(self, now: float) -> list[Job]:
        """Fail the queued jobs past their deadline; the live ones, in order."""
        live, expired = split_expired(self._pending, now)
        if expired:
            self._pending = live
            for job in expired:
                self._fail(job, DeadlineExceededError(f"job {job.id} expired in the queue"), "deadline")
            self._changed(wake=False)
        return live

    async def _next_batch(self) -> list[Job] | None:
        while True:
            stopping = self._state != "running"
            if stopping and (not self._draining or not self._pending):
                return None
            now = time.monotonic()
            live = self._sweep_expired(now)
            timeout: float | None = None
            if live:
                if stopping or batch_ready(live, now, self.policy, idle=self._in_flight == 0):
                    selection = select_batch(live, now, self.policy)
                    self._pending = selection.remaining
                    return selection.batch
                due = ready_at(live, self.policy)
                timeout = max(0.0, due - now) if due is not None else None
            self._wake.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._wake.wait()
            except TimeoutError:
                pass

    async def _run(
        self, index: int, executor: ThreadPoolExecutor, current: RunningBatch, batch: list[Job], wake: threading.Event
    ) -> None:
        loop = self._loop
        assert loop is not None
        taken = time.monotonic()
        running = self._running[index]
        for job in batch:
            entry = self._entries.get(job)
            if entry is not None:
                entry.queued = False
                if entry.timer is not None:
                    entry.timer.cancel()
            self._hook("on_queue_wait", taken - job.enqueued_at)
            running[job] = None
        self._in_flight += len(batch)
        self._in_flight_tokens += sum(job.length for job in batch)
        self._changed(wake=False)
        rows = current.active + len(batch)
        if batch:
            self._hook("on_batch", rows, padded_tokens(list(running)))
        wake.clear()
        finished = self._finished[index] = _Finished()

        def deliver(finished: list[tuple[Job, Any]]) -> None:  # in the decoding thread; settled in order on the loop
            if finished:  # a pass that finished nothing wakes nobody
                loop.call_soon_threadsafe(self._finish, index, finished)

        cpu = [0.0]  # the decoding thread's CPU seconds in this call

        def advance() -> None:  # in the decoding thread
            begun = time.thread_time()
            try:
                current.advance(batch, wake, deliver)
            finally:
                cpu[0] = time.thread_time() - begun

        started = time.perf_counter()
        gap = started - self._backlog_since.pop(index, started)
        try:
            await loop.run_in_executor(executor, advance)
        except asyncio.CancelledError:
            self._settle_all(running, BatcherStoppedError(f"batcher {self.name!r} stopped while decoding"))
            raise
        except Exception as exc:
            self._hook("on_inference", time.perf_counter() - started, rows, cpu[0])
            # the metric's reason "runner": a running batch raised (its label kept from before the name changed)
            self._hook("on_error", "result_count" if isinstance(exc, ResultCountError) else "runner")
            log.warning("batcher %s: a batch of %d failed: %r", self.name, rows, exc)
            self._settle_all(running, exc)
        else:
            elapsed = time.perf_counter() - started
            self._hook("on_inference", elapsed, rows, cpu[0])
            # A running batch's call may end with nothing finished (work was waiting to join): its time
            # counts towards the next call that finishes jobs, so the rate learnt is the real pace.
            spent = self._unrecorded.pop(index, 0.0) + elapsed + gap
            if not finished.jobs:
                self._unrecorded[index] = spent
            elif not finished.abandoned:
                self.rate.record(spent, finished.tokens)
        finally:
            if self._pending:
                self._backlog_since[index] = time.perf_counter()
            self._changed(wake=False)

    def _finish(self, index: int, delivered: list[tuple[Job, Any]]) -> None:
        """Jobs its thread's running batch delivered together (on the event loop, before the batch's call returns)."""
        running = self._running[index]
        finished = self._finished[index]
        for job, outcome in delivered:
            if job not in running:
                continue  # already failed with the rest of its running batch
            del running[job]
            self._in_flight -= 1
            self._in_flight_tokens -= job.length
            finished.jobs += 1
            finished.tokens += job.length
            if isinstance(outcome, DeadlineExceededError):  # the batch gave up on it: its caller was past its deadline
                finished.abandoned += 1
                self._hook("on_reject", "abandoned")
            self._settle(job, outcome)

    # -- bookkeeping ------------------------------------------------------------------------

    def _settle(self, job: Job, outcome: Any) -> None:
        entry = self._entries.pop(job, None)
        if entry is None or entry.future.done():  # the caller went away
            return
        if isinstance(outcome, BaseException):
            entry.future.set_exception(outcome)
        else:
            entry.future.set_result(outcome)

    def _settle_all(self, running: dict[Job, None], error: BaseException) -> None:
        """Fail every job a thread's running batch holds (it failed or the batcher stopped)."""
        for job in list(running):
            self._in_flight -= 1
            self._in_flight_tokens -= job.length
            self._settle(job, error)
        running.clear()

    def _fail(self, job: Job, error: BaseException, reason: str) -> None:
        entry = self._entries.pop(job, None)
        if entry is None:
            return
        entry.queued = False
        if entry.timer is not None:
            entry.timer.cancel()
        if not entry.future.done():  # else its caller went away this very turn, before it could withdraw
            entry.future.set_exception(error)
        self._hook("on_reject", reason)  # dropped all the same: counted here, once (the caller finds it gone)

    def _fail_all_pending(self) -> None:
        pending, self._pending = self._pending, []
        for job in pending:
            self._fail(job, BatcherStoppedError(f"batcher {self.name!r} stopped"), "stopped")
        if pending:
            self._changed(wake=False)

    def _expire_queued(self, job: Job) -> None:
        if self._remove_pending(job):
            self._fail(job, DeadlineExceededError(f"job {job.id} expired in the queue"), "deadline")
            self._changed(wake=False)

    def _remove_pending(self, job: Job) -> bool:
        for i, queued in enumerate(self._pending):
            if queued is job:
                del self._pending[i]
                return True
        return False

    def _changed(self, wake: bool = True) -> None:
        self._hook("on_depth", len(self._pending), self._in_flight)
        if wake:
            self._wake.set()
            if self._pending:
                for batch_wake in self._wakes:  # a running batch may make room for them
                    batch_wake.set()

    def _hook(self, method: str, *args: Any) -> None:
        try:
            getattr(self._hooks, method)(self.name, *args)
        except Exception:
            log.exception("batcher %s: hook %s failed", self.name, method)
