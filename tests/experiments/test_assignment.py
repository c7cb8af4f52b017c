"""Bucket tables: shares follow the weights, and a weight change moves as few buckets as it must."""

from __future__ import annotations

import collections

from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from service.experiments.assignment import BUCKETS, bucket_of, initial_table, rebalance, target_counts

weights_strategy = st.lists(st.integers(0, 100), min_size=2, max_size=6).filter(lambda w: sum(w) > 0)


@settings(max_examples=300, deadline=None)
@given(weights_strategy)
def test_initial_table_gives_each_arm_its_share(weights: list[int]) -> None:
    table = initial_table(weights)
    counts = collections.Counter(table)
    assert len(table) == BUCKETS
    for arm, weight in enumerate(weights):
        assert abs(counts[arm] - BUCKETS * weight / sum(weights)) < 1


@settings(max_examples=300, deadline=None)
@given(weights_strategy, st.data())
def test_rebalance_moves_the_fewest_buckets(weights: list[int], data) -> None:
    table = initial_table(weights)
    for _ in range(3):  # a few changes in a row
        new_weights = data.draw(st.lists(st.integers(0, 100), min_size=len(weights), max_size=len(weights)))
        if sum(new_weights) == 0:
            continue
        new = rebalance(table, new_weights)
        targets = target_counts(new_weights)
        assert collections.Counter(new) == collections.Counter({a: c for a, c in enumerate(targets) if c})
        before = collections.Counter(table)
        minimal = sum(max(0, before[arm] - targets[arm]) for arm in range(len(weights)))
        moved = sum(a != b for a, b in zip(table, new, strict=True))
        assert moved == minimal
        # Users of an arm that did not shrink keep their arm.
        for bucket, (a, b) in enumerate(zip(table, new, strict=True)):
            if targets[a] >= before[a]:
                assert a == b, bucket
        table = new


def test_buckets_are_stable_and_uniform() -> None:
    assert bucket_of("ab", "user-1") == bucket_of("ab", "user-1")
    assert bucket_of("ab", "user-1") != bucket_of("other", "user-1") or bucket_of("ab", "u2") != bucket_of(
        "other", "u2"
    )
    counts = collections.Counter(bucket_of("ab", f"user-{i}") % 10 for i in range(20_000))
    assert stats.chisquare([counts[d] for d in range(10)]).pvalue > 0.001
    assert bucket_of("ab", "\ud800 lone surrogate") in range(BUCKETS)
