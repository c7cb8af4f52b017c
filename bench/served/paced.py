"""An open-loop load on a fixed schedule, sent by Locust's ``FastHttpUser`` in a process of its own.

    python -m bench.served.paced --url http://127.0.0.1:8000 --texts paragraphs.txt --rate 132 \\
        --duration 60 [--start-at UNIX_TIME] [--users 400] [--user-ids 300] [--seed 1] [--api-key KEY ...] \\
        --out load.json

The arrival times of a Poisson stream at ``--rate`` are drawn up front; each of ``--users`` Locust
users takes the next arrival as soon as it is free, sleeps until it and sends ``POST /v1/correct``
with the next request body (built before the run, one per arrival: text ``i mod len(texts)`` from one
of ``--user-ids`` stable ``client.user_id`` values drawn at random, so an experiment's sticky
assignment holds; no JSON is made or parsed while sending). So
the server's speed does not slow the offered load down (a closed loop would hide overload) as long
as a user is free; when none is, or the process lacks CPU, the request goes late, and that lag is
measured: every request's scheduled time, send lag, status, latency, ``Retry-After`` and serving arm
(the ``X-Gecserve-Arm`` header) are written to ``--out`` with the process's CPU time. With
``--api-key``, request ``i`` carries key ``i mod len(keys)`` as ``Authorization: Bearer``. Only ever
run as a program (``bench.served.openloop`` runs it): importing Locust patches the standard library for
gevent, which the drill and the tests must not get.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gevent
from locust import FastHttpUser, constant, task
from locust.env import Environment
from locust.exception import StopUser

SPAWN_LEAD_S = 2.0  # users are spawned before the first arrival
DRAIN_S = 30.0  # after the last arrival, how long answers are awaited


@dataclass
class Schedule:
    """The arrivals (seconds from ``t0`` on ``time.time()``), the bodies, and what happened to each."""

    t0: float
    arrivals: list[float]
    bodies: list[bytes]
    keys: list[str]
    records: list[dict[str, Any]] = field(default_factory=list)
    taken: int = 0

    def take(self) -> int | None:
        """The next arrival's index (greenlets are cooperative: no lock needed), None once all are taken."""
        if self.taken >= len(self.arrivals):
            return None
        self.taken += 1
        return self.taken - 1

    def headers(self, index: int) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.keys:
            headers["authorization"] = f"Bearer {self.keys[index % len(self.keys)]}"
        return headers


class PacedUser(FastHttpUser):
    """Sends the schedule's next arrival when it is due."""

    wait_time = constant(0)
    schedule: Schedule  # set before the run
    network_timeout = 60.0

    @task
    def send(self) -> None:
        schedule = self.schedule
        index = schedule.take()
        if index is None:
            raise StopUser()
        due = schedule.t0 + schedule.arrivals[index]
        gevent.sleep(max(0.0, due - time.time()))
        sent = time.time()
        body = schedule.bodies[index]
        with self.client.post(
            "/v1/correct", data=body, headers=schedule.headers(index), name="correct", catch_response=True
        ) as response:
            response.success()  # refusals are the drill's subject, not failures of the load
            status = response.status_code
            retry_after = response.headers.get("retry-after") if response.headers else None
            arm = response.headers.get("x-gecserve-arm") if response.headers else None
        schedule.records.append(
            {
                "at_s": schedule.arrivals[index],
                "lag_s": sent - due,
                "seconds": time.time() - sent,
                "status": status,
                "retry_after": retry_after,
                "arm": arm,
            }
        )


def arrivals(rate: float, duration: float, seed: int) -> list[float]:
    """A Poisson stream's arrival times in [0, ``duration``)."""
    rng = random.Random(seed)
    times, at = [], rng.expovariate(rate)
    while at < duration:
        times.append(at)
        at += rng.expovariate(rate)
    return times


def bodies(texts: list[str], count: int, user_ids: int, seed: int) -> list[bytes]:
    """``count`` ``/v1/correct`` bodies: body ``i`` holds text ``i mod len(texts)`` and one of ``user_ids``
    user ids, drawn at random."""
    rng = random.Random(seed)
    return [
        json.dumps({"text": texts[i % len(texts)], "client": {"user_id": f"user-{rng.randrange(user_ids)}"}}).encode()
        for i in range(count)
    ]


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(url: str, schedule: Schedule, users: int) -> dict[str, Any]:
    """Send ``schedule`` to ``url`` with ``users`` Locust users; the records and the send figures."""
    PacedUser.schedule = schedule
    environment = Environment(user_classes=[PacedUser], host=url)
    runner = environment.create_local_runner()
    cpu, started = _cpu_s(), time.time()
    runner.start(users, spawn_rate=users / (SPAWN_LEAD_S / 2))
    last = schedule.t0 + (schedule.arrivals[-1] if schedule.arrivals else 0.0)
    while len(schedule.records) < len(schedule.arrivals) and time.time() < last + DRAIN_S:
        gevent.sleep(0.1)
    runner.quit()
    return {
        "scheduled": len(schedule.arrivals),
        "answered": len(schedule.records),
        "sending_s": max((r["at_s"] + r["lag_s"] for r in schedule.records), default=0.0),  # from t0 to the last send
        "cpu_s": _cpu_s() - cpu,
        "elapsed_s": time.time() - started,
        "records": schedule.records,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.served.paced", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", required=True)
    parser.add_argument("--texts", type=Path, required=True, help="one request text per line")
    parser.add_argument("--rate", type=float, required=True, help="requests per second")
    parser.add_argument("--duration", type=float, required=True, help="seconds of sending")
    parser.add_argument("--start-at", type=float, default=None, help="first second of the schedule (Unix time)")
    parser.add_argument("--users", type=int, default=400, help="Locust users: at most this many requests in flight")
    parser.add_argument("--user-ids", type=int, default=300, help="distinct client.user_id values")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--api-key", action="append", default=[], help="send these keys, in turn")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    texts = args.texts.read_text().splitlines()
    t0 = args.start_at if args.start_at is not None else time.time() + SPAWN_LEAD_S
    times = arrivals(args.rate, args.duration, args.seed)
    schedule = Schedule(t0, times, bodies(texts, len(times), args.user_ids, args.seed), args.api_key)
    result = run(args.url, schedule, args.users)
    args.out.write_text(json.dumps({"rate": args.rate, "duration": args.duration, **result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
