"""Arms: a backend's decoding strategy bound to its inference workers through a batcher.

Each backend owns ``inference_workers`` engines (its own ONNX Runtime sessions); worker ``i``
of an arm always runs on engine ``i``. The beam arm (alternatives) and the generate arm run
on the autoregressive backend's engines: ORT sessions accept concurrent runs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.batching import BatchPolicy, Job, LocalBatcher
from service.engine.decoding.types import DecodeParams, DecodeResult
from service.engine.engine import Engine
from service.observability.hooks import MetricsHooks

ALTERNATIVES_BEAMS = 6  # serves alternatives=1..5 (n-best of 6, the first is the correction)


@dataclass
class Outcome:
    """A job's decode result and when its batch ran (for queue and inference timings)."""

    result: DecodeResult
    started: float
    finished: float
    batch_size: int


@dataclass(frozen=True)
class ArmSpec:
    name: str  # metric label and queue name
    backend: str  # engines it runs on
    strategy: str  # decoding strategy, or "payload" when each job carries (strategy, params)
    params: DecodeParams


ARMS = (
    ArmSpec("accelerated", "accelerated", "aggressive", DecodeParams()),
    ArmSpec("autoregressive", "autoregressive", "greedy", DecodeParams()),
    ArmSpec(
        "autoregressive:beam",
        "autoregressive",
        "beam",
        DecodeParams(num_beams=ALTERNATIVES_BEAMS, num_return_sequences=ALTERNATIVES_BEAMS),
    ),
    ArmSpec("generate", "autoregressive", "payload", DecodeParams()),
)


def _run_group(engine: Engine, jobs: Sequence[Job], strategy: str, params: DecodeParams) -> list[Outcome]:
    started = time.monotonic()
    results = engine.generate([job.tokens for job in jobs], strategy, params)
    finished = time.monotonic()
    return [Outcome(r, started, finished, len(jobs)) for r in results]


def make_runner(spec: ArmSpec, engines: Sequence[Engine]):
    """``runner(worker, jobs)`` for the batcher: decode on the worker's own engine."""

    def run(worker: int, jobs: list[Job]) -> list[Any]:
        engine = engines[worker % len(engines)]
        if spec.strategy != "payload":
            return _run_group(engine, jobs, spec.strategy, spec.params)
        outcomes: list[Any] = [None] * len(jobs)
        groups: dict[Any, list[int]] = {}
        for index, job in enumerate(jobs):
            groups.setdefault(job.payload, []).append(index)
        for (strategy, params), indices in groups.items():
            try:
                for index, outcome in zip(
                    indices, _run_group(engine, [jobs[i] for i in indices], strategy, params), strict=True
                ):
                    outcomes[index] = outcome
            except ValueError as error:  # bad parameters fail their own jobs only
                for index in indices:
                    outcomes[index] = error
        return outcomes

    return run


def build_batchers(
    engines: dict[str, list[Engine]], policy: BatchPolicy, hooks: MetricsHooks | None, workers: int
) -> dict[str, LocalBatcher]:
    return {
        spec.name: LocalBatcher(
            policy, make_runner(spec, engines[spec.backend]), workers=workers, name=spec.name, hooks=hooks
        )
        for spec in ARMS
    }
