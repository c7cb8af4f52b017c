"""How measurements are reported: aligned text tables, JSON with the machine's facts.

One implementation for the benchmarks (``bench``) and the model tools (``gecserve eval``, ``models.gec.package``,
``models.gec.compare_spelling``). It sits in the engine layer, the lowest one both may import (``models`` may use only
``service.engine`` and ``service.text``, and ``service.text`` does no I/O); what the benchmarks alone share is in
``bench.latency``. ``machine`` records the CPU facts that decide which kernels ONNX Runtime can use. Imports nothing
of the service.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "-"
        return f"{value:.2f}" if abs(value) < 1000 else f"{value:.0f}"
    return "-" if value is None else str(value)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain aligned text table (numbers right-aligned)."""
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) if cells else len(c) for i, c in enumerate(columns)]
    numeric = [all(isinstance(row.get(c), int | float) or row.get(c) is None for row in rows) for c in columns]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric, strict=True))

    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(r) for r in cells)])


# Vector extensions that decide which integer GEMM kernels ONNX Runtime and CTranslate2 can use.
SIMD_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")


def machine() -> dict[str, Any]:
    """The CPU (model, the SIMD extensions of ``SIMD_FLAGS`` it has, cores), Python and platform this runs on."""
    info: dict[str, str] = {}
    try:
        for text_line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = text_line.partition(":")
            info.setdefault(key.strip(), value.strip())  # the first CPU's
    except OSError:
        pass
    flags = set(info.get("flags", "").split())
    return {
        "cpu": info.get("model name") or platform.processor() or "",
        "simd": [flag for flag in SIMD_FLAGS if flag in flags],
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` as indented JSON to ``path`` (creating its folder), after the date and ``machine()``."""
    payload = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        **payload,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
