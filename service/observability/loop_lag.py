"""The event loop's lag: how late the loop runs a timer, measured all the time by a task of its own.

Every ``interval_s`` the task asks the loop to wake it ``interval_s`` later and, once woken, records how much
later than asked it ran (``loop.time()`` then, less the time it asked for). An idle loop wakes it within a
fraction of a millisecond; a loop busy with other callbacks (parsing, preprocessing, answering) wakes it only
when they yield, so the lag is the wait any callback made ready at that moment had before it ran: the time a
request loses before its handler runs. Node.js services export the same measure (``eventloop_lag_seconds``);
here ``gecserve_event_loop_lag_seconds`` (the latest measure) and
``gecserve_event_loop_lag_distribution_seconds`` (every measure, a histogram for its percentiles). The server's
admission counts it too, smoothed (``service.pipeline.load_admission``): ``record`` is called on the loop's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

__all__ = ["LOOP_LAG_INTERVAL_S", "measure_loop_lag", "watch_loop_lag"]

LOOP_LAG_INTERVAL_S = 0.05  # 20 measures a second: a few microseconds of the loop's time each


async def measure_loop_lag(record: Callable[[float], None], interval_s: float = LOOP_LAG_INTERVAL_S) -> None:
    """Forever: sleep ``interval_s`` and ``record`` how many seconds later than that the loop woke us."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + interval_s
        await asyncio.sleep(interval_s)
        record(max(0.0, loop.time() - due))


@contextlib.asynccontextmanager
async def watch_loop_lag(
    record: Callable[[float], None], interval_s: float = LOOP_LAG_INTERVAL_S
) -> AsyncIterator[None]:
    """``measure_loop_lag`` on the running loop while the block runs."""
    task = asyncio.create_task(measure_loop_lag(record, interval_s), name="loop-lag")
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
