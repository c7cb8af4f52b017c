"""Sustained overload: several times the saturation load for a minute, and what the service does with it.

    python -m loadtest.sustained --spawn models/gec-default --input ../shared/data/dev/fce.dev.detok.src \\
        --saturation 44 [--factor 3] [--duration 60] [--sla-s 1] [--lines 3] \\
        [--json docs/benchmarks/overload-sustained.json]

Each request is a paragraph of ``--lines`` consecutive input lines (3 FCE dev lines are about the
editor paragraphs of the Locust runs); ``--saturation`` is the arm's saturation load for such
requests, in requests per second (``make loadtest-measure`` finds it). ``--spawn`` starts
``gecserve serve`` with its sentence cache off and a request deadline of ``--sla-s``
(``GECSERVE_REQUEST_TIMEOUT_S``: what an editor waits for at most, so the SLA the admitted
requests must meet); everything else is the default, admission control included. Other
``GECSERVE_*`` variables pass through. Phases, each an open-loop Poisson stream
(``loadtest.openloop``):

1. ``baseline``: ``--baseline`` (0.3) of the saturation load for ``--baseline-s`` (20) seconds: the
   normal latencies.
2. ``overload``: ``--factor`` times the saturation load for ``--duration`` seconds. The admitted
   requests' percentiles against the SLA, as the client sees them and as the server measured them
   (``/v1/stats``, the last minute); the refused ones' statuses, latency and ``Retry-After``.
3. ``recovery``: from the moment the overload stops sending, one request every 50 ms for 5 s from
   a thread of its own (the load's event loop, still taking answers, would delay it); the service
   is normal again once every answer from then on is a 200 within the baseline's p99.

The load generator runs on the same machine: it raises its own scheduling priority where it may
(``nice -10``, as root), so that the server, busy on every core, does not slow the offered load
down; its CPU time per phase is reported.

The server's RSS is read when ready, after each phase and 10 s after the load. Prints the table and
writes it, with the recovery probes, as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from loadtest.openloop import offered_load
from loadtest.spawn import RunningServer, start_server
from service.bench.report import input_lines, latency_summary, table, write_json

PROBE_EVERY_S = 0.05
PROBE_FOR_S = 5.0
SETTLE_S = 10.0
USERS = 300
COLUMNS = [
    "phase",
    "offered_rps",
    "sent",
    "answered_rps",
    "statuses",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "within_sla",
    "server_p99_ms",
    "refused_p99_ms",
    "retry_after_s",
    "rss_mb",
    "client_cpu_pct",
]


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _server_p99_ms(url: str) -> float | None:
    """The server's own p99 of its answered requests over the last minute (``/v1/stats``)."""
    series = httpx.get(f"{url}/v1/stats", timeout=30).json()["series"]
    values = [window["1m"]["latency_ms"]["p99"] for window in series.values() if "1m" in window]
    return max((v for v in values if v is not None), default=None)


def _row(phase: str, rate: float, load: dict[str, Any], sla_s: float, server: RunningServer, cpu_s: float):
    answered = [s for seconds in load["latencies"].values() for s in seconds]
    summary = latency_summary(answered)
    refused = load["refusals"]
    waits = sorted({int(r["retry_after"]) for r in refused if (r["retry_after"] or "").isdigit()})
    return {
        "phase": phase,
        "offered_rps": rate,
        "sent": load["sent"],
        "sending_s": load["sending_s"],
        "answered_rps": len(answered) / load["sending_s"],
        "statuses": " ".join(f"{k}:{v}" for k, v in sorted(load["statuses"].items())),
        **{k: summary[k] for k in ("p50_ms", "p95_ms", "p99_ms")},
        "within_sla": bool(answered) and summary["p99_ms"] <= sla_s * 1e3,
        "server_p99_ms": _server_p99_ms(server.url),
        "refused_p99_ms": float(np.percentile([r["seconds"] for r in refused], 99) * 1e3) if refused else None,
        "retry_after_s": f"{waits[0]}-{waits[-1]}" if waits else None,
        "refusals_without_retry_after": sum(1 for r in refused if not r["retry_after"]),
        "rss_mb": server.memory_mb()[0],
        "client_cpu_pct": 100 * cpu_s / load["elapsed_s"],
    }


