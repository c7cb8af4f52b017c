"""``gecserve bench serve``: closed-loop load against a running server, percentiles per backend.

    gecserve bench serve --url http://127.0.0.1:8000 --input dev.txt \\
        [--concurrency 1,8,32] [--backend accelerated,autoregressive] [--requests 400] [--json OUT]
    gecserve bench serve --spawn models/gec-default --input dev.txt ...   # starts its own server
    gecserve bench serve ... --peer-ct2 runs/gec-default-hf   # and the FastAPI + CTranslate2 peer beside it

Each of ``concurrency`` clients sends one request (one line of the input as ``text``), waits
for the answer, and sends the next: a closed loop. Lines are taken in order without repeats
within a run, so run the server with ``GECSERVE_CACHE_SIZE=0`` (or enough distinct lines) to
measure decoding rather than the cache. ``--spawn MODEL`` starts ``gecserve serve`` on free ports
with the cache off (other ``GECSERVE_*`` variables pass through), runs, and stops it. Prints
p50/p95/p99 latency and throughput per backend and concurrency, with the server's CPU milliseconds per answered
request (``cpu_ms_per_req``: the process's and its children's user + system time over the run, with ``--spawn`` or
``--server-pid``; ``client_cpu_ms_per_req``, the load generator's own, which shares the machine) and its event
loop's mean lag over the run (``loop_lag_mean_ms``, from its ``/metrics``).
``--peer-ct2 HF_DIR`` also starts ``bench/served/peer_server.py`` (FastAPI + uvicorn, Bling Fire, CTranslate2 int8
greedy on the same weights, made by ``make runs/gec-default-hf``) on a free port and runs the same loop against it
at each concurrency, after the service's backends and on the lines the first of them read: rows ``fastapi+ct2``, and
``req_per_s_vs_peer``, each service row's throughput over the peer's at its concurrency. Locust (``locustfile.py``)
measures the same from outside at scale.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from tqdm import tqdm

from bench.latency import input_lines, latency_summary
from bench.served.spawn import cpu_seconds, start_peer_ct2, start_server
from service.engine.report import table, write_json

COLUMNS = [
    "backend",
    "concurrency",
    "requests",
    "errors",
    "req_per_s",
    "cpu_ms_per_req",
    "client_cpu_ms_per_req",
    "loop_lag_mean_ms",
    "mean_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
]
LOOP_LAG = "gecserve_event_loop_lag_distribution_seconds"  # the server's histogram of its event loop's lag
PEER = "fastapi+ct2"  # the backend column of the peer's rows


async def closed_loop(
    url: str,
    lines: list[str],
    backend: str | None,
    concurrency: int,
    requests: int,
    progress: tqdm,
    latencies: list[float] | None = None,
    cpu: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """``requests`` requests from ``concurrency`` clients (``backend`` None: the server's choice).
    The row has the client's latency percentiles and the mean of each stage the server timed; each
    successful request's latency (seconds) is also appended to ``latencies`` when given. With ``cpu`` (the
    server's CPU seconds so far) the row has the server's CPU milliseconds per answered request; from a server
    that exports ``gecserve_event_loop_lag_distribution_seconds``, the loop's mean lag over the run."""
    latencies = [] if latencies is None else latencies
    first = len(latencies)
    cpu_before = cpu() if cpu is not None else 0.0
    client_cpu_before = time.process_time()
    lag_before = await _loop_lag(url)
    stages: dict[str, float] = {}
    errors: dict[str, int] = {}
    cursor = iter(range(requests))

    async def client(http: httpx.AsyncClient) -> None:
        for index in cursor:
            payload: dict[str, Any] = {"text": lines[index % len(lines)]}
            if backend is not None:
                payload["options"] = {"backend": backend}
            started = time.perf_counter()
            try:
                response = await http.post(f"{url}/v1/correct", json=payload)
                status = str(response.status_code)
            except httpx.HTTPError as error:
                status = type(error).__name__
            if status == "200":
                latencies.append(time.perf_counter() - started)
                for stage, ms in response.json().get("timings_ms", {}).items():  # the peer's answers have none
                    stages[stage] = stages.get(stage, 0.0) + ms
            else:
                errors[status] = errors.get(status, 0) + 1
            progress.update(1)

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        started = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    answered = len(latencies) - first
    cpu_ms = 1000 * (cpu() - cpu_before) / answered if cpu is not None and answered else None
    client_cpu_ms = 1000 * (time.process_time() - client_cpu_before) / max(1, answered)
    lag_ms = loop_lag_ms(lag_before, await _loop_lag(url))
    return {
        "backend": backend,
        "concurrency": concurrency,
        "requests": requests,
        "errors": sum(errors.values()),
        "error_codes": errors,
        "req_per_s": answered / elapsed,
        "cpu_ms_per_req": cpu_ms,
        "client_cpu_ms_per_req": client_cpu_ms,
        "loop_lag_mean_ms": lag_ms,
        **latency_summary(latencies[first:]),
        "server_stages_ms": {stage: total / max(1, len(latencies) - first) for stage, total in stages.items()},
    }


async def _loop_lag(url: str) -> tuple[float, float]:
    """The server's loop lag histogram now: (sum of the lags in seconds, their count); (0, 0) when it has none."""
    async with httpx.AsyncClient(timeout=10) as http:
        try:
            response = await http.get(f"{url}/metrics")
        except httpx.HTTPError:
            return 0.0, 0.0
    if response.status_code != 200:  # the peer has no metrics
        return 0.0, 0.0
    samples = {
        sample.name: sample.value
        for family in text_string_to_metric_families(response.text)
        if family.name == LOOP_LAG
        for sample in family.samples
    }
    return samples.get(f"{LOOP_LAG}_sum", 0.0), samples.get(f"{LOOP_LAG}_count", 0.0)


def loop_lag_ms(before: tuple[float, float], after: tuple[float, float]) -> float | None:
    """The loop's mean lag in milliseconds between two reads of its histogram (``_loop_lag``); None when the
    server measured none in between (it exports no such series)."""
    (sum_before, count_before), (sum_after, count_after) = before, after
    return 1000 * (sum_after - sum_before) / (count_after - count_before) if count_after > count_before else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench serve", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--spawn", type=Path, default=None, metavar="MODEL", help="start a server for MODEL")
    parser.add_argument("--input", type=Path, required=True, help="one text per line")
    parser.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 8, 32])
    parser.add_argument("--backend", type=lambda s: s.split(","), default=["accelerated", "autoregressive"])
    parser.add_argument("--requests", type=int, default=400, help="requests per (backend, concurrency)")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument(
        "--server-pid", type=int, default=None, help="the --url server's process, for its CPU time (--spawn: known)"
    )
    parser.add_argument("--peer-ct2", type=Path, default=None, metavar="HF_DIR", help="also measure the peer server")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    lines = input_lines(args.input)
    with tempfile.TemporaryDirectory() as logs, contextlib.ExitStack() as running:
        url, peer_url, server_pid = args.url, None, args.server_pid
        if args.spawn is not None:
            server = start_server(args.spawn, Path(logs), cache_size=0)
            running.callback(server.stop)
            url, server_pid = server.url, server.process.pid
        if args.peer_ct2 is not None:
            peer = start_peer_ct2(args.peer_ct2, Path(logs))
            running.callback(peer.stop)
            peer_url = peer.url
        return _measure(args, lines, url, peer_url, server_pid)


