"""Shadow runs: after a sampled request is answered, its sentences also go through the experiment's
shadow arm, at the lowest priority, and the two outputs are compared sentence by sentence.

A shadow run never delays the request it shadows (it starts after the answer is ready and is
awaited by nobody), never competes with served work for a place in a batch, and is dropped
first when the queue is busy or full (counted in ``gecserve_shadow_dropped_total``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from service.batching import Priority
from service.experiments.manager import ExperimentManager, Route
from service.observability.metrics import Metrics
from service.pipeline.dispatch import SentenceDispatcher
from service.pipeline.errors import RequestError
from service.pipeline.types import Timings
from service.text.units import Unit

__all__ = ["ShadowComparer"]

log = logging.getLogger(__name__)


class ShadowComparer:
    """Schedules the shadow arm's decodes of answered requests and records how they compare."""

    def __init__(
        self, dispatcher: SentenceDispatcher, experiments: ExperimentManager, metrics: Metrics, timeout_s: float
    ) -> None:
        self.dispatcher = dispatcher
        self.experiments = experiments
        self.metrics = metrics
        self.timeout_s = timeout_s
        self._tasks: set[asyncio.Task[None]] = set()

    def schedule(self, route: Route, keep_bias: float, units: Sequence[Unit], served: Sequence[str]) -> None:
        """Compare ``route.shadow``'s outputs for ``units`` (decoded with ``keep_bias``) with the ``served`` ones, in
        the background."""
        task = asyncio.create_task(self._run(route, keep_bias, list(units), list(served)), name="shadow")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, route: Route, keep_bias: float, units: list[Unit], served: list[str]) -> None:
        assert route.shadow is not None and route.experiment is not None
        await asyncio.sleep(0)  # let the answer go out first
        try:
            outputs = await self.dispatcher.decode(
                route.shadow, keep_bias, units, Priority.SHADOW, time.monotonic() + self.timeout_s, Timings()
            )
        except RequestError as error:
            self.metrics.shadow_drop(route.experiment, error.reason)
            return
        except Exception:
            log.exception("shadow run failed", extra={"experiment": route.experiment})
            self.metrics.shadow_drop(route.experiment, "error")
            return
        comparisons = [
            (unit.normalized.text, mine, theirs[0] if theirs else "")
            for unit, mine, theirs in zip(units, served, outputs, strict=True)
            if unit.decoded_by_model
        ]
        agreed, disagreed = self.experiments.record_shadow(route, comparisons)
        self.metrics.shadow_compared(route.experiment, route.arm.name, route.shadow.name, agreed, disagreed)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
