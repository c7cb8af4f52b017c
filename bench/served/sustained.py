"""Sustained overload: several times the saturation load for a minute, and what the service does with it.

    python -m bench.served.sustained --spawn models/gec-default --input ../shared/data/dev/fce.dev.detok.src \\
        --saturation 44 [--factor 3] [--duration 60] [--sla-s 1] [--lines 3] [--keys] \\
        [--json docs/benchmarks/overload-sustained.json]

Each request is a paragraph of ``--lines`` consecutive input lines (3 FCE dev lines are about the
editor paragraphs of the Locust runs); ``--saturation`` is the arm's saturation load for such
requests, in requests per second (``make loadtest-measure`` finds it). ``--spawn`` starts
``gecserve serve`` with its sentence cache off and a request deadline of ``--sla-s``
(``GECSERVE_REQUEST_TIMEOUT_S``: what an editor waits for at most, so the SLA the admitted
requests must meet); everything else is the default, admission control included. Other
``GECSERVE_*`` variables pass through. With ``--keys`` the server requires API keys: the load
presents ``drill`` (no limit of its own) and, every ``KEYED_SHARE``-th request, ``greedy``, limited to
``GREEDY_LIMIT``, which is over it at 3x and must get 429 with ``Retry-After``.

Phases, each an open-loop Poisson stream (``bench.served.openloop``: ``bench.served.paced``, Locust's
``FastHttpUser`` in a process of its own, on a schedule drawn up front, measuring how late each
request went):

1. ``baseline``: ``--baseline`` (0.3) of the saturation load for ``--baseline-s`` (20) seconds: the
   normal latencies.
2. ``overload``: ``--factor`` times the saturation load for ``--duration`` seconds. The offered and
   achieved send rate and the send lag; the admitted requests' percentiles against the SLA, as the
   client sees them and as the server measured them (``/v1/stats``, the last minute); the refused
   ones' statuses and ``Retry-After``.
3. ``recovery``: from the moment the overload's last request is due, one request every 50 ms for 5 s
   from this process (the load runs in its own): when the first answer within the baseline's p99
   came, and from when every answer was.

This process and so the load generator raise their scheduling priority where they may (``nice
-10``, as root), so that the server, busy on every core, does not slow the offered load down;
nothing is pinned to a core (the server keeps both, as when its saturation load was measured).
The generator's CPU share and send lag are reported per phase.

The server's RSS is read when ready, after each phase and 10 s after the load. Prints the table and
writes it, with the recovery probes, as JSON.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from bench.latency import input_lines, latency_summary
from bench.served.openloop import offered_load
from bench.served.spawn import RunningServer, start_server
from service.commands.keys import key_entry
from service.engine.report import table, write_json

PROBE_EVERY_S = 0.05
PROBE_FOR_S = 5.0
SETTLE_S = 10.0
START_LEAD_S = 4.0  # the generator's start-up (imports, spawning its users) before its first arrival
KEYS = {"drill": "drill-key-0123456789", "greedy": "greedy-key-0123456789"}
KEYED_SHARE = 10  # with --keys, every tenth request presents the greedy key
GREEDY_LIMIT = (2.0, 5)  # its rate (req/s) and burst
COLUMNS = [
    "phase",
    "offered_rps",
    "scheduled_rps",
    "sent_rps",
    "lag_p99_ms",
    "statuses",
    "p50_ms",
    "p99_ms",
    "server_p99_ms",
    "retry_after_s",
    "rss_mb",
    "client_cpu_pct",
]


def _server_p99_ms(url: str, headers: dict[str, str]) -> float | None:
    """The server's own p99 of its answered requests over the last minute (``/v1/stats``)."""
    series = httpx.get(f"{url}/v1/stats", headers=headers, timeout=30).json()["series"]
    values = [window["1m"]["latency_ms"]["p99"] for window in series.values() if "1m" in window]
    return max((v for v in values if v is not None), default=None)


def _by_second(records: Iterable[dict[str, Any]]) -> dict[int, int]:
    """How many of ``records`` were due in each second of their phase."""
    return dict(sorted(Counter(int(record["at_s"]) for record in records).items()))


def summarise(phase: str, load: dict[str, Any], sla_s: float) -> dict[str, Any]:
    """A phase's figures from ``bench.served.paced``'s output: rates, send lag, statuses, latencies."""
    records = load["records"]
    statuses = Counter(record["status"] for record in records)
    answered = [r["seconds"] for r in records if r["status"] == 200]
    summary = latency_summary(answered)
    refused = [r for r in records if r["status"] in (429, 503)]
    waits = sorted({int(r["retry_after"]) for r in refused if (r["retry_after"] or "").isdigit()})
    lag = np.array([r["lag_s"] for r in records] or [0.0]) * 1e3
    return {
        "phase": phase,
        "offered_rps": load["rate"],
        "scheduled": load["scheduled"],
        "sent": len(records),
        "scheduled_rps": load["scheduled"] / load["duration"],
        "sent_rps": len(records) / load["sending_s"] if load["sending_s"] else 0.0,
        "lag_p50_ms": float(np.percentile(lag, 50)),
        "lag_p99_ms": float(np.percentile(lag, 99)),
        "lag_max_ms": float(lag.max()),
        "statuses": " ".join(f"{k}:{v}" for k, v in sorted(statuses.items())),
        **{k: summary[k] for k in ("p50_ms", "p95_ms", "p99_ms")},
        "within_sla": bool(answered) and summary["p99_ms"] <= sla_s * 1e3,
        "retry_after_s": f"{waits[0]}-{waits[-1]}" if waits else None,
        "refusals_without_retry_after": sum(1 for r in refused if not r["retry_after"]),
        "late_by_second": _by_second(r for r in records if r["status"] == 504),
        "client_cpu_pct": 100 * load["cpu_s"] / load["elapsed_s"],
    }


