"""Bucket tables: shares follow the weights, and a weight change moves as few buckets as it must."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

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


ROOT = Path(__file__).resolve().parents[2]
# Keys as clients send them: ids, e-mail addresses, other scripts, a lone surrogate (JSON's "\ud800").
KEYS = [f"user-{i}" for i in range(200)] + ["anne@example.com", "Zoë", "用户-7", "😀", "\ud800 lone surrogate", ""]
WEIGHTS = [50, 30, 20]

# Run in a fresh interpreter: the buckets and arms of the keys read from stdin, and, as a control, what a
# bucket taken from Python's salted ``hash()`` would be there.
CHILD = """
import json, sys
from {bucket_module} import {bucket_name} as bucket_of
from {table_module} import {table_name} as initial_table
experiment, keys, weights = json.load(sys.stdin)
buckets = [bucket_of(experiment, key) for key in keys]
table = initial_table(weights)
salted = [hash(experiment + chr(31) + key) % len(table) for key in keys]
print(json.dumps({{"buckets": buckets, "arms": [table[b] for b in buckets], "salted": salted}}))
"""


def assignments_in_another_process(
    hash_seed: str, experiment: str, bucket: Callable[[str, str], int] = bucket_of, table=initial_table
) -> dict[str, list[int]]:
    """``bucket``'s buckets and the arms ``table`` gives them, computed in a new Python process whose
    ``PYTHONHASHSEED`` is ``hash_seed`` (so its ``hash()`` of a str differs from this process's)."""
    code = CHILD.format(
        bucket_module=bucket.__module__,
        bucket_name=bucket.__name__,
        table_module=table.__module__,
        table_name=table.__name__,
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps([experiment, KEYS, WEIGHTS]),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def test_assignment_is_the_same_in_every_process() -> None:
    """A user keeps their arm across replicas and restarts: buckets and arms computed in two other processes,
    with different hash seeds, are the ones computed here. A bucket taken from Python's ``hash()`` would differ
    between those processes (the control), so this fails for it."""
    experiment = "accelerated-vs-autoregressive"
    table = initial_table(WEIGHTS)
    here = [bucket_of(experiment, key) for key in KEYS]
    first, second = (assignments_in_another_process(seed, experiment) for seed in ("1", "2"))
    assert first["salted"] != second["salted"], "the two processes hash alike: this test would not see hash()"
    for there in (first, second):
        assert there["buckets"] == here
        assert there["arms"] == [table[b] for b in here]
    assert len(set(here)) > len(KEYS) // 2  # and the buckets are not all one
