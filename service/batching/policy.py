"""Batching policy: which queued jobs form the next batch, and when a batch is worth taking.

Everything here is a pure function of (pending jobs, now, policy), shared by every transport.
A batch is chosen as follows:

1. jobs past their deadline are removed and reported as expired, never batched;
2. each live job gets an effective class: its priority, except that a bulk job that has waited
   ``promote_after_ms`` counts as interactive (so bulk work is never starved forever); shadow
   jobs are never promoted;
3. the anchor is the oldest job of the best class present: it is always in the batch, even
   when it alone exceeds the token budget (it then goes alone);
4. the batch is filled class by class (best first; bulk only if ``fill_with_bulk``; shadow
   jobs never join a batch of served work), within a class oldest first, adding every job that
   keeps both budgets: at most ``max_batch_size`` rows (``shadow_batch_size`` for a shadow
   batch, so that served work arriving meanwhile waits for a short batch only) and at most
   ``max_batch_tokens`` padded tokens (rows x longest row). With ``group_by_length``, jobs are
   taken by closeness of length to the anchor instead, but only while the live jobs number no
   more than the batch's rows: under a backlog, passing over an older job for a newer one of a
   closer length would make it wait longer than the work queued ahead of it, which is what
   admission control counts on (``service.batching.admission``), and admitted requests would
   run past their deadlines.

The result is maximal: every live job left out of the batch either would break a budget if
added, or belongs to a class the policy does not mix in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from service.batching.job import Job, Priority

__all__ = [
    "BatchPolicy",
    "Selection",
    "batch_ready",
    "effective_class",
    "fits",
    "padded_tokens",
    "ready_at",
    "select_batch",
    "split_expired",
]


@dataclass(frozen=True)
class BatchPolicy:
    """Knobs of one queue.

    ``max_wait_ms``: how long the oldest queued job may wait for the batch to fill before the
    batch is taken anyway. ``max_queue``: the bound on queued (not yet running) jobs; beyond
    it submissions are rejected. ``promote_after_ms``: age after which a bulk job competes as
    interactive (None: strict priority, bulk may starve under sustained interactive load).
    ``dispatch_when_idle``: when no batch of this queue is running, take what is queued at once
    instead of waiting for it to fill (waiting cannot beat an idle decoding thread); under load,
    jobs gather while the decoding threads are busy and ``max_wait_ms`` bounds the rest. Shadow jobs are
    admitted only while the queue holds nothing else and fewer than ``shadow_queue_share`` of
    ``max_queue`` jobs; served work evicts them when it needs their room. ``admit_within``: the
    share of the time left before a job's deadline that the work queued ahead of it (and its own)
    may be estimated to take; the rest is headroom for what the estimate cannot see (a burst of
    requests slows decoding down while it is being admitted, and answers still need assembling); 0
    turns this refusal off (the bound and the deadlines still hold). A queue idle for the work
    (nothing running, nothing queued ahead) admits it whatever the estimate.
    """

    max_batch_size: int = 32
    max_batch_tokens: int = 8192
    max_wait_ms: float = 5.0
    max_queue: int = 1024
    group_by_length: bool = True
    fill_with_bulk: bool = True
    promote_after_ms: float | None = 2000.0
    dispatch_when_idle: bool = True
    shadow_batch_size: int = 4
    shadow_queue_share: float = 0.25
    admit_within: float = 0.5

    def __post_init__(self) -> None:
        if self.max_batch_size < 1:
            raise ValueError("max_batch_size must be at least 1")
        if self.max_batch_tokens < 1:
            raise ValueError("max_batch_tokens must be at least 1")
        if self.max_wait_ms < 0:
            raise ValueError("max_wait_ms must not be negative")
        if self.max_queue < 1:
            raise ValueError("max_queue must be at least 1")
        if self.promote_after_ms is not None and self.promote_after_ms < 0:
            raise ValueError("promote_after_ms must not be negative")
        if self.shadow_batch_size < 1 or not 0 < self.shadow_queue_share <= 1:
            raise ValueError("need shadow_batch_size >= 1 and 0 < shadow_queue_share <= 1")
        if not 0 <= self.admit_within <= 1:
            raise ValueError("admit_within must be in [0, 1]")

    @property
    def shadow_capacity(self) -> int:
        """Most shadow jobs the queue holds."""
        return max(1, int(self.max_queue * self.shadow_queue_share))

    @property
    def max_wait_s(self) -> float:
        return self.max_wait_ms / 1000.0


@dataclass(frozen=True)
class Selection:
    """The outcome of one policy step; ``batch + expired + remaining`` is the input, reordered."""

    batch: list[Job]
    expired: list[Job]
    remaining: list[Job]  # live jobs left queued, in their input order


def padded_tokens(jobs: Sequence[Job]) -> int:
    """Tokens a batch costs once padded: rows x longest row."""
    return len(jobs) * max((job.length for job in jobs), default=0)


def fits(jobs: Sequence[Job], policy: BatchPolicy) -> bool:
    """True when ``jobs`` respect both the size and the padded-token budgets."""
    return len(jobs) <= policy.max_batch_size and padded_tokens(jobs) <= policy.max_batch_tokens


def effective_class(job: Job, now: float, policy: BatchPolicy) -> int:
    """The priority a job competes with now: bulk jobs are promoted once they are old enough."""
    if job.priority in (Priority.INTERACTIVE, Priority.SHADOW):
        return int(job.priority)
    if policy.promote_after_ms is not None and now - job.enqueued_at >= policy.promote_after_ms / 1000.0:
        return int(Priority.INTERACTIVE)
    return int(job.priority)


def split_expired(pending: Iterable[Job], now: float) -> tuple[list[Job], list[Job]]:
    """(live, expired), each in input order."""
    live: list[Job] = []
    expired: list[Job] = []
    for job in pending:
        (expired if job.expired(now) else live).append(job)
    return live, expired


def ready_at(pending: Sequence[Job], policy: BatchPolicy) -> float | None:
    """When the oldest job will have waited ``max_wait_ms`` (None when nothing is queued)."""
    if not pending:
        return None
    return min(job.enqueued_at for job in pending) + policy.max_wait_s


def batch_ready(pending: Sequence[Job], now: float, policy: BatchPolicy, idle: bool = False) -> bool:
    """True when waiting longer cannot help: the queue's workers are all ``idle`` (with
    ``dispatch_when_idle``), enough rows or tokens are queued, or the oldest live job has
    waited ``max_wait_ms``. Expired jobs do not count."""
    live, _ = split_expired(pending, now)
    if not live:
        return False
    if idle and policy.dispatch_when_idle:
        return True
    if len(live) >= policy.max_batch_size:
        return True
    if sum(job.length for job in live) >= policy.max_batch_tokens:
        return True
    oldest = ready_at(live, policy)
    return oldest is not None and now >= oldest


def select_batch(pending: Sequence[Job], now: float, policy: BatchPolicy) -> Selection:
    """The next batch from ``pending`` (not modified), the expired jobs, and what remains."""
    live, expired = split_expired(pending, now)
    if not live:
        return Selection(batch=[], expired=expired, remaining=[])
    classes: dict[int, list[Job]] = {}
    for job in live:
        classes.setdefault(effective_class(job, now, policy), []).append(job)
    order = sorted(classes)
    anchor = min(classes[order[0]], key=lambda job: job.age_key)
    chosen: list[Job] = [anchor]
    chosen_ids = {id(anchor)}
    longest = anchor.length
    rows = policy.shadow_batch_size if order[0] == Priority.SHADOW else policy.max_batch_size
    mixed = [cls for cls in order[1:] if cls == Priority.BULK and policy.fill_with_bulk]
    backlog = len(live) > rows
    for cls in [order[0], *mixed]:
        if len(chosen) >= rows:
            break
        if policy.group_by_length and not backlog:
            candidates = sorted(classes[cls], key=lambda job: (abs(job.length - anchor.length), job.age_key))
        else:
            candidates = sorted(classes[cls], key=lambda job: job.age_key)
        for job in candidates:
            if len(chosen) >= rows:
                break
            if id(job) in chosen_ids:
                continue
            widest = max(longest, job.length)
            if (len(chosen) + 1) * widest <= policy.max_batch_tokens:
                chosen.append(job)
                chosen_ids.add(id(job))
                longest = widest
    remaining = [job for job in live if id(job) not in chosen_ids]
    return Selection(batch=chosen, expired=expired, remaining=remaining)
