"""``gecserve bench stages``: where the time of one ``POST /v1/correct`` goes, outside the engine and in it.

    gecserve bench stages --spawn models/gec-default --input fce.dev.detok.src --input jfleg.dev.src \\
        [--requests 400] [--warmup 20] [--rounds 1] [--backend accelerated] [--baseline TREE] [--json OUT]
    gecserve bench stages --url http://127.0.0.1:8000 --input dev.txt ...   # a running server

Sends the lines of each input one at a time (concurrency 1) from a keep-alive HTTP connection and
times each answer on the client. Each answer carries the server's own stage timings (``timings_ms``),
and ``/metrics`` the server's whole span of the requests, so each request's latency splits into:

- the pipeline's stages: ``preprocess`` (protected spans, sentences, languages, the spelling stage,
  tokens), ``cache``, ``queue`` (the hand-off to the inference thread), ``inference`` (the engine),
  ``review`` (the language model's review, where the model ships one) and ``postprocess`` (edits,
  offsets, categories and messages, ids remembered for feedback);
- ``hand-offs``: the pipeline's time between those stages (its ``total`` less their sum: waking the
  event loop after a decoding thread finished, the dispatcher's bookkeeping);
- ``entry + accounting`` (means only, from ``/metrics``): the pipeline's span around ``total``
  (validation, routing to an arm and a model, admission, recording the request);
- ``HTTP + JSON`` (means only): the rest of the client's latency (the socket, the ASGI server and
  middlewares, parsing and validating the body, serialising the answer, the client itself).

``outside the engine`` is each request's latency less its ``inference``; ``GET /healthz`` is the
floor of any route (the same connection, server and middlewares, no work). Lines are taken in order
without repeats within a round, and ``--spawn`` starts the server with the sentence cache off, so
every sentence is decoded (the lookup still runs).

``--baseline TREE`` also starts a server from another source tree (a copy of an earlier commit:
``git worktree add /tmp/base HEAD``) with the same model and settings; each round measures both,
in an order that alternates from round to round, and the table adds the baseline's p50 and the
ratio of this tree's to it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from prometheus_client.parser import text_string_to_metric_families
from tqdm import tqdm

from bench.latency import input_lines
from bench.served.spawn import start_server
from service.engine.report import table, write_json
from service.observability import REQUEST_STAGES

THIS, BASELINE = "this", "baseline"
SPAN = "gecserve_request_duration_seconds"
HANDOFFS, ENTRY, HTTP, LATENCY, OUTSIDE, FLOOR = (
    "hand-offs",
    "entry + accounting",
    "HTTP + JSON",
    "latency",
    "outside the engine",
    "GET /healthz",
)
ROWS = [*REQUEST_STAGES, HANDOFFS, ENTRY, HTTP, LATENCY, OUTSIDE, FLOOR]
MEANS_ONLY = (ENTRY, HTTP)  # from the server's histogram sums: no percentiles


@dataclass
class Samples:
    """One server's measurements of one input, pooled over the rounds (milliseconds per request)."""

    per_request: dict[str, list[float]] = field(default_factory=lambda: {row: [] for row in ROWS})
    totals: list[float] = field(default_factory=list)  # the pipeline's own ``total`` of each request
    span_ms: float = 0.0  # the server's whole span of the requests, summed (from /metrics)
    span_count: float = 0.0

    def add(self, latency_ms: float, timings: dict[str, float]) -> None:
        """One answer: its client latency and the server's ``timings_ms``."""
        for stage in REQUEST_STAGES:
            self.per_request[stage].append(timings.get(stage, 0.0))
        staged = sum(timings.get(stage, 0.0) for stage in REQUEST_STAGES)
        self.per_request[HANDOFFS].append(timings["total"] - staged)
        self.totals.append(timings["total"])
        self.per_request[LATENCY].append(latency_ms)
        self.per_request[OUTSIDE].append(latency_ms - timings.get("inference", 0.0))

    def summary(self) -> dict[str, Figures]:
        """Each row's figures (the means-only rows, from the server's span, have no percentiles)."""
        out = {row: Figures.of(values) for row, values in self.per_request.items() if row not in MEANS_ONLY}
        span = self.span_ms / self.span_count if self.span_count else math.nan
        total = statistics.fmean(self.totals) if self.totals else math.nan
        out[ENTRY] = Figures(None, span - total, None)
        out[HTTP] = Figures(None, out[LATENCY].mean_ms - span, None)
        return out


@dataclass(frozen=True)
class Figures:
    """One row's p50, mean and p95 in milliseconds (None: not known from means)."""

    p50_ms: float | None
    mean_ms: float
    p95_ms: float | None

    @classmethod
    def of(cls, values: list[float]) -> Figures:
        if not values:
            return cls(None, math.nan, None)
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        return cls(statistics.median(ordered), statistics.fmean(ordered), p95)