def _probe(url: str, text: str, delay_s: float, probes: list[dict[str, Any]]) -> None:
    """After ``delay_s``, one request every ``PROBE_EVERY_S`` for ``PROBE_FOR_S``: when it was sent
    (seconds from the first), its status and latency, appended to ``probes``."""
    time.sleep(delay_s)
    with httpx.Client(timeout=30) as client:
        start = time.perf_counter()
        while (sent := time.perf_counter() - start) < PROBE_FOR_S:
            began = time.perf_counter()
            try:
                status: int | str = client.post(f"{url}/v1/correct", json={"text": text}).status_code
            except httpx.HTTPError as error:
                status = type(error).__name__
            probes.append({"sent_s": sent, "status": status, "seconds": time.perf_counter() - began})
            time.sleep(max(0.0, start + len(probes) * PROBE_EVERY_S - time.perf_counter()))


def recovered_after(probes: list[dict[str, Any]], normal_s: float) -> float | None:
    """When the service was normal again: the sending time of the first probe from which every probe
    is a 200 within ``normal_s`` (None: not within the probing window)."""
    recovered = None
    for probe in probes:
        normal = probe["status"] == 200 and probe["seconds"] <= normal_s
        if not normal:
            recovered = None
        elif recovered is None:
            recovered = probe["sent_s"]
    return recovered


def paragraphs(lines: list[str], size: int) -> list[str]:
    """Consecutive groups of ``size`` lines, joined with spaces."""
    return [" ".join(lines[i : i + size]) for i in range(0, len(lines) - size + 1, size)]


def drill(server: RunningServer, texts: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """The three phases against ``server``."""
    ready_mb = server.memory_mb()[0]
    base_rate = args.baseline * args.saturation
    cpu = _cpu_s()
    baseline_load = offered_load(server.url, texts, base_rate, args.baseline_s, USERS, args.seed, desc="baseline")
    baseline = asyncio.run(baseline_load)
    rows = [_row("baseline", base_rate, baseline, args.sla_s, server, _cpu_s() - cpu)]
    rate = args.factor * args.saturation
    probes: list[dict[str, Any]] = []
    prober = threading.Thread(target=_probe, args=(server.url, texts[0], args.duration, probes), daemon=True)
    cpu = _cpu_s()
    prober.start()
    overload = asyncio.run(offered_load(server.url, texts, rate, args.duration, USERS, args.seed + 1, desc="overload"))
    rows.append(_row("overload", rate, overload, args.sla_s, server, _cpu_s() - cpu))
    prober.join()
    normal_s = rows[0]["p99_ms"] / 1e3
    time.sleep(SETTLE_S)
    return {
        "rows": rows,
        "rss_ready_mb": ready_mb,
        "rss_after_mb": server.memory_mb()[0],
        "recovered_after_s": recovered_after(probes, normal_s),
        "normal_s": normal_s,
        "probes": probes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m loadtest.sustained", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spawn", type=Path, required=True, metavar="MODEL", help="start a server for MODEL")
    parser.add_argument("--input", type=Path, required=True, help="one sentence or paragraph per line")
    parser.add_argument("--lines", type=int, default=3, help="input lines per request")
    parser.add_argument("--saturation", type=float, required=True, help="the saturation load, requests per second")
    parser.add_argument("--factor", type=float, default=3.0, help="overload: this many times the saturation load")
    parser.add_argument("--baseline", type=float, default=0.3, help="baseline: this share of the saturation load")
    parser.add_argument("--baseline-s", type=float, default=20.0, help="seconds of baseline")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of overload")
    parser.add_argument("--sla-s", type=float, default=1.0, help="the request deadline, and the admitted p99's SLA")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    lines = input_lines(args.input)
    try:
        os.nice(-10)
    except PermissionError:
        print("the load generator runs at normal priority (not root)", file=sys.stderr)
    with tempfile.TemporaryDirectory() as logs:
        server = start_server(args.spawn, Path(logs), cache_size=0, request_timeout_s=args.sla_s)
        try:
            result = drill(server, paragraphs(lines, args.lines), args)
        finally:
            server.stop()
    print(table(result["rows"], COLUMNS))
    recovered = result["recovered_after_s"]
    print(
        f"RSS: {result['rss_ready_mb']:.0f} MB ready, {result['rss_after_mb']:.0f} MB {SETTLE_S:g} s after the load; "
        f"normal again (200 within the baseline p99, {result['normal_s'] * 1e3:.0f} ms) "
        + (f"{recovered:.2f} s after the overload stopped" if recovered is not None else "not within 5 s")
    )
    if args.json:
        environment = {k: v for k, v in os.environ.items() if k.startswith("GECSERVE_")}
        options = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
        write_json(args.json, {"command": " ".join(sys.argv), "environment": environment, **options, **result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
