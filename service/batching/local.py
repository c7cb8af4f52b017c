"""The in-process transport: an asyncio queue drained by worker tasks, each with its own thread.

Each of ``workers`` worker tasks waits for jobs, lets the batch fill for up to ``max_wait_ms``
(counted from the oldest queued job, so a backlog is taken at once), takes a batch through the
policy and calls ``runner(worker_index, jobs)`` in the worker's dedicated thread, so a worker
can own its own inference session. While workers are busy, jobs accumulate and batches grow.
All bookkeeping happens on the event loop thread; only the runner runs elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from service.batching.batcher import (
    BatcherHooks,
    BatcherStoppedError,
    DeadlineExceededError,
    NullHooks,
    QueueFullError,
)
from service.batching.job import Job
from service.batching.policy import BatchPolicy, batch_ready, padded_tokens, ready_at, select_batch, split_expired
from service.batching.throughput import ThroughputMeter, suggest_retry_after

__all__ = ["LocalBatcher", "Runner"]

log = logging.getLogger(__name__)

Runner = Callable[[int, list[Job]], Sequence[Any]]
"""``runner(worker_index, jobs) -> results``: one result per job, in order. A result that is an
exception instance fails only its own job; raising fails the whole batch."""


@dataclass(eq=False)
class _Entry:
    future: asyncio.Future[Any]
    timer: asyncio.TimerHandle | None = None
    queued: bool = True  # still in the pending list (not taken, expired or dropped)


class LocalBatcher:
    """An asyncio auto-batching queue for one arm (see the module docstring).

    ``runner`` is called from worker ``i``'s own thread as ``runner(i, jobs)``; give each worker
    index its own engine/session. ``hooks`` receives the observations listed in
    ``BatcherHooks``; ``name`` labels them (use the backend/arm key).
    """

    def __init__(
        self,
        policy: BatchPolicy,
        runner: Runner,
        workers: int = 1,
        name: str = "default",
        hooks: BatcherHooks | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.policy = policy
        self.name = name
        self.workers = workers
        self._runner = runner
        self._hooks: BatcherHooks = hooks if hooks is not None else NullHooks()
        self._pending: list[Job] = []
        self._entries: dict[Job, _Entry] = {}
        self._in_flight = 0
        self._state = "new"  # new -> running -> stopping -> stopped
        self._draining = False
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._executors: list[ThreadPoolExecutor] = []
        self._meter = ThroughputMeter()
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

    def throughput(self) -> float:
        """Jobs completed per second over the last seconds."""
        return self._meter.rate()

    def start(self) -> None:
        if self._state != "new":
            raise RuntimeError(f"batcher {self.name!r} was already started")
        self._loop = asyncio.get_running_loop()
        for index in range(self.workers):
            executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{self.name}-worker{index}")
            self._executors.append(executor)
            task = self._loop.create_task(self._work(index, executor), name=f"{self.name}-worker{index}")
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

    def _admit(self, jobs: Sequence[Job]) -> list[_Entry]:
        """Check and enqueue ``jobs`` without yielding to the event loop: all of them or none, so
        concurrent requests cannot overfill the queue between the check and the enqueueing."""
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
        if len(self._pending) + len(jobs) > self.policy.max_queue:
            self._hook("on_reject", "queue_full")
            depth = len(self._pending)
            retry = suggest_retry_after(depth + self._in_flight + len(jobs), self._meter.rate())
            raise QueueFullError(depth, retry, self.name)
        entries = [self._enqueue(job, now) for job in jobs]
        self._changed()
        return entries

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
        """Forget a job's caller (idempotent). Normal completion: the worker already removed the
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
        callers of running batches) fails with ``BatcherStoppedError``; runner threads that are
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

    # -- workers ----------------------------------------------------------------------------

    async def _work(self, index: int, executor: ThreadPoolExecutor) -> None:
        while True:
            try:
                batch = await self._next_batch()
                if batch is None:
                    return
                await self._run(index, executor, batch)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not silently kill the worker
                log.exception("batcher %s worker %d failed; continuing", self.name, index)
                await asyncio.sleep(0.01)

    async def _next_batch(self) -> list[Job] | None:
        while True:
            stopping = self._state != "running"
            if stopping and (not self._draining or not self._pending):
                return None
            now = time.monotonic()
            live, expired = split_expired(self._pending, now)
            if expired:
                self._pending = live
                for job in expired:
                    self._fail(job, DeadlineExceededError(f"job {job.id} expired in the queue"), "deadline")
                self._changed(wake=False)
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

    async def _run(self, index: int, executor: ThreadPoolExecutor, batch: list[Job]) -> None:
        assert self._loop is not None
        taken = time.monotonic()
        for job in batch:
            entry = self._entries.get(job)
            if entry is not None:
                entry.queued = False
                if entry.timer is not None:
                    entry.timer.cancel()
            self._hook("on_queue_wait", taken - job.enqueued_at)
        self._in_flight += len(batch)
        self._changed(wake=False)
        self._hook("on_batch", len(batch), padded_tokens(batch))
        started = time.perf_counter()
        try:
            results = list(await self._loop.run_in_executor(executor, self._runner, index, batch))
        except asyncio.CancelledError:
            self._settle(batch, error=BatcherStoppedError(f"batcher {self.name!r} stopped while decoding"))
            raise
        except Exception as exc:
            self._hook("on_inference", time.perf_counter() - started, len(batch))
            self._hook("on_error", "runner")
            log.warning("batcher %s: runner failed on a batch of %d: %r", self.name, len(batch), exc)
            self._settle(batch, error=exc)
        else:
            self._hook("on_inference", time.perf_counter() - started, len(batch))
            if len(results) != len(batch):
                self._hook("on_error", "result_count")
                self._settle(batch, error=RuntimeError(f"runner returned {len(results)} results for {len(batch)} jobs"))
            else:
                self._settle(batch, results=results)
        finally:
            self._in_flight -= len(batch)
            self._meter.record(len(batch))
            self._changed(wake=False)

    # -- bookkeeping ------------------------------------------------------------------------

    def _settle(self, batch: list[Job], results: list[Any] | None = None, error: BaseException | None = None) -> None:
        for i, job in enumerate(batch):
            entry = self._entries.pop(job, None)
            if entry is None or entry.future.done():  # the caller went away
                continue
            outcome = error if results is None else results[i]
            if isinstance(outcome, BaseException):
                entry.future.set_exception(outcome)
            else:
                entry.future.set_result(outcome)

    def _fail(self, job: Job, error: BaseException, reason: str) -> None:
        entry = self._entries.pop(job, None)
        if entry is None:
            return
        entry.queued = False
        if entry.timer is not None:
            entry.timer.cancel()
        if not entry.future.done():
            entry.future.set_exception(error)
            self._hook("on_reject", reason)

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

    def _hook(self, method: str, *args: Any) -> None:
        try:
            getattr(self._hooks, method)(self.name, *args)
        except Exception:
            log.exception("batcher %s: hook %s failed", self.name, method)
