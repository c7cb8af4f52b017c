"""Routing: which arm serves a request. What the pipeline asks of every request, and nothing else.

In order: a request that names an arm (``options.backend`` or the ``X-Gecserve-Arm`` header) gets it
(``override``); a request that asks for alternatives goes to the beam backend, which gives an n-best list
(``alternatives``); a request that names a model gets the default backend on it (``model``); with no running
experiment, the default backend (``default``). Otherwise the running experiment assigns an arm through its bucket
table (``assignment.py``): sticky by user key, else session key (``sticky``), or a random bucket for a request
with neither (``random``). Only these last two are the experiment's: the others carry no experiment.

The router routes with the experiment state it is given (``follow``): ``sync.py`` hands it every state this
replica adopts. It counts nothing, samples no shadow and touches no store: that is the bookkeeping's
(``tally.py``, ``shadowing.py``, ``sync.py``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from service.experiments.arms import ALTERNATIVES_BACKEND, BACKENDS, Arm, UnknownArmError
from service.experiments.assignment import BUCKETS, bucket_of
from service.experiments.state import ExperimentState

__all__ = ["Route", "Router"]


@dataclass(frozen=True)
class Route:
    """What serves a request: the arm, and the experiment when it assigned the request (and its run: when it
    started, which tells a run of a name from an earlier one); the shadow arm, when the request was sampled for
    one (``ShadowSampler``)."""

    arm: Arm
    experiment: str | None
    kind: str  # sticky, random, override, alternatives, model, default
    shadow: Arm | None = None
    run: str = ""


class Router:
    """Routes requests to arms: a named arm, the beam backend for alternatives, the default backend, or the
    running experiment's sticky weighted assignment."""

    def __init__(self, default_backend: str, rng: random.Random) -> None:
        self.default = Arm.of_backend(default_backend)
        self.state: ExperimentState | None = None  # the experiment state routed with, running or not
        self._arms: dict[str, Arm] = {}
        self._rng = rng

    def follow(self, state: ExperimentState) -> None:
        """Route with ``state`` (and its arms) from now on."""
        self._arms = {arm.name: arm.arm() for arm in state.definition.arms}
        self.state = state

    def known_arms(self) -> list[str]:
        """Every arm a request may name: the experiment's, then the backends."""
        return list(dict.fromkeys([*self._arms, *BACKENDS]))

    def resolve(self, name: str) -> Arm:
        """The arm called ``name``: the experiment's, else a backend (``UnknownArmError`` otherwise)."""
        arm = self._arms.get(name)
        if arm is not None:
            return arm
        if name in BACKENDS:
            return Arm.of_backend(name)
        raise UnknownArmError(name, self.known_arms())

    def route(
        self,
        requested: str | None,
        user_id: str | None,
        session_id: str | None,
        alternatives: bool,
        model: str | None = None,
    ) -> Route:
        """The route of a request that names ``requested`` (an arm, or none), with these keys, asking for
        ``alternatives`` or not, naming ``model`` or not (see the module docstring)."""
        if requested:
            return Route(self.resolve(requested), None, "override")
        if alternatives:
            return Route(Arm.of_backend(ALTERNATIVES_BACKEND), None, "alternatives")
        if model:
            return Route(self.default, None, "model")
        state = self.state
        if state is None or not state.running:
            return Route(self.default, None, "default")
        key = user_id or session_id
        bucket = bucket_of(state.name, key) if key else self._rng.randrange(BUCKETS)
        arm = self._arms[state.definition.arms[state.table[bucket]].name]
        return Route(arm, state.name, "sticky" if key else "random", run=str(state.started_at))
