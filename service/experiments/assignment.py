"""Sticky, weighted assignment of users to arms through a table of buckets.

A user key (``client.user_id``, else ``client.session_id``) hashes, with the experiment's name,
to one of ``BUCKETS`` buckets; the bucket table says which arm owns each bucket. The first table
gives each arm a contiguous run of buckets in proportion to its weight. A weight change moves
only as many buckets as it must: arms over their new share give up their highest buckets, and
arms under it take exactly those, so a user changes arm only when the change requires it.
Requests without a key get a random bucket (weighted the same, but not sticky).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

__all__ = ["BUCKETS", "bucket_of", "initial_table", "rebalance", "target_counts"]

BUCKETS = 1000


def bucket_of(experiment: str, key: str) -> int:
    """The bucket of a user key in an experiment (stable across processes and restarts)."""
    digest = hashlib.blake2b(f"{experiment}\x1f{key}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % BUCKETS


def target_counts(weights: Sequence[float], buckets: int = BUCKETS) -> list[int]:
    """Buckets per arm in proportion to ``weights`` (largest remainder; the counts sum to ``buckets``)."""
    total = float(sum(weights))
    exact = [w * buckets / total for w in weights]
    counts = [int(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in by_remainder[: buckets - sum(counts)]:
        counts[i] += 1
    return counts


def initial_table(weights: Sequence[float], buckets: int = BUCKETS) -> list[int]:
    """Arm index per bucket: contiguous runs in arm order."""
    table: list[int] = []
    for arm, count in enumerate(target_counts(weights, buckets)):
        table += [arm] * count
    return table


def rebalance(table: Sequence[int], weights: Sequence[float]) -> list[int]:
    """A table for the new ``weights`` that differs from ``table`` in as few buckets as possible."""
    targets = target_counts(weights, len(table))
    owned: list[list[int]] = [[] for _ in weights]
    for bucket, arm in enumerate(table):
        owned[arm].append(bucket)
    released: list[int] = []
    for arm, buckets in enumerate(owned):
        surplus = len(buckets) - targets[arm]
        if surplus > 0:
            released += buckets[-surplus:]
    released.sort()
    new = list(table)
    for arm, buckets in enumerate(owned):
        for _ in range(targets[arm] - len(buckets)):
            new[released.pop(0)] = arm
    return new
