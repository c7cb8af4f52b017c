"""A step load for Locust: more editors each step until the p99 passes an SLA (a saturation search).

    python -m locust -f bench/served/locustfile.py,bench/served/shapes.py --headless -H URL --csv PREFIX \\
        [--step-users 4 --step-factor 1.5 --max-steps 12 | --steps 10,30] [--step-time 30] \\
        [--step-settle 5] [--sla-p99-ms 300] [--sla-failures 0.01] [--sla-patience 2]

Step k runs ``--step-users * --step-factor ** k`` users (or the k-th of ``--steps``) for
``--step-time`` seconds. Its first ``--step-settle`` seconds (users starting, queues filling) are
left out; over the rest, until the tick that sees the step end (however late: the step's users ran
until then), every answer's own latency is kept per request name (so per arm, as the locustfile
names them), and the step's row per name gives requests, failures, throughput and exact
p50/p95/p99 of the successful requests. A step is past the SLA when a name's p99 is over
``--sla-p99-ms`` or more than ``--sla-failures`` of its requests failed; the run stops after
``--sla-patience`` such steps in a row (one slow outlier among a step's few hundred requests is
its p99, so one step past the SLA may be noise; a step in which no answer came back counts neither
way), or after the last step. Rows go to ``PREFIX_steps.csv`` as each step ends
(``bench/served/report.py`` reads them), and a line per name to the log. The offered load of a step is
its users over the mean think time (``--think-time``): what they would send if every answer were
instant.
"""

from __future__ import annotations

import csv
import logging
from pathlib import Path

from locust import LoadTestShape, events

from bench.served.steps import STEP_COLUMNS, Answers, Sla, ladder

log = logging.getLogger("bench.served.steps")


@events.init_command_line_parser.add_listener
def _options(parser) -> None:
    group = parser.add_argument_group("step load (bench/served/shapes.py)")
    group.add_argument("--steps", default="", help="users per step, comma-separated (instead of the ladder)")
    group.add_argument("--step-users", type=int, default=4, help="users of the first step")
    group.add_argument("--step-factor", type=float, default=1.5, help="users grow by this factor per step")
    group.add_argument("--max-steps", type=int, default=12)
    group.add_argument("--step-time", type=float, default=30.0, help="seconds per step")
    group.add_argument("--step-settle", type=float, default=5.0, help="seconds left out at the start of a step")
    group.add_argument("--sla-p99-ms", type=float, default=300.0)
    group.add_argument("--sla-failures", type=float, default=0.01, help="largest share of failed requests")
    group.add_argument("--sla-patience", type=int, default=2, help="steps past the SLA in a row that end the run")


class StepLoad(LoadTestShape):
    """Steps of more users; stops once steps in a row break the SLA (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.index = -1
        self.step_start = 0.0  # run time at which this step's users were asked for
        self.answers = Answers()
        self.rows: list[dict[str, object]] = []
        self.past_sla = 0  # steps past the SLA in a row
        events.request.add_listener(self._record)

    def _record(self, request_type: str, name: str, response_time: float, exception: object, **_: object) -> None:
        latency = response_time if exception is None else None
        self.answers.add(self.get_run_time(), request_type, name, latency)

    def tick(self) -> tuple[int, float] | None:
        options = self.runner.environment.parsed_options
        users = ladder(options.steps, options.step_users, options.step_factor, options.max_steps)
        now = self.get_run_time()
        index = int(now // options.step_time)
        if index != self.index:
            if self.index >= 0:
                self._finish(options, users[self.index], now)
            if self.past_sla >= options.sla_patience or index >= len(users):
                return None
            self.index, self.step_start = index, now
        return users[index], float(users[index])

    def _finish(self, options, users: int, now: float) -> None:
        sla = Sla(options.sla_p99_ms, options.sla_failures)
        think = getattr(options, "think_time", None)
        start = self.step_start + options.step_settle
        rows = self.answers.step(self.index, users, start, now, sla, think)
        for row in rows:
            log.info(
                "step %d, %d users: %s %s %.1f req/s, p50 %.1f p95 %.1f p99 %.1f ms, %d failed%s",
                self.index,
                users,
                row["type"],
                row["name"],
                row["rps"],
                row["p50_ms"],
                row["p95_ms"],
                row["p99_ms"],
                row["failures"],
                "" if row["within_sla"] else f": past the SLA (p99 {options.sla_p99_ms:g} ms)",
            )
        if rows:
            self.past_sla = 0 if all(row["within_sla"] for row in rows) else self.past_sla + 1
        else:
            log.warning(
                "step %d, %d users: no answer in %.1f s, the step counts neither way", self.index, users, now - start
            )
        self.rows += rows
        if options.csv_prefix:
            with Path(f"{options.csv_prefix}_steps.csv").open("w", newline="") as out:
                writer = csv.DictWriter(out, STEP_COLUMNS)
                writer.writeheader()
                writer.writerows(self.rows)
