"""An open-loop load: a Poisson stream of ``POST /v1/correct`` at a fixed offered rate, whatever the
server's speed (a closed loop would slow down with it and hide overload).

``offered_load`` runs ``bench.served.paced`` (Locust's ``FastHttpUser``, on a schedule drawn up front) in
a process of its own, so that neither Locust's patching of the standard library for gevent nor the
caller's own work reaches the load, and returns what it recorded: every request's scheduled time,
send lag, status, latency, ``Retry-After`` and serving arm, with the generator's CPU time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

USERS = 400  # Locust users: at most this many requests in flight


def offered_load(
    url: str,
    texts: Sequence[str],
    rate: float,
    duration: float,
    *,
    start_at: float | None = None,
    users: int = USERS,
    user_ids: int = 300,
    seed: int = 0,
    keys: Sequence[str] = (),
) -> dict[str, Any]:
    """Send ``rate`` requests a second for ``duration`` seconds (from ``start_at``, Unix time, or once
    the generator is up), request ``i`` carrying text ``i mod len(texts)``, one of ``user_ids`` user
    ids and key ``i mod len(keys)``; ``bench.served.paced``'s output."""
    with tempfile.TemporaryDirectory() as folder:
        source, out = Path(folder) / "texts.txt", Path(folder) / "load.json"
        source.write_text("\n".join(texts))
        command = [
            sys.executable,
            "-m",
            "bench.served.paced",
            "--url",
            url,
            "--texts",
            str(source),
            "--rate",
            str(rate),
        ]
        command += ["--duration", str(duration), "--users", str(users), "--user-ids", str(user_ids)]
        command += ["--seed", str(seed), "--out", str(out), *(f"--api-key={key}" for key in keys)]
        if start_at is not None:
            command += ["--start-at", str(start_at)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())


def statuses(load: dict[str, Any]) -> dict[str, int]:
    """How many requests got each status."""
    return {str(status): count for status, count in sorted(Counter(r["status"] for r in load["records"]).items())}


def latencies_by_arm(load: dict[str, Any]) -> dict[str, list[float]]:
    """The answered requests' latencies (seconds), by the arm that served each."""
    by_arm: dict[str, list[float]] = defaultdict(list)
    for record in load["records"]:
        if record["status"] == 200:
            by_arm[record["arm"]].append(record["seconds"])
    return dict(by_arm)