def _measure(
    args: argparse.Namespace, lines: list[str], url: str, peer_url: str | None = None, server_pid: int | None = None
) -> int:
    httpx.get(f"{url}/readyz", timeout=10).raise_for_status()
    rows = []
    # At each concurrency the service's backends in turn, then the peer on the lines the first backend read:
    # (url, the backend asked for, the row's label, which backend's lines).
    targets: list[tuple[str, str | None, str, int]] = [(url, b, b, i) for i, b in enumerate(args.backend)]
    targets += [(peer_url, None, PEER, 0)] if peer_url is not None else []
    total = len(args.concurrency) * len(targets) * args.requests
    with tqdm(total=total, desc="bench serve", unit="req", file=sys.stderr) as progress:
        for step, concurrency in enumerate(args.concurrency):
            for target, backend, label, index in targets:
                offset = step * len(args.backend) + index
                window = lines[(offset * args.requests) % len(lines) :] + lines
                silent = tqdm(disable=True)
                asyncio.run(closed_loop(target, window[-args.warmup :], backend, concurrency, args.warmup, silent))
                cpu = partial(cpu_seconds, server_pid) if server_pid is not None and target == url else None
                row = asyncio.run(closed_loop(target, window, backend, concurrency, args.requests, progress, cpu=cpu))
                rows.append({**row, "backend": label})
    columns = COLUMNS
    if peer_url is not None:
        peer_rate = {row["concurrency"]: row["req_per_s"] for row in rows if row["backend"] == PEER}
        for row in rows:
            if row["backend"] != PEER:
                rate = peer_rate[row["concurrency"]]
                row["req_per_s_vs_peer"] = row["req_per_s"] / rate if rate else None
        columns = [*COLUMNS, "req_per_s_vs_peer"]
    print(table(rows, columns))
    if args.json:
        peer = {"peer": {"url": peer_url, "checkpoint": str(args.peer_ct2)}} if peer_url is not None else {}
        write_json(args.json, {"url": url, "input": str(args.input), **peer, "rows": rows})
    return 0
