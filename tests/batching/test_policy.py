"""The batching policy as a pure function: budgets, conservation, priority, expiry, no starvation."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.batching.job import Job, Priority
from service.batching.policy import (
    BatchPolicy,
    batch_ready,
    effective_class,
    fits,
    padded_tokens,
    ready_at,
    select_batch,
)


def make_job(length: int, enqueued_at: float = 0.0, priority: Priority = Priority.INTERACTIVE, deadline=None) -> Job:
    return Job(tokens=list(range(length)), priority=priority, deadline=deadline, enqueued_at=enqueued_at)


jobs_strategy = st.lists(
    st.builds(
        make_job,
        length=st.integers(0, 40),
        enqueued_at=st.floats(0, 10, allow_nan=False),
        priority=st.sampled_from(list(Priority)),
        deadline=st.none() | st.floats(0, 20, allow_nan=False),
    ),
    max_size=40,
)
policy_strategy = st.builds(
    BatchPolicy,
    max_batch_size=st.integers(1, 10),
    max_batch_tokens=st.integers(1, 200),
    max_wait_ms=st.floats(0, 50, allow_nan=False),
    group_by_length=st.booleans(),
    fill_with_bulk=st.booleans(),
    promote_after_ms=st.none() | st.floats(0, 5000, allow_nan=False),
    shadow_batch_size=st.integers(1, 4),
)
now_strategy = st.floats(0, 20, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(jobs_strategy, now_strategy, policy_strategy)
def test_selection_invariants(pending: list[Job], now: float, policy: BatchPolicy) -> None:
    before = list(pending)
    sel = select_batch(pending, now, policy)
    assert pending == before  # pure: the input is not modified

    # Conservation: every job exactly once across batch, expired and remaining.
    out = [id(j) for j in sel.batch + sel.expired + sel.remaining]
    assert sorted(out) == sorted(id(j) for j in pending)

    # Expiry: exactly the jobs past their deadline, never batched.
    assert {id(j) for j in sel.expired} == {id(j) for j in pending if j.deadline is not None and j.deadline <= now}
    assert all(not j.expired(now) for j in sel.batch + sel.remaining)

    live = [j for j in pending if not j.expired(now)]
    if not live:
        assert sel.batch == []
        return

    # The anchor: the oldest job of the best effective class is always taken.
    cls = {id(j): effective_class(j, now, policy) for j in live}
    best = min(cls.values())
    shadow_batch = best == Priority.SHADOW

    # Budgets: size always (a shadow batch is small); tokens unless a single job alone exceeds them.
    rows = policy.shadow_batch_size if shadow_batch else policy.max_batch_size
    assert 1 <= len(sel.batch) <= rows
    assert padded_tokens(sel.batch) <= policy.max_batch_tokens or len(sel.batch) == 1
    # Shadow jobs are never promoted, and never share a batch with served work.
    assert all(cls[id(j)] == Priority.SHADOW for j in live if j.priority == Priority.SHADOW)
    assert shadow_batch or all(j.priority != Priority.SHADOW for j in sel.batch)
    anchor = min((j for j in live if cls[id(j)] == best), key=lambda j: j.age_key)
    assert any(j is anchor for j in sel.batch)

    # No starvation: the oldest live job is taken whenever it competes as interactive.
    oldest = min(live, key=lambda j: j.age_key)
    if cls[id(oldest)] == int(Priority.INTERACTIVE):
        assert any(j is oldest for j in sel.batch)

    if not policy.fill_with_bulk:
        assert all(cls[id(j)] == best for j in sel.batch)

    for left in sel.remaining:
        # Maximal: every left-out job that the policy could mix in would break a budget.
        mixable = cls[id(left)] == best or (
            policy.fill_with_bulk and best == Priority.INTERACTIVE and cls[id(left)] == Priority.BULK
        )
        if mixable:
            assert len(sel.batch) == rows or not fits([*sel.batch, left], policy)
        # Priority: a lower class is only in the batch if this better job could not fit.
        if any(cls[id(b)] > cls[id(left)] for b in sel.batch):
            better = [b for b in sel.batch if cls[id(b)] <= cls[id(left)]]
            assert not fits([*better, left], policy)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(1, 30), min_size=1, max_size=6),  # interactive arrivals per step
    st.integers(1, 4),
    st.floats(0, 300, allow_nan=False),
)
def test_bulk_job_is_never_starved_by_interactive_load(arrivals: list[int], size: int, promote_ms: float) -> None:
    policy = BatchPolicy(max_batch_size=size, max_batch_tokens=10_000, promote_after_ms=promote_ms)
    step = 0.05
    bulk = make_job(5, 0.0, Priority.BULK)
    pending = [bulk]
    now = 0.0
    served_at = None
    for i in range(400):
        now = (i + 1) * step
        # Sustained overload: more interactive arrivals than a batch can take.
        pending += [make_job(5, now, Priority.INTERACTIVE) for _ in range(arrivals[i % len(arrivals)] + size)]
        sel = select_batch(pending, now, policy)
        pending = sel.remaining
        if any(j is bulk for j in sel.batch):
            served_at = now
            break
    assert served_at is not None
    # Once promoted it is the oldest competing job, so it is served at the next step.
    assert served_at <= promote_ms / 1000.0 + step + 1e-9


def test_strict_priority_takes_interactive_first() -> None:
    policy = BatchPolicy(max_batch_size=2, max_batch_tokens=1000, promote_after_ms=None)
    bulk = [make_job(5, 0.0, Priority.BULK) for _ in range(3)]
    interactive = [make_job(5, 1.0), make_job(5, 2.0)]
    sel = select_batch(bulk + interactive, 100.0, policy)
    assert sel.batch == interactive


def test_bulk_fills_spare_room_only_when_allowed() -> None:
    inter = make_job(5, 1.0)
    bulk = make_job(5, 0.0, Priority.BULK)
    mixed = select_batch([bulk, inter], 1.0, BatchPolicy(max_batch_size=4, promote_after_ms=None))
    assert mixed.batch == [inter, bulk]
    pure = select_batch([bulk, inter], 1.0, BatchPolicy(max_batch_size=4, promote_after_ms=None, fill_with_bulk=False))
    assert pure.batch == [inter]
    assert pure.remaining == [bulk]


def test_groups_lengths_closest_to_the_oldest_job_unless_there_is_a_backlog() -> None:
    anchor = make_job(10, 0.0)
    others = [make_job(n, 1.0 + i) for i, n in enumerate([50, 12, 100, 9, 11, 30])]
    # Seven jobs, room for seven rows but 33 padded tokens: the closest lengths fit three.
    budget = {"max_batch_size": 7, "max_batch_tokens": 33}
    sel = select_batch([anchor, *others], 10.0, BatchPolicy(**budget))
    assert sorted(j.length for j in sel.batch) == [9, 10, 11]
    fifo = select_batch([anchor, *others], 10.0, BatchPolicy(**budget, group_by_length=False))
    assert [j.length for j in fifo.batch] == [10, 12]
    # More jobs than rows: oldest first, whatever their lengths.
    backlog = select_batch([anchor, *others], 10.0, BatchPolicy(max_batch_size=3, max_batch_tokens=10_000))
    assert [j.length for j in backlog.batch] == [10, 50, 12]


def test_token_budget_counts_padding() -> None:
    jobs = [make_job(10, 0.0), make_job(10, 1.0), make_job(40, 2.0)]
    sel = select_batch(jobs, 5.0, BatchPolicy(max_batch_size=8, max_batch_tokens=60))
    assert [j.length for j in sel.batch] == [10, 10]  # 3 rows x 40 = 120 > 60
    assert padded_tokens(sel.batch) == 20


def test_oversized_job_goes_alone() -> None:
    big = make_job(500, 0.0)
    small = make_job(3, 1.0)
    sel = select_batch([big, small], 2.0, BatchPolicy(max_batch_tokens=100))
    assert sel.batch == [big]
    assert sel.remaining == [small]


def test_expired_jobs_are_reported_not_batched() -> None:
    dead = make_job(5, 0.0, deadline=1.0)
    alive = make_job(5, 0.5, deadline=3.0)
    sel = select_batch([dead, alive], 1.0, BatchPolicy())
    assert sel.expired == [dead]
    assert sel.batch == [alive]


def test_readiness() -> None:
    policy = BatchPolicy(max_batch_size=3, max_batch_tokens=100, max_wait_ms=10)
    one = [make_job(5, 1.0)]
    assert ready_at(one, policy) == pytest.approx(1.01)
    assert not batch_ready(one, 1.005, policy)
    assert batch_ready(one, 1.01, policy)
    assert batch_ready([make_job(5, 1.0) for _ in range(3)], 1.0, policy)  # size reached
    assert batch_ready([make_job(60, 1.0), make_job(60, 1.0)], 1.0, policy)  # tokens reached
    assert not batch_ready([make_job(5, 1.0, deadline=0.5)], 2.0, policy)  # only expired jobs
    assert ready_at([], policy) is None


def test_policy_validation() -> None:
    for bad in ({"max_batch_size": 0}, {"max_batch_tokens": 0}, {"max_wait_ms": -1}, {"max_queue": 0}):
        with pytest.raises(ValueError):
            BatchPolicy(**bad)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=50), st.integers(1, 8), st.booleans())
def test_a_backlog_is_served_in_the_order_admission_counts_on(lengths: list[int], extra: int, group: bool) -> None:
    """Admission control counts every job queued before a new one as ahead of it, to be served in
    ``ceil(ahead / rows)`` batches; under a backlog, batches must not pass over older jobs in
    favour of newer ones of a closer length (the old length grouping did, and admitted requests
    then ran past their deadlines)."""
    rows = 8
    policy = BatchPolicy(max_batch_size=rows, max_batch_tokens=100_000, group_by_length=group)
    pending: list[Job] = []
    waited: dict[int, int] = {}  # job -> batches it was allowed to wait
    sizes, order = itertools.cycle(lengths), itertools.count()
    step = 0
    while step < 30 or pending:
        if step < 30:  # sustained overload: more arrivals than a batch takes
            for _ in range(rows + extra):
                job = make_job(next(sizes), enqueued_at=step + next(order) * 1e-6)
                waited[id(job)] = math.ceil((len(pending) + 1) / rows)
                pending.append(job)
        sel = select_batch(pending, float(step), policy)
        pending = sel.remaining
        for job in pending:
            waited[id(job)] -= 1
            assert waited[id(job)] > 0, "a job waited longer than the work that was ahead of it"
        step += 1
