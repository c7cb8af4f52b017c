"""What the server's Python heap gained between two moments: ``gecserve serve`` under tracemalloc, two snapshots.

    GECSERVE_MODEL_PATH=tests/fixtures/tiny-gec GECSERVE_CACHE_SIZE=0 \\
        python -m bench.heap_diff --first 60 --last 240 --out heap-diff.txt [serve's flags]

Starts tracing (one frame an allocation), serves as ``gecserve serve`` does (settings from the environment and the
flags), snapshots the heap ``--first`` and ``--last`` seconds after start, and writes to ``--out`` the allocation
sites that grew most between the two (``Snapshot.compare_to`` by line). Load the server meanwhile (``gecserve
bench serve --url ...``). Tracing slows the server some threefold and takes memory of its own: for finding what
grows, not for timing.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import tracemalloc
from pathlib import Path

from service.api import server

TOP = 40  # allocation sites written


def diff_later(first_s: float, last_s: float, out: Path) -> None:
    """Sleep, snapshot at ``first_s``, again at ``last_s`` (seconds from now), write the top growth to ``out``."""
    time.sleep(first_s)
    before = tracemalloc.take_snapshot()
    time.sleep(last_s - first_s)
    after = tracemalloc.take_snapshot()
    current, peak = tracemalloc.get_traced_memory()
    lines = [
        f"traced {current / 2**20:.1f} MiB (peak {peak / 2**20:.1f}) at {last_s:.0f} s; growth since {first_s:.0f} s:"
    ]
    lines += [str(stat) for stat in after.compare_to(before, "lineno")[:TOP]]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.heap_diff",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--first", type=float, default=60.0, help="seconds after start of the first snapshot")
    parser.add_argument("--last", type=float, default=240.0, help="seconds after start of the second")
    parser.add_argument("--out", type=Path, required=True)
    args, serve_flags = parser.parse_known_args(argv)
    tracemalloc.start()
    threading.Thread(target=diff_later, args=(args.first, args.last, args.out), daemon=True).start()
    return server.main(serve_flags)


if __name__ == "__main__":
    sys.exit(main())