class Client:
    """One keep-alive HTTP/1.1 connection to a server (the lightest real client: its own cost is in the latency)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=60)

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        return response.status, response.read()

    def correct(self, text: str, backend: str | None) -> tuple[float, dict[str, Any]]:
        """The client's latency (ms) of one correction and its answer."""
        payload: dict[str, Any] = {"text": text}
        if backend:
            payload["options"] = {"backend": backend}
        body = json.dumps(payload).encode()
        started = time.perf_counter()
        status, answer = self.request("POST", "/v1/correct", body)
        latency = time.perf_counter() - started
        if status != 200:
            raise RuntimeError(f"POST /v1/correct answered {status}: {answer[:500]!r}")
        return 1e3 * latency, json.loads(answer)

    def floor(self) -> float:
        """The client's latency (ms) of ``GET /healthz``."""
        started = time.perf_counter()
        status, _ = self.request("GET", "/healthz")
        if status != 200:
            raise RuntimeError(f"GET /healthz answered {status}")
        return 1e3 * (time.perf_counter() - started)

    def span(self) -> tuple[float, float]:
        """(sum in ms, count) of the server's span of successful HTTP corrections, from ``/metrics``."""
        _, text = self.request("GET", "/metrics")
        total = count = 0.0
        for family in text_string_to_metric_families(text.decode()):
            for sample in family.samples:
                labels = sample.labels
                if labels.get("api") != "http" or labels.get("route") != "correct" or labels.get("outcome") != "ok":
                    continue
                if sample.name == f"{SPAN}_sum":
                    total += 1e3 * sample.value
                elif sample.name == f"{SPAN}_count":
                    count += sample.value
        return total, count

    def close(self) -> None:
        self.connection.close()


def measure(
    client: Client, lines: list[str], backend: str | None, warmup: int, samples: Samples, progress: tqdm
) -> None:
    """``warmup`` unmeasured corrections, then one measured per line, one at a time, then as many floors."""
    for line in lines[-warmup:] if warmup else []:
        client.correct(line, backend)
    span_before, count_before = client.span()
    for line in lines:
        latency, answer = client.correct(line, backend)
        samples.add(latency, answer["timings_ms"])
        progress.update(1)
    span_after, count_after = client.span()
    samples.span_ms += span_after - span_before
    samples.span_count += count_after - count_before
    for _ in lines:
        samples.per_request[FLOOR].append(client.floor())


def report_rows(name: str, measured: dict[str, Samples]) -> list[dict[str, Any]]:
    """One row per stage of one input: this tree's p50, mean, p95 and share of the mean latency, and with a
    baseline its p50 and mean and the ratios of this tree's to them."""
    this = measured[THIS].summary()
    base = measured[BASELINE].summary() if BASELINE in measured else None
    rows = []
    for stage in ROWS:
        figures = this[stage]
        row: dict[str, Any] = {"input": name, "stage": stage, **asdict(figures)}
        row["share_pct"] = _ratio(100 * figures.mean_ms, this[LATENCY].mean_ms) if stage != FLOOR else None
        if base is not None:
            row["baseline_p50_ms"] = base[stage].p50_ms
            row["baseline_mean_ms"] = base[stage].mean_ms
            row["p50_ratio"] = _ratio(figures.p50_ms, base[stage].p50_ms)
            row["mean_ratio"] = _ratio(figures.mean_ms, base[stage].mean_ms)
        rows.append(row)
    return rows


def _ratio(value: float | None, reference: float | None) -> float | None:
    return value / reference if value is not None and reference is not None and reference > 0 else None


@contextmanager
def _servers(args: argparse.Namespace) -> Iterator[dict[str, str]]:
    """The URL of each server measured, by tree (spawned ones stopped on leaving)."""
    if args.spawn is None:
        yield {THIS: args.url}
        return
    trees = {THIS: None, **({BASELINE: args.baseline} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as logs, ExitStack() as stack:
        urls = {}
        for tree, cwd in trees.items():
            server = start_server(args.spawn.resolve(), Path(logs) / tree, cwd=cwd, cache_size=0)
            stack.callback(server.stop)
            urls[tree] = server.url
        yield urls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench stages", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--spawn", type=Path, default=None, metavar="MODEL", help="start a server for MODEL")
    parser.add_argument("--baseline", type=Path, default=None, metavar="TREE", help="with --spawn: compare TREE")
    parser.add_argument("--input", type=Path, action="append", required=True, help="one text per line (repeatable)")
    parser.add_argument("--requests", type=int, default=400, help="measured requests per input, round and server")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=1, help="times each input is measured on each server")
    parser.add_argument("--backend", default="accelerated", help="options.backend ('' for the server's choice)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.baseline is not None and args.spawn is None:
        parser.error("--baseline needs --spawn")
    inputs = {path.name: input_lines(path) for path in args.input}
    with _servers(args) as urls:
        clients = {tree: Client(url) for tree, url in urls.items()}
        measured = {name: {tree: Samples() for tree in urls} for name in inputs}
        total = len(inputs) * args.rounds * len(urls) * args.requests
        with tqdm(total=total, desc="bench stages", unit="req", file=sys.stderr) as progress:
            for round_index in range(args.rounds):
                order = list(clients.items())
                if round_index % 2:
                    order.reverse()
                for name, lines in inputs.items():
                    start = (round_index * args.requests) % len(lines)
                    window = (lines[start:] + lines)[: args.requests]
                    for tree, client in order:
                        measure(client, window, args.backend or None, args.warmup, measured[name][tree], progress)
        for client in clients.values():
            client.close()
    rows = [row for name in inputs for row in report_rows(name, measured[name])]
    columns = [column for column in rows[0] if column != "input"]
    for name in inputs:
        print(f"\n{name}: {args.requests * args.rounds} requests one at a time, ms per request")
        print(table([row for row in rows if row["input"] == name], columns))
    if args.json:
        payload = {"command": " ".join(sys.argv), "urls": urls, "backend": args.backend, "rounds": args.rounds}
        write_json(args.json, {**payload, "baseline": str(args.baseline) if args.baseline else None, "rows": rows})
    return 0
