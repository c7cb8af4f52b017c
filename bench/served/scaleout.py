"""``gecserve bench scaleout``: the Redis Streams topology against decoding in the gateway, and the cache.

    gecserve bench scaleout --model models/gec-default --input fce.dev.detok.src \\
        [--redis redis://127.0.0.1:6379/0] [--requests 300] [--rounds 3] [--saturation 32] [--json OUT]

Starts, side by side on this machine: a gateway decoding in-process; a gateway with one
``gecserve worker`` and one with two (``--queue``, streams under a key prefix of the run's own); a
gateway whose sentence cache is warm in memory, and one whose memory level is off and whose
Redis level is warm. The decoding topologies run a closed loop at concurrency 1 (the Redis hop's
cost per request) and at ``--saturation`` (throughput at saturation), one after another for each
concurrency so that neighbours in the table ran close in time; the cache gateways run at
concurrency 1 over sentences they have seen. The whole sequence runs ``--rounds`` times (the
machine is noisy): percentiles come from every round's latencies together. Prints the client's
percentiles and throughput, the mean of each stage the server timed (where the time goes), and
writes JSON. Every process shares the machine's cores with the others and with the load generator.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import redis
from tqdm import tqdm

from bench.latency import input_lines, latency_summary
from bench.served.serve import closed_loop
from bench.served.spawn import RunningServer, start_server, start_worker
from service.engine.report import table, write_json
from service.observability import REQUEST_STAGES

COLUMNS = ["topology", "concurrency", "requests", "errors", "req_per_s", "p50_ms", "p95_ms", "p99_ms"]
STAGES = [*REQUEST_STAGES, "total"]

FILL_PASSES = 4  # a cache write lost to a busy Redis (its timeout) is made again by the next pass


def _topologies(
    args: argparse.Namespace, logs: Path, prefix: str, stack: ExitStack
) -> tuple[dict[str, RunningServer], dict[str, RunningServer]]:
    """(decoding topologies, cache topologies), each started and registered for stopping."""

    def server(name: str, until: str = "/readyz", **settings: object) -> RunningServer:
        running = start_server(args.model, logs / name, until=until, **settings)
        stack.callback(running.stop)
        return running

    def workers(count: int, queue_prefix: str) -> None:
        for index in range(count):
            worker = start_worker(args.model, logs / f"{queue_prefix}{index}", args.redis, redis_prefix=queue_prefix)
            stack.callback(worker.stop)

    decoding = {"in-process": server("local", cache_size=0)}
    for count in (1, 2):
        queue_prefix = f"{prefix}{count}w:"
        gateway = server(f"{count}w", until="/healthz", cache_size=0, queue_url=args.redis, redis_prefix=queue_prefix)
        workers(count, queue_prefix)
        _wait_ready(gateway)
        decoding[f"redis, {count} worker{'s' * (count > 1)}"] = gateway
    caches = {
        "cache hit: memory": server("memory-cache"),
        # The row measures hits: on a loaded machine a lookup past the default 0.1 s would be a miss, and decode.
        "cache hit: redis": server(
            "redis-cache", cache_size=0, redis_url=args.redis, redis_prefix=f"{prefix}cache:", cache_timeout_s=1.0
        ),
    }
    return decoding, caches


def _wait_ready(server: RunningServer, timeout: float = 60) -> None:
    """Until the gateway has seen its workers."""
    deadline = time.monotonic() + timeout
    while httpx.get(f"{server.url}/readyz", timeout=2).status_code != 200:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{server.url} never became ready:\n{server.log()}")
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench scaleout", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--input", type=Path, required=True, help="one text per line")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--requests", type=int, default=300, help="requests per measurement and round")
    parser.add_argument("--rounds", type=int, default=3, help="times every measurement is repeated, in turn")
    parser.add_argument("--saturation", type=int, default=32, help="concurrency that saturates the machine")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    lines = input_lines(args.input)
    prefix = f"gecserve-bench:{uuid.uuid4().hex[:8]}:"
    store = redis.Redis.from_url(args.redis)
    try:
        with tempfile.TemporaryDirectory() as logs, ExitStack() as stack:
            decoding, caches = _topologies(args, Path(logs), prefix, stack)
            rows = _measure(args, lines, decoding, caches)
    finally:
        stale = list(store.scan_iter(match=prefix + "*"))
        if stale:
            store.delete(*stale)
        store.close()
    print(table(rows, COLUMNS))
    stage_rows = [{"topology": r["topology"], "concurrency": r["concurrency"], **r["server_stages_ms"]} for r in rows]
    print("\nmean server stage times, ms (the rest of the client's latency is HTTP and the client):")
    print(table(stage_rows, ["topology", "concurrency", *STAGES]))
    by = {(r["topology"], r["concurrency"]): r for r in rows}
    hop = by[("redis, 1 worker", 1)]["p50_ms"] - by[("in-process", 1)]["p50_ms"]
    print(f"\nRedis hop at concurrency 1: {hop:+.2f} ms at p50 (gateway + 1 worker against in-process)")
    if args.json:
        write_json(args.json, {"command": " ".join(sys.argv), "rows": rows, "redis_hop_p50_ms": hop})
    return 0


def _measure(
    args: argparse.Namespace,
    lines: list[str],
    decoding: dict[str, RunningServer],
    caches: dict[str, RunningServer],
) -> list[dict[str, Any]]:
    """Every measurement, ``--rounds`` times in the same order; latencies pooled over the rounds,
    throughput and stage times averaged."""
    runs = [(name, server, c) for c in (1, args.saturation) for name, server in decoding.items()]
    runs += [(name, server, 1) for name, server in caches.items()]
    seen = lines[: args.requests]
    for server in caches.values():  # fill the caches with the sentences their runs repeat, until a pass decodes none
        for _ in range(FILL_PASSES):
            filled = asyncio.run(closed_loop(server.url, seen, None, 8, len(seen), tqdm(disable=True)))
            if filled["server_stages_ms"].get("inference", 0.0) == 0.0:
                break
    pooled: dict[tuple[str, int], list[float]] = {(name, c): [] for name, _, c in runs}
    parts: dict[tuple[str, int], list[dict[str, Any]]] = {(name, c): [] for name, _, c in runs}
    total = len(runs) * args.rounds * args.requests
    with tqdm(total=total, desc="bench scaleout", unit="req", file=sys.stderr) as bar:
        for round_index in range(args.rounds):
            for offset, (name, server, concurrency) in enumerate(runs):
                if name in caches:
                    window = seen
                else:
                    start = ((round_index * len(runs) + offset) * args.requests) % len(lines)
                    window = lines[start:] + lines
                    warm = window[-args.warmup :]
                    asyncio.run(closed_loop(server.url, warm, None, concurrency, args.warmup, tqdm(disable=True)))
                key = (name, concurrency)
                part = asyncio.run(closed_loop(server.url, window, None, concurrency, args.requests, bar, pooled[key]))
                parts[key].append(part)
    rows = []
    for (name, concurrency), measured in parts.items():
        stages = {stage: statistics.fmean(p["server_stages_ms"].get(stage, 0.0) for p in measured) for stage in STAGES}
        rows.append(
            {
                "topology": name,
                "concurrency": concurrency,
                "requests": sum(p["requests"] for p in measured),
                "errors": sum(p["errors"] for p in measured),
                "req_per_s": statistics.fmean(p["req_per_s"] for p in measured),
                **latency_summary(pooled[(name, concurrency)]),
                "server_stages_ms": stages,
                "rounds": measured,
            }
        )
    return rows
