"""Shadow sampling: which of the requests the experiment assigned are also decoded by its shadow arm.

An experiment file may name a shadow arm and a sample rate (``shadow:``). That share of the requests the
experiment assigns to another arm is sampled, at random; the pipeline decodes their sentences with the shadow arm
too, after the answer (``service.pipeline.shadow``), and ``tally.py`` counts how the two agree.
"""

from __future__ import annotations

import random
from dataclasses import replace

from service.experiments.router import Route, Router

__all__ = ["ShadowSampler"]


class ShadowSampler:
    """Samples the running experiment's shadow arm onto a share of its routes. ``rng`` is the router's own, so that
    a seeded run draws the bucket of a request without a key and then its sample, as one stream."""

    def __init__(self, router: Router, rng: random.Random) -> None:
        self.router = router
        self._rng = rng

    def sample(self, route: Route) -> Route:
        """``route``, with the shadow arm when the experiment that assigned it samples it for one."""
        state = self.router.state
        if route.experiment is None or state is None:
            return route
        plan = state.definition.shadow
        if plan is not None and plan.arm != route.arm.name and self._rng.random() < plan.sample_rate:
            return replace(route, shadow=self.router.resolve(plan.arm))
        return route
