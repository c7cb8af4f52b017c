"""A step load for Locust: more editors each step until the p99 passes an SLA (a saturation search).

    python -m locust -f loadtest/locustfile.py,loadtest/shapes.py --headless -H URL --csv PREFIX \\
        [--step-users 4 --step-factor 1.5 --max-steps 12 | --steps 10,30] [--step-time 30] \\
        [--step-settle 5] [--sla-p99-ms 300] [--sla-failures 0.01] [--sla-patience 2]

Step k runs ``--step-users * --step-factor ** k`` users (or the k-th of ``--steps``) for
``--step-time`` seconds. Its first ``--step-settle`` seconds (users starting, queues filling) are
left out; over the rest, every request's own latency is kept per request name (so per arm, as the
locustfile names them), and the step's row per name gives requests, failures, throughput and exact
p50/p95/p99 of the successful requests. A step is past the SLA when a name's p99 is over
``--sla-p99-ms`` or more than ``--sla-failures`` of its requests failed; the run stops after
``--sla-patience`` such steps in a row (one slow outlier among a step's few hundred requests is
its p99, so one step past the SLA may be noise), or after the last step. Rows go to
``PREFIX_steps.csv`` as each step ends (``loadtest/report.py`` reads them), and a line per name to
the log. The offered load of a step is its users over the mean think time
(``--think-time``): what they would send if every answer were instant.
"""

from __future__ import annotations

import csv
import logging
import math
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from locust import LoadTestShape, events

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
log = logging.getLogger("loadtest.steps")


@events.init_command_line_parser.add_listener
def _options(parser) -> None:
    group = parser.add_argument_group("step load (loadtest/shapes.py)")
    group.add_argument("--steps", default="", help="users per step, comma-separated (instead of the ladder)")
    group.add_argument("--step-users", type=int, default=4, help="users of the first step")
    group.add_argument("--step-factor", type=float, default=1.5, help="users grow by this factor per step")
    group.add_argument("--max-steps", type=int, default=12)
    group.add_argument("--step-time", type=float, default=30.0, help="seconds per step")
    group.add_argument("--step-settle", type=float, default=5.0, help="seconds left out at the start of a step")
    group.add_argument("--sla-p99-ms", type=float, default=300.0)
    group.add_argument("--sla-failures", type=float, default=0.01, help="largest share of failed requests")
    group.add_argument("--sla-patience", type=int, default=2, help="steps past the SLA in a row that end the run")


def ladder(steps: str, first: int, factor: float, count: int) -> list[int]:
    """Users per step: ``steps`` when given, else ``first`` growing by ``factor``, strictly increasing."""
    if steps:
        return [int(u) for u in steps.split(",")]
    users: list[int] = []
    for k in range(count):
        users.append(max(users[-1] + 1 if users else 1, math.ceil(first * factor**k - 1e-9)))
    return users


class StepLoad(LoadTestShape):
    """Steps of more users; stops once steps in a row break the SLA (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.index = -1
        self.window_start: float | None = None
        self.latencies: dict[tuple[str, str], list[float]] = defaultdict(list)
        self.failures: dict[tuple[str, str], int] = defaultdict(int)
        self.rows: list[dict[str, object]] = []
        self.past_sla = 0  # steps past the SLA in a row
        events.request.add_listener(self._record)

    def _record(self, request_type: str, name: str, response_time: float, exception: object, **_: object) -> None:
        if self.window_start is None:
            return
        if exception is None:
            self.latencies[(request_type, name)].append(response_time)
        else:
            self.failures[(request_type, name)] += 1

    def tick(self) -> tuple[int, float] | None:
        options = self.runner.environment.parsed_options
        users = ladder(options.steps, options.step_users, options.step_factor, options.max_steps)
        now = self.get_run_time()
        index = int(now // options.step_time)
        if index != self.index:
            if self.index >= 0:
                self._finish(options, users[self.index])
            if self.past_sla >= options.sla_patience or index >= len(users):
                return None
            self.index, self.window_start = index, None
        if self.window_start is None and now - index * options.step_time >= options.step_settle:
            self.latencies.clear()
            self.failures.clear()
            self.window_start = time.perf_counter()
        return users[index], float(users[index])

    def _finish(self, options, users: int) -> None:
        elapsed = time.perf_counter() - self.window_start if self.window_start is not None else 0.0
        think = getattr(options, "think_time", None)
        step_within = True
        for key in sorted(set(self.latencies) | set(self.failures)):
            times, failed = self.latencies.get(key, []), self.failures.get(key, 0)
            p50, p95, p99 = np.percentile(times, [50, 95, 99]) if times else (math.nan,) * 3
            total = len(times) + failed
            within = p99 <= options.sla_p99_ms and failed <= options.sla_failures * total
            step_within &= within
            row = {
                "step": self.index,
                "users": users,
                "offered_rps": users / think if think else math.nan,
                "type": key[0],
                "name": key[1],
                "requests": total,
                "failures": failed,
                "rps": total / elapsed if elapsed else math.nan,
                "p50_ms": float(p50),
                "p95_ms": float(p95),
                "p99_ms": float(p99),
                "max_ms": max(times) if times else math.nan,
                "within_sla": within,
            }
            self.rows.append(row)
            log.info(
                "step %d, %d users: %s %s %.1f req/s, p50 %.1f p95 %.1f p99 %.1f ms, %d failed%s",
                self.index,
                users,
                *key,
                row["rps"],
                p50,
                p95,
                p99,
                failed,
                "" if within else f": past the SLA (p99 {options.sla_p99_ms:g} ms)",
            )
        self.past_sla = 0 if step_within else self.past_sla + 1
        if options.csv_prefix:
            with Path(f"{options.csv_prefix}_steps.csv").open("w", newline="") as out:
                writer = csv.DictWriter(out, STEP_COLUMNS)
                writer.writeheader()
                writer.writerows(self.rows)
