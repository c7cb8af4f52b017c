"""What every benchmark shares beside ``service.engine.report``'s tables and JSON: the input lines it times and the
latency summary it reports."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


def input_lines(path: Path) -> list[str]:
    """The non-blank lines of a UTF-8 input file, stripped: what every benchmark and load test reads."""
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """Mean and p50/p95/p99 in milliseconds."""
    values = np.asarray(seconds, dtype=np.float64) * 1e3
    if values.size == 0:
        return {"mean_ms": float("nan"), "p50_ms": float("nan"), "p95_ms": float("nan"), "p99_ms": float("nan")}
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return {"mean_ms": float(values.mean()), "p50_ms": float(p50), "p95_ms": float(p95), "p99_ms": float(p99)}
