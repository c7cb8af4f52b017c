"""An open-loop load: a Poisson stream of ``/v1/correct`` requests at a fixed offered rate, whatever
the server's speed (a closed loop would slow down with it and hide overload).

Each request is the next input line from one of ``users`` simulated users (a stable
``client.user_id``, so an experiment's sticky assignment holds). What comes back: the answered
latencies per serving arm, every refusal (429/503) with its latency and ``Retry-After``, and the
count of each status (or transport error).
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections import defaultdict
from typing import Any

import httpx
from tqdm import tqdm

REFUSALS = (429, 503)


async def offered_load(
    url: str, lines: list[str], rate: float, duration: float, users: int, seed: int, desc: str = ""
) -> dict[str, Any]:
    """Send the stream for ``duration`` seconds; ``sent``, ``elapsed_s`` (until the last answer),
    ``statuses``, ``latencies`` (seconds per arm, answered requests) and ``refusals``."""
    rng = random.Random(seed)
    latencies: dict[str, list[float]] = defaultdict(list)
    statuses: dict[str, int] = defaultdict(int)
    refusals: list[dict[str, Any]] = []
    tasks: list[asyncio.Task[None]] = []
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=200)

    async def one(client: httpx.AsyncClient, index: int, user: int) -> None:
        payload = {"text": lines[index % len(lines)], "client": {"user_id": f"user-{user}"}}
        started = time.perf_counter()
        try:
            response = await client.post(f"{url}/v1/correct", json=payload)
        except httpx.HTTPError as error:
            statuses[type(error).__name__] += 1
            return
        seconds = time.perf_counter() - started
        statuses[str(response.status_code)] += 1
        if response.status_code == 200:
            latencies[response.json()["arm"]].append(seconds)
        elif response.status_code in REFUSALS:
            retry_after = response.headers.get("retry-after")
            refusals.append({"status": response.status_code, "seconds": seconds, "retry_after": retry_after})

    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        start = time.perf_counter()
        next_at, index = start, 0
        label = desc or f"{rate:g} req/s"
        with tqdm(total=int(rate * duration), desc=label, unit="req", file=sys.stderr, leave=False) as bar:
            while next_at - start < duration:
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
                tasks.append(asyncio.create_task(one(client, index, rng.randrange(users))))
                bar.update(1)
                index += 1
                next_at += rng.expovariate(rate)
            sent_until = time.perf_counter()
            await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - start
    return {
        "sent": index,
        "sending_s": sent_until - start,
        "elapsed_s": elapsed,
        "statuses": dict(statuses),
        "latencies": dict(latencies),
        "refusals": refusals,
    }
