"""A step load's bookkeeping, apart from Locust (whose import patches the process with gevent): the users of
each step, the answers by when they came back, and a step's rows per request name against the SLA."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

STEP_COLUMNS = [
    "step",
    "users",
    "offered_rps",
    "type",
    "name",
    "requests",
    "failures",
    "rps",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
    "within_sla",
]


def ladder(steps: str, first: int, factor: float, count: int) -> list[int]:
    """Users per step: ``steps`` when given, else ``first`` growing by ``factor``, strictly increasing."""
    if steps:
        return [int(u) for u in steps.split(",")]
    users: list[int] = []
    for k in range(count):
        users.append(max(users[-1] + 1 if users else 1, math.ceil(first * factor**k - 1e-9)))
    return users


@dataclass(frozen=True)
class Sla:
    """What a step must keep to: every name's p99 and share of failed requests."""

    p99_ms: float
    failures: float


class Answers:
    """Every answer's run time, request type and name, and latency (None: failed), until its step is read."""

    def __init__(self) -> None:
        self.kept: list[tuple[float, tuple[str, str], float | None]] = []

    def add(self, at: float, request_type: str, name: str, latency_ms: float | None) -> None:
        self.kept.append((at, (request_type, name), latency_ms))

    def step(self, index: int, users: int, start: float, end: float, sla: Sla, think_s: float | None) -> list[dict]:
        """The rows of step ``index`` (``users`` running): one per request name answered from ``start`` to
        ``end`` (run times), sorted by type and name; the answers before ``end`` are dropped."""
        latencies: dict[tuple[str, str], list[float]] = defaultdict(list)
        failures: dict[tuple[str, str], int] = defaultdict(int)
        for at, key, latency in self.kept:
            if start <= at < end:
                if latency is None:
                    failures[key] += 1
                else:
                    latencies[key].append(latency)
        self.kept = [answer for answer in self.kept if answer[0] >= end]
        elapsed = max(end - start, 0.0)
        rows = []
        for key in sorted(set(latencies) | set(failures)):
            times, failed = latencies.get(key, []), failures.get(key, 0)
            p50, p95, p99 = np.percentile(times, [50, 95, 99]) if times else (math.nan,) * 3
            total = len(times) + failed
            rows.append(
                {
                    "step": index,
                    "users": users,
                    "offered_rps": users / think_s if think_s else math.nan,
                    "type": key[0],
                    "name": key[1],
                    "requests": total,
                    "failures": failed,
                    "rps": total / elapsed if elapsed else math.nan,
                    "p50_ms": float(p50),
                    "p95_ms": float(p95),
                    "p99_ms": float(p99),
                    "max_ms": max(times) if times else math.nan,
                    "within_sla": bool(p99 <= sla.p99_ms and failed <= sla.failures * total),
                }
            )
        return rows
