"""``gecserve bench decoding --arrivals``: sentences arriving as a Poisson stream, decoded through the
service's own queues (``LocalQueues``: the batcher and running batches an arm gets), as served
rather than as closed batches.

    gecserve bench decoding --model models/gec-default --input dev.txt --arrivals 200,400,max \\
        [--strategies greedy,aggressive,beam,sample] [--batching closed,continuous] [--rounds 2] [--limit N] \\
        [--json OUT]

For each strategy, batching, batch size (``--batch-size``: sentences per batch) and arrival rate
(sentences/s; ``max`` = all at once, the saturation throughput): one job per sentence submitted at
its arrival time, in input order, to the queue that serves it (greedy and aggressive: their arm's;
beam and sample: ``/v1/generate``'s, the job carrying its decoding); a sentence's latency is from its
arrival to its answer. Reported: offered and achieved
sentences/s (achieved = sentences over the time from the first arrival to the last answer), latency
mean/p50/p95/p99, the mean rows per decoder batch (sentences, not beams or samples), and whether
every output is identical to its reference: greedy decoding's for greedy and aggressive, the
sentence's own decoding alone for beam and sample (sampling with seed 0). With ``--rounds N`` every
configuration runs N times, the configurations interleaved (so that a noisy machine slows all of them
alike); latencies are pooled and the rate is sentences over the summed spans.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Callable
from typing import Any

from bench.latency import latency_summary
from service.batching import Batcher, BatchPolicy, Job
from service.batching.batcher import NullHooks
from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine
from service.experiments.arms import BACKENDS, Arm
from service.pipeline.queues import LocalQueues

STOP_S = 60.0  # a run's queues drain within this once every answer is in
EXACT = ("greedy", "aggressive")  # strategies whose outputs are greedy decoding's

COLUMNS = [
    "strategy",
    "batching",
    "batch",
    "offered_per_s",
    "sent_per_s",
    "mean_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "rows_per_batch",
    "identical",
]


class _Rows(NullHooks):
    """Counts the rows of every batch the batcher starts (for a continuous session: rows after a join)."""

    def __init__(self) -> None:
        self.batches = 0
        self.rows = 0

    def on_batch(self, name: str, size: int, padded_tokens: int) -> None:
        self.batches += 1
        self.rows += size


def arrival_times(count: int, rate: float, seed: int = 0) -> list[float]:
    """Seconds from the start at which each of ``count`` jobs arrives: a Poisson stream of ``rate``
    per second (all at 0 when ``rate`` is infinite)."""
    if math.isinf(rate):
        return [0.0] * count
    rng = random.Random(seed)
    times, now = [], 0.0
    for _ in range(count):
        now += rng.expovariate(rate)
        times.append(now)
    return times


def queue_for(queues: LocalQueues, strategy: str, params: DecodeParams) -> tuple[Batcher, Any]:
    """The queue that serves ``strategy`` and the payload its jobs carry: the exact backend's arm, run
    with ``params``' aggressive-decoding knobs; or, for a strategy no arm serves, ``/v1/generate``'s."""
    backend = next((b.name for b in BACKENDS.values() if b.strategy == strategy and b.exact), None)
    if backend is None:
        return queues.generate(), (strategy, params)
    return queues.get(Arm("bench", backend, (("max_draft", params.max_draft), ("pass_cost", params.pass_cost)))), None


async def replay(
    engine: Engine,
    strategy: str,
    params: DecodeParams,
    batching: str,
    policy: BatchPolicy,
    hooks: _Rows,
    sources: list[list[int]],
    arrivals: list[float],
) -> tuple[list[Any], list[float], float]:
    """Submit each source at its arrival time to the queue that serves ``strategy``, as the service's
    local queues make it (``batching`` continuous or closed); outputs, latencies and the span from the
    first arrival to the last answer."""
    continuous = frozenset({strategy}) if batching == "continuous" else frozenset()
    queues = LocalQueues([engine], policy, hooks, continuous=continuous)
    await queues.start()
    batcher, payload = queue_for(queues, strategy, params)
    start = time.perf_counter()
    latencies = [0.0] * len(sources)

    async def one(index: int) -> Any:
        delay = start + arrivals[index] - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        arrived = time.perf_counter()
        outcome = await batcher.submit(Job(tokens=sources[index], payload=payload))
        latencies[index] = time.perf_counter() - arrived
        return outcome.result.tokens

    outputs = await asyncio.gather(*(one(i) for i in range(len(sources))))
    span = time.perf_counter() - start - arrivals[0]
    await queues.stop(timeout=STOP_S)
    return list(outputs), latencies, span


def references(engine: Engine, sources: list[list[int]], strategy: str, params: DecodeParams) -> list[list[int]]:
    """What each output must be: greedy decoding's (one batch) for the exact strategies, else each
    sentence's own decoding alone."""
    if strategy in EXACT:
        return [r.tokens for r in engine.generate(sources, "greedy", params)]
    return [engine.generate([source], strategy, params)[0].tokens for source in sources]


def run_arrivals(
    engine: Engine,
    sources: list[list[int]],
    strategies: list[str],
    batchings: list[str],
    rates: list[float],
    params: DecodeParams,
    policies: list[BatchPolicy],
    rounds: int,
    progress: Callable[[str], None],
) -> list[dict[str, Any]]:
    """One row per (rate, strategy, batching, policy), in that order; outputs compared with ``references``."""
    reference = {strategy: references(engine, sources, strategy, params) for strategy in strategies}
    configs = [
        (rate, strategy, batching, policy)
        for rate in rates
        for strategy in strategies
        for batching in batchings
        for policy in policies
    ]
    runs: dict[tuple[float, str, str, BatchPolicy], dict[str, Any]] = {
        config: {"latencies": [], "span": 0.0, "identical": True, "rows": 0, "batches": 0} for config in configs
    }
    for _ in range(rounds):
        for rate, strategy, batching, policy in configs:
            progress(f"{strategy} {batching} {policy.max_batch_size} at {rate:g}/s")
            hooks = _Rows()
            arrivals = arrival_times(len(sources), rate)
            outputs, latencies, span = asyncio.run(
                replay(engine, strategy, params, batching, policy, hooks, sources, arrivals)
            )
            run = runs[(rate, strategy, batching, policy)]
            run["latencies"] += latencies
            run["span"] += span
            run["rows"] += hooks.rows
            run["batches"] += hooks.batches
            run["identical"] &= outputs == reference[strategy]
    return [
        {
            "strategy": strategy,
            "batching": batching,
            "batch": policy.max_batch_size,
            "offered_per_s": "max" if math.isinf(rate) else rate,
            "sent_per_s": len(run["latencies"]) / run["span"],
            **latency_summary(run["latencies"]),
            "rows_per_batch": run["rows"] / max(1, run["batches"]),
            "identical": "yes" if run["identical"] else "no",
        }
        for (rate, strategy, batching, policy), run in runs.items()
    ]