def _probe(url: str, text: str, at: float, headers: dict[str, str], probes: list[dict[str, Any]]) -> None:
    """From ``at`` (Unix time), one request every ``PROBE_EVERY_S`` for ``PROBE_FOR_S``: when it was
    sent (seconds from the first), its status and latency, appended to ``probes``."""
    with httpx.Client(timeout=30, headers=headers) as client:
        client.get(f"{url}/healthz")  # connected before the load stops
        time.sleep(max(0.0, at - time.time()))
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


def first_normal(probes: list[dict[str, Any]], normal_s: float) -> float | None:
    """When the first answer within ``normal_s`` came back (seconds from the first probe's sending)."""
    return next((p["sent_s"] + p["seconds"] for p in probes if p["status"] == 200 and p["seconds"] <= normal_s), None)


def paragraphs(lines: list[str], size: int) -> list[str]:
    """Consecutive groups of ``size`` lines, joined with spaces."""
    return [" ".join(lines[i : i + size]) for i in range(0, len(lines) - size + 1, size)]


def drill(server: RunningServer, texts: list[str], args: argparse.Namespace, keys: list[str]) -> dict[str, Any]:
    """The three phases against ``server``, presenting ``keys`` in turn (none: no key)."""
    headers = {"authorization": f"Bearer {keys[-1]}"} if keys else {}
    load_average = Path("/proc/loadavg").read_text().split()[:3]  # before: the rest of the machine's work
    ready_mb = server.memory_mb()[0]
    rows, probes = [], []
    phases = [
        ("baseline", args.baseline * args.saturation, args.baseline_s),
        ("overload", args.factor * args.saturation, args.duration),
    ]
    for seed, (phase, rate, duration) in enumerate(phases, start=args.seed):
        start_at = time.time() + START_LEAD_S
        prober = None
        if phase == "overload":
            end = start_at + duration
            prober = threading.Thread(target=_probe, args=(server.url, texts[0], end, headers, probes), daemon=True)
            prober.start()
        load = offered_load(server.url, texts, rate, duration, start_at=start_at, seed=seed, keys=keys)
        row = summarise(phase, load, args.sla_s)
        row["server_p99_ms"] = _server_p99_ms(server.url, headers)
        row["rss_mb"] = server.memory_mb()[0]
        rows.append(row)
        if prober is not None:
            prober.join()
    normal_s = rows[0]["p99_ms"] / 1e3
    time.sleep(SETTLE_S)
    return {
        "rows": rows,
        "rss_ready_mb": ready_mb,
        "rss_after_mb": server.memory_mb()[0],
        "first_normal_s": first_normal(probes, normal_s),
        "recovered_after_s": recovered_after(probes, normal_s),
        "normal_s": normal_s,
        "load_average": load_average,
        "probes": probes,
    }


def _key_settings() -> dict[str, str]:
    """The server's keys for ``--keys``: ``drill`` unlimited, ``greedy`` limited."""
    entries = [key_entry("drill", KEYS["drill"]), key_entry("greedy", KEYS["greedy"], GREEDY_LIMIT)]
    return {"api_keys": ",".join(entries)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.served.sustained",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    parser.add_argument("--keys", action="store_true", help="require API keys; one key of ten over its limit")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    lines = input_lines(args.input)
    try:
        os.nice(-10)
    except PermissionError:
        print("the load generator runs at normal priority (not root)", file=sys.stderr)
    with tempfile.TemporaryDirectory() as logs:
        settings = _key_settings() if args.keys else {}
        server = start_server(args.spawn, Path(logs), cache_size=0, request_timeout_s=args.sla_s, **settings)
        keys = [KEYS["greedy"] if i == 0 else KEYS["drill"] for i in range(KEYED_SHARE)] if args.keys else []
        try:
            result = drill(server, paragraphs(lines, args.lines), args, keys)
        finally:
            server.stop()
    print(table(result["rows"], COLUMNS))
    first, recovered = result["first_normal_s"], result["recovered_after_s"]
    print(
        f"RSS: {result['rss_ready_mb']:.0f} MB ready, {result['rss_after_mb']:.0f} MB {SETTLE_S:g} s after the load; "
        f"normal again (200 within the baseline p99, {result['normal_s'] * 1e3:.0f} ms): first answer "
        + (f"{first:.2f} s" if first is not None else "not within 5 s")
        + ", every answer from "
        + (f"{recovered:.2f} s" if recovered is not None else "not within 5 s")
        + f" after the overload stopped; load average before {' '.join(result['load_average'])}"
    )
    if args.json:
        environment = {k: v for k, v in os.environ.items() if k.startswith("GECSERVE_")}
        options = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
        write_json(args.json, {"command": " ".join(sys.argv), "environment": environment, **options, **result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
