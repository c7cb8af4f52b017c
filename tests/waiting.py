"""Waiting in tests: poll the condition a test waits for, with a bound that tells "soon" from "never".

A fixed sleep that stands for "until X has happened" is a race on a loaded machine (too short) and time lost
on an idle one (too long); these helpers poll X instead. Their bound is not a speed limit: it only stops a
test that would otherwise wait forever. A sleep whose point is letting time pass (a deadline that must
expire, a check that something never happens) stays a sleep, and says so.

Both count real seconds (``time.perf_counter``), so a test that moves a fake ``time.monotonic`` does not
shorten the bound.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

__all__ = ["wait_for", "wait_until"]


def wait_for(condition: Callable[[], object], timeout: float = 60.0, every: float = 0.05, what: str = "") -> None:
    """Poll until ``condition()`` holds (fails after ``timeout`` seconds: a generous bound, not a race)."""
    end = time.perf_counter() + timeout
    while not condition():
        assert time.perf_counter() < end, f"{what or 'condition'} not reached in {timeout:g} s"
        time.sleep(every)


async def wait_until(
    condition: Callable[[], object | Awaitable[object]], timeout: float = 30.0, every: float = 0.002, what: str = ""
) -> None:
    """``wait_for`` inside an event loop; ``condition`` may be a coroutine function (a Redis query, say)."""
    end = time.perf_counter() + timeout
    while True:
        held = condition()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        assert time.perf_counter() < end, f"{what or 'condition'} not reached in {timeout:g} s"
        await asyncio.sleep(every)
