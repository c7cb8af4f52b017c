"""``gecserve bench serve``: closed-loop load against a running server, percentiles per backend.

    gecserve bench serve --url http://127.0.0.1:8000 --input dev.txt \\
        [--concurrency 1,8,32] [--backend accelerated,autoregressive] [--requests 400] [--client-processes N]
        [--json OUT]
    gecserve bench serve --spawn models/gec-default --input dev.txt ...   # starts its own server
    gecserve bench serve ... --peer-ct2 runs/gec-default-hf   # and the FastAPI + CTranslate2 peer beside it
    gecserve bench serve --spawn MODEL --queue redis://127.0.0.1:6379/0 --workers 2 ...   # scale-out

Each of ``concurrency`` clients sends one request (one line of the input as ``text``), waits
for the answer, and sends the next: a closed loop. Lines are taken in order without repeats
within a run, so run the server with ``GECSERVE_CACHE_SIZE=0`` (or enough distinct lines) to
measure decoding rather than the cache. ``--spawn MODEL`` starts ``gecserve serve`` on free ports
with the cache off (other ``GECSERVE_*`` variables pass through), runs, and stops it. Prints
p50/p95/p99 latency and throughput per backend and concurrency, with the server's CPU milliseconds per answered
request (``cpu_ms_per_req``: the process's and its children's user + system time over the run, with ``--spawn`` or
``--server-pid``; ``client_cpu_ms_per_req``, the load generator's own, which shares the machine), split into
the decoding threads' (``decoding_cpu_ms_per_req``, from ``gecserve_decoding_cpu_seconds_total``) and the rest, the
gateway's own (``gateway_cpu_ms_per_req``: HTTP, validation, preprocessing, the review, the edits, metrics and
logging), and its event loop's mean lag over the run (``loop_lag_mean_ms``); both read from its ``/metrics``.
``--peer-ct2 HF_DIR`` also starts ``bench/served/peer_server.py`` (FastAPI + uvicorn, Bling Fire, CTranslate2 int8
greedy on the same weights, made by ``make runs/gec-default-hf``) on a free port and runs the same loop against it
at each concurrency, after the service's backends and on the lines the first of them read: rows ``fastapi+ct2``, and
``req_per_s_vs_peer``, each service row's throughput over the peer's at its concurrency. Locust (``locustfile.py``)
measures the same from outside at scale. Each client has a connection pool of its own (a pool shared by many
clients costs each request a walk over all its connections). ``--client-processes N`` spreads each loop's clients
(and its lines) over N processes started together, for rates past what one process's core sends
(``client_cpu_ms_per_req`` is then the processes' CPU together).
``--queue URL --workers N`` (with ``--spawn``) measures scale-out: the spawned server is a gateway of the job
streams at ``URL`` (under a key prefix of the run's own) and N ``gecserve worker`` processes decode; the server's
CPU is then the gateway's alone. ``GECSERVE_FRONT_ENDS`` passes through as any setting: the process layout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import ssl
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from tqdm import tqdm

from bench.latency import input_lines, latency_summary
from bench.served.spawn import cpu_seconds, start_peer_ct2, start_server, start_worker
from service.engine.report import table, write_json

COLUMNS = [
    "backend",
    "concurrency",
    "requests",
    "errors",
    "req_per_s",
    "cpu_ms_per_req",
    "gateway_cpu_ms_per_req",
    "client_cpu_ms_per_req",
    "client_processes",
    "loop_lag_mean_ms",
    "mean_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
]
LOOP_LAG = "gecserve_event_loop_lag_distribution_seconds"  # the server's histogram of its event loop's lag
DECODING_CPU = "gecserve_decoding_cpu_seconds"  # the server's counter of its decoding threads' CPU time, per queue
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
    clients: ClientProcesses | None = None,
) -> dict[str, Any]:
    """``requests`` requests from ``concurrency`` clients (``backend`` None: the server's choice).
    The row has the client's latency percentiles and the mean of each stage the server timed; each
    successful request's latency (seconds) is also appended to ``latencies`` when given. With ``cpu`` (the
    server's CPU seconds so far) the row has the server's CPU milliseconds per answered request; from a server
    that exports them, its decoding threads' share of it and the loop's mean lag over the run. With
    ``clients``, the clients are spread over its processes (``ClientProcesses.run``); else they share this one."""
    latencies = [] if latencies is None else latencies
    first = len(latencies)
    cpu_before = cpu() if cpu is not None else 0.0
    before = await server_readings(url)
    if clients is None:
        load = await _send(url, lines, backend, concurrency, requests, progress)
    else:
        load = await clients.run(url, lines, backend, concurrency, requests, progress)
    latencies += load.latencies
    answered = len(load.latencies)
    cpu_ms = 1000 * (cpu() - cpu_before) / answered if cpu is not None and answered else None
    after = await server_readings(url)
    decoding_ms = 1000 * (after.decoding_cpu_s - before.decoding_cpu_s) / answered if answered else 0.0
    return {
        "backend": backend,
        "concurrency": concurrency,
        "requests": requests,
        "answered": answered,
        "errors": sum(load.errors.values()),
        "error_codes": load.errors,
        "req_per_s": answered / load.elapsed_s,
        "cpu_ms_per_req": cpu_ms,
        "decoding_cpu_ms_per_req": decoding_ms if cpu_ms is not None and after.decoding_exported else None,
        "gateway_cpu_ms_per_req": cpu_ms - decoding_ms if cpu_ms is not None and after.decoding_exported else None,
        "client_cpu_ms_per_req": 1000 * load.cpu_s / max(1, answered),
        "client_processes": 1 if clients is None else min(clients.processes, concurrency),
        "loop_lag_mean_ms": loop_lag_ms(before, after),
        **latency_summary(latencies[first:]),
        "server_stages_ms": {stage: total / max(1, answered) for stage, total in load.stages.items()},
    }


@dataclass
class Load:
    """What a closed loop's clients got: each answered request's latency (seconds), the server's stage timings
    summed over the answers, the other answers by status (or error name), the wall time from the first request to
    the last answer, and the CPU seconds the clients' process(es) spent meanwhile."""

    latencies: list[float] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    cpu_s: float = 0.0


async def _send(
    url: str, lines: list[str], backend: str | None, concurrency: int, requests: int, progress: tqdm
) -> Load:
    """``requests`` requests of ``lines`` in order from ``concurrency`` clients of this process."""
    load = Load()
    cursor = iter(range(requests))
    # a pool a client (the module docstring); one TLS context for all (each would load the CA bundle), made before
    # the CPU clock starts
    tls = ssl.create_default_context()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [httpx.AsyncClient(timeout=60, limits=limits, verify=tls) for _ in range(concurrency)]
    cpu_before = time.process_time()

    async def client(http: httpx.AsyncClient) -> None:
        async with http:
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
                    load.latencies.append(time.perf_counter() - started)
                    for stage, ms in response.json().get("timings_ms", {}).items():  # the peer's have none
                        load.stages[stage] = load.stages.get(stage, 0.0) + ms
                else:
                    load.errors[status] = load.errors.get(status, 0) + 1
                progress.update(1)

    started = time.perf_counter()
    await asyncio.gather(*(client(http) for http in clients))
    load.elapsed_s = time.perf_counter() - started
    load.cpu_s = time.process_time() - cpu_before
    return load


class ClientProcesses:
    """Processes of clients for ``closed_loop``, for rates past what one process's core sends (the load generator,
    not the server, would set the figure). ``run`` splits the clients and the lines among the processes
    (each of at least one client), starts them together at one wall-clock instant, and merges what they got."""

    START_S = 0.2  # how far ahead of now the parts are told to start, so that each is waiting when it comes

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
        list(self._pool.map(time.sleep, [0.5] * processes))  # every process started and its imports done

    async def run(
        self, url: str, lines: list[str], backend: str | None, concurrency: int, requests: int, progress: tqdm
    ) -> Load:
        """The closed loop of ``concurrency`` clients over the processes (``_send`` in each)."""
        count = min(self.processes, concurrency)
        start_at = time.time() + self.START_S
        loop = asyncio.get_running_loop()
        parts = [
            loop.run_in_executor(
                self._pool,
                _part,
                (url, lines[k::count], backend, len(range(k, concurrency, count)), len(range(k, requests, count))),
                start_at,
            )
            for k in range(count)
        ]
        merged = Load()
        ended = start_at
        for done in asyncio.as_completed(parts):
            load, part_ended = await done
            progress.update(len(load.latencies) + sum(load.errors.values()))
            merged.latencies += load.latencies
            for stage, ms in load.stages.items():
                merged.stages[stage] = merged.stages.get(stage, 0.0) + ms
            for status, count_of in load.errors.items():
                merged.errors[status] = merged.errors.get(status, 0) + count_of
            merged.cpu_s += load.cpu_s
            ended = max(ended, part_ended)
        merged.elapsed_s = ended - start_at
        return merged

    def close(self) -> None:
        self._pool.shutdown()


def _part(loop_args: tuple[str, list[str], str | None, int, int], start_at: float) -> tuple[Load, float]:
    """One process's share of a closed loop (``ClientProcesses.run``), started at ``start_at`` (wall clock); what
    it got and when its last answer came (wall clock)."""
    time.sleep(max(0.0, start_at - time.time()))
    load = asyncio.run(_send(*loop_args, tqdm(disable=True)))
    return load, time.time()


@dataclass(frozen=True)
class ServerReadings:
    """What the server's ``/metrics`` said at one moment: its loop lag histogram's sum (seconds) and count, and its
    decoding threads' CPU seconds over every queue; ``decoding_exported`` False when it has no such series (the peer,
    or a server older than the series)."""

    lag_sum_s: float = 0.0
    lag_count: float = 0.0
    decoding_cpu_s: float = 0.0
    decoding_exported: bool = False


async def server_readings(url: str) -> ServerReadings:
    """The server's readings now (``ServerReadings``; all 0 when it exports no metrics)."""
    async with httpx.AsyncClient(timeout=10) as http:
        try:
            response = await http.get(f"{url}/metrics")
        except httpx.HTTPError:
            return ServerReadings()
    if response.status_code != 200:  # the peer has no metrics
        return ServerReadings()
    samples: dict[str, float] = {}
    for family in text_string_to_metric_families(response.text):
        if family.name in (LOOP_LAG, DECODING_CPU):
            for sample in family.samples:
                samples[sample.name] = samples.get(sample.name, 0.0) + sample.value
    return ServerReadings(
        samples.get(f"{LOOP_LAG}_sum", 0.0),
        samples.get(f"{LOOP_LAG}_count", 0.0),
        samples.get(f"{DECODING_CPU}_total", 0.0),
        f"{DECODING_CPU}_total" in samples,
    )


def loop_lag_ms(before: ServerReadings, after: ServerReadings) -> float | None:
    """The loop's mean lag in milliseconds between two readings; None when the server measured none in between (it
    exports no such series)."""
    counted = after.lag_count - before.lag_count
    return 1000 * (after.lag_sum_s - before.lag_sum_s) / counted if counted > 0 else None


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
    parser.add_argument(
        "--client-processes",
        type=int,
        default=1,
        metavar="N",
        help="spread each loop's clients over N processes (for rates past what one process's core sends)",
    )
    parser.add_argument("--queue", default=None, metavar="URL", help="with --spawn: a gateway of the job streams here")
    parser.add_argument("--workers", type=int, default=1, help="with --queue: the gecserve worker processes started")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.queue is not None and args.spawn is None:
        parser.error("--queue needs --spawn")
    lines = input_lines(args.input)
    with tempfile.TemporaryDirectory() as logs, contextlib.ExitStack() as running:
        url, peer_url, server_pid = args.url, None, args.server_pid
        if args.spawn is not None:
            streams: dict[str, object] = {}
            if args.queue is not None:
                streams = {"queue_url": args.queue, "redis_prefix": f"bench-{uuid.uuid4().hex[:8]}:"}
                for _ in range(args.workers):
                    worker = start_worker(args.spawn, Path(logs), args.queue, redis_prefix=streams["redis_prefix"])
                    running.callback(worker.stop)
            server = start_server(args.spawn, Path(logs), cache_size=0, **streams)
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
    clients = ClientProcesses(args.client_processes) if args.client_processes > 1 else None
    with (
        tqdm(total=total, desc="bench serve", unit="req", file=sys.stderr) as progress,
        contextlib.ExitStack() as stack,
    ):
        if clients is not None:
            stack.callback(clients.close)
        for step, concurrency in enumerate(args.concurrency):
            for target, backend, label, index in targets:
                offset = step * len(args.backend) + index
                window = lines[(offset * args.requests) % len(lines) :] + lines
                silent = tqdm(disable=True)
                asyncio.run(closed_loop(target, window[-args.warmup :], backend, concurrency, args.warmup, silent))
                cpu = partial(cpu_seconds, server_pid) if server_pid is not None and target == url else None
                loop = closed_loop(
                    target, window, backend, concurrency, args.requests, progress, cpu=cpu, clients=clients
                )
                row = asyncio.run(loop)
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
