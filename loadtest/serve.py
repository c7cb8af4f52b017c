"""``gecserve bench serve``: closed-loop load against a running server, percentiles per backend.

    gecserve bench serve --url http://127.0.0.1:8000 --input dev.txt \\
        [--concurrency 1,8,32] [--backend accelerated,autoregressive] [--requests 400] [--json OUT]
    gecserve bench serve --spawn models/gec-default --input dev.txt ...   # starts its own server

Each of ``concurrency`` clients sends one request (one line of the input as ``text``), waits
for the answer, and sends the next: a closed loop. Lines are taken in order without repeats
within a run, so run the server with ``GECSERVE_CACHE_SIZE=0`` (or enough distinct lines) to
measure decoding rather than the cache. ``--spawn MODEL`` starts ``gecserve serve`` on free ports
with the cache off (other ``GECSERVE_*`` variables pass through), runs, and stops it. Prints
p50/p95/p99 latency and throughput per backend and concurrency. Locust (``loadtest/``) measures
the same from outside at scale.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from tqdm import tqdm

from loadtest.spawn import start_server
from service.engine.report import input_lines, latency_summary, table, write_json

COLUMNS = ["backend", "concurrency", "requests", "errors", "req_per_s", "mean_ms", "p50_ms", "p95_ms", "p99_ms"]


async def closed_loop(
    url: str,
    lines: list[str],
    backend: str | None,
    concurrency: int,
    requests: int,
    progress: tqdm,
    latencies: list[float] | None = None,
) -> dict[str, Any]:
    """``requests`` requests from ``concurrency`` clients (``backend`` None: the server's choice).
    The row has the client's latency percentiles and the mean of each stage the server timed; each
    successful request's latency (seconds) is also appended to ``latencies`` when given."""
    latencies = [] if latencies is None else latencies
    first = len(latencies)
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
                for stage, ms in response.json()["timings_ms"].items():
                    stages[stage] = stages.get(stage, 0.0) + ms
            else:
                errors[status] = errors.get(status, 0) + 1
            progress.update(1)

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        started = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return {
        "backend": backend,
        "concurrency": concurrency,
        "requests": requests,
        "errors": sum(errors.values()),
        "error_codes": errors,
        "req_per_s": (len(latencies) - first) / elapsed,
        **latency_summary(latencies[first:]),
        "server_stages_ms": {stage: total / max(1, len(latencies) - first) for stage, total in stages.items()},
    }


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
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    lines = input_lines(args.input)
    if args.spawn is None:
        return _measure(args, lines, args.url)
    with tempfile.TemporaryDirectory() as logs:
        server = start_server(args.spawn, Path(logs), cache_size=0)
        try:
            return _measure(args, lines, server.url)
        finally:
            server.stop()


def _measure(args: argparse.Namespace, lines: list[str], url: str) -> int:
    httpx.get(f"{url}/readyz", timeout=10).raise_for_status()
    rows = []
    runs = [(b, c) for c in args.concurrency for b in args.backend]
    with tqdm(total=len(runs) * args.requests, desc="bench serve", unit="req", file=sys.stderr) as progress:
        for offset, (backend, concurrency) in enumerate(runs):
            window = lines[(offset * args.requests) % len(lines) :] + lines
            silent = tqdm(disable=True)
            asyncio.run(closed_loop(url, window[-args.warmup :], backend, concurrency, args.warmup, silent))
            rows.append(asyncio.run(closed_loop(url, window, backend, concurrency, args.requests, progress)))
    print(table(rows, COLUMNS))
    if args.json:
        write_json(args.json, {"url": url, "input": str(args.input), "rows": rows})
    return 0
