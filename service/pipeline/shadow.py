"""Shadow runs: after a sampled request is answered, its sentences also go through the experiment's
shadow arm, at the lowest priority, and the two outputs are compared sentence by sentence.

The shadow arm may run on another model than the served one (an experiment comparing model versions):
the texts are then planned again by that model's preprocessing, and the sentences both models read
are compared. Agreement is expected to be 100% only between exact arms on one model.

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
from service.experiments.router import Route
from service.experiments.tally import Tally
from service.observability.metrics import Metrics
from service.pipeline.errors import RequestError
from service.pipeline.served import ServedModel
from service.pipeline.types import Timings
from service.text.units import Unit

__all__ = ["ShadowComparer"]

log = logging.getLogger(__name__)


class ShadowComparer:
    """Schedules the shadow arm's decodes of answered requests and records how they compare."""

    def __init__(self, tally: Tally, metrics: Metrics, timeout_s: float) -> None:
        self.tally = tally
        self.metrics = metrics
        self.timeout_s = timeout_s
        self._tasks: set[asyncio.Task[None]] = set()

    def schedule(
        self,
        route: Route,
        model: ServedModel,
        keep_bias: float,
        texts: Sequence[str],
        units: Sequence[Unit],
        served: Sequence[str],
        served_by: ServedModel,
    ) -> None:
        """Compare ``route.shadow``'s outputs on ``model`` (decoded with ``keep_bias``) with the ``served`` ones of
        ``units`` (``texts``' units as ``served_by`` planned them), in the background."""
        run = self._run(route, model, keep_bias, list(texts), list(units), list(served), model is not served_by)
        task = asyncio.create_task(run, name="shadow")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(
        self,
        route: Route,
        model: ServedModel,
        keep_bias: float,
        texts: list[str],
        units: list[Unit],
        served: list[str],
        replan: bool,
    ) -> None:
        assert route.shadow is not None and route.experiment is not None
        await asyncio.sleep(0)  # let the answer go out first
        try:
            with model.serving():
                mine = [unit for plan in await model.preprocessor.plan(texts) for unit in plan] if replan else units
                outputs = await model.dispatcher.decode(
                    route.shadow, keep_bias, mine, Priority.SHADOW, time.monotonic() + self.timeout_s, Timings()
                )
        except RequestError as error:
            self.metrics.shadow_drop(route.experiment, error.reason)
            return
        except Exception:
            log.exception("shadow run failed", extra={"experiment": route.experiment})
            self.metrics.shadow_drop(route.experiment, "error")
            return
        theirs = {
            unit.normalized.text: out.texts[0] if out.texts else "" for unit, out in zip(mine, outputs, strict=True)
        }
        comparisons = [
            (unit.normalized.text, output, theirs[unit.normalized.text])
            for unit, output in zip(units, served, strict=True)
            if unit.decoded_by_model and unit.normalized.text in theirs
        ]
        agreed, disagreed = self.tally.record_shadow(route, comparisons)
        self.metrics.shadow_compared(route.experiment, route.arm.name, route.shadow.name, agreed, disagreed)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
