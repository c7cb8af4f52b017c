"""The experiment a replica serves: routing requests to arms, the per-arm numbers, shadow agreement,
and the admin changes (start, stop, weights), shared with the other replicas through the store.

Routing (``route``), in order: a request that names an arm (``options.backend`` or the
``X-Gecserve-Arm`` header) gets it, counted as an ``override`` and kept out of the experiment's
numbers; a request that asks for alternatives goes to the beam backend (it needs an n-best list),
also outside the experiment; a request that names a model gets the default backend on it (``model``),
outside the experiment too; with no running experiment, the default backend; otherwise the
experiment assigns: sticky by user key (``sticky``), or a random bucket for a request with no
key (``random``, the unkeyed count). A sampled share of assigned requests also names a shadow arm. An arm may run on a
model of its own (``model:``; the served models are ``model_names``): an experiment naming a model
that is not served is refused. Writers' feedback on the edits of assigned requests (``feedback``)
is reported per arm as acceptance rates, compared with the control's.

Admin changes: starting an experiment while another runs is refused (``ExperimentRunningError``)
unless the new one replaces it; weights are shares in percent, changed for some arms or all
(``change_weights``). A stopped or replaced experiment's state and numbers stay readable by name
(``report``), as they were when it stopped, until an experiment of the same name starts afresh: a
replica leaving an experiment publishes its numbers once more before it starts counting the next.

With Redis, a background task refreshes the state (so a weight change on one replica reaches all
within a second) and publishes this replica's numbers; reads merge every replica's numbers.
Redis trouble never fails a request: routing goes on with the last state known, and reads fall
back to this replica's own numbers, saying so.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from service.experiments.analysis import acceptance, compare, sample_ratio, summarise
from service.experiments.arms import ALTERNATIVES_BACKEND, BACKENDS, Arm, UnknownArmError
from service.experiments.assignment import BUCKETS, bucket_of
from service.experiments.definition import ExperimentDefinition, change_weights
from service.experiments.feedback import FeedbackLedger
from service.experiments.state import ExperimentState
from service.experiments.store import ExperimentStore
from service.observability.stats import RollingStats

__all__ = ["ExperimentManager", "ExperimentRunningError", "NoSuchExperimentError", "Route", "UnservedModelError"]

log = logging.getLogger(__name__)

STATS_BUCKET_S = 5.0
STATS_WINDOWS = (60.0, 300.0)


class NoSuchExperimentError(KeyError):
    """No experiment of that name is known (or it is not running, for changes)."""


class ExperimentRunningError(RuntimeError):
    """Another experiment runs: stop it first, or start the new one as its replacement."""

    def __init__(self, name: str) -> None:
        super().__init__(f"experiment {name!r} is running")
        self.name = name


class UnservedModelError(ValueError):
    """An experiment names a model this service does not serve."""


@dataclass(frozen=True)
class Route:
    """What serves a request: the arm, and the experiment when it assigned the request (and its run: when it
    started, which tells a run of a name from an earlier one)."""

    arm: Arm
    experiment: str | None
    kind: str  # sticky, random, override, alternatives, default
    shadow: Arm | None = None
    run: str = ""


class ExperimentManager:
    def __init__(
        self,
        default_backend: str,
        store: ExperimentStore,
        replica: str,
        keep_disagreements: int = 50,
        sync_interval_s: float = 1.0,
        rng: random.Random | None = None,
        feedback: FeedbackLedger | None = None,
    ) -> None:
        self.default = Arm.of_backend(default_backend)
        self.feedback = feedback
        self.model_names: Callable[[], list[str]] | None = None  # the served models, where arms may name one
        self.store = store
        self.replica = replica
        self.sync_interval_s = sync_interval_s
        self.state: ExperimentState | None = None
        self.stats = RollingStats(windows=STATS_WINDOWS, bucket_s=STATS_BUCKET_S)
        self._arms: dict[str, Arm] = {}
        self._assigned: Counter[str] = Counter()
        self._categories: defaultdict[str, Counter[str]] = defaultdict(Counter)  # by arm: edits by ERRANT code
        self._agreement: dict[tuple[str, str], list[int]] = {}  # (served, shadow) -> [compared, agreed]
        self._disagreements: deque[dict[str, Any]] = deque(maxlen=keep_disagreements)
        self._rng = rng or random.Random()
        self._sync_task: asyncio.Task[None] | None = None
        self._store_ok = True

    # -- lifecycle --------------------------------------------------------------------------

    async def open(self, definition: ExperimentDefinition | None) -> None:
        """Adopt the shared state; start ``definition`` (the ``--experiment`` file), replacing another
        experiment that runs, unless the store already runs that very experiment (another replica
        started it: keep its weights). ``UnservedModelError`` when it names a model that is not served."""
        if definition is not None:
            self.check_models(definition)
        try:
            current = await self.store.load()
        except RedisError as error:
            self._store_failed(error)
            current = None
        if definition is not None:
            if current is not None and current.running and current.definition == definition:
                self._adopt(current)
            else:
                await self.start(definition, replace=True, fallback_local=True)
        elif current is not None:
            self._adopt(current)
        if self.store.scope == "cluster":
            self._sync_task = asyncio.create_task(self._sync_forever(), name="experiment-sync")

    async def close(self) -> None:
        if self._sync_task is not None:
            self._sync_task.cancel()
            await asyncio.gather(self._sync_task, return_exceptions=True)
            await self._sync(publish_only=True)
        await self.store.close()

    # -- routing ----------------------------------------------------------------------------

    def known_arms(self) -> list[str]:
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
        self._assigned[arm.name] += 1
        shadow = None
        plan = state.definition.shadow
        if plan is not None and plan.arm != arm.name and self._rng.random() < plan.sample_rate:
            shadow = self.resolve(plan.arm)
        return Route(arm, state.name, "sticky" if key else "random", shadow, run=str(state.started_at))

    # -- recording --------------------------------------------------------------------------

    def record(
        self,
        route: Route,
        seconds: float,
        outcome: str,
        sentences: int = 0,
        edits: int = 0,
        stages: Mapping[str, float] | None = None,
        categories: Mapping[str, int] | None = None,
    ) -> None:
        """A finished request the experiment assigned (others are not its numbers), with its edits' ERRANT
        categories (their codes, counted)."""
        if self._current(route):
            self.stats.record_request(route.arm.name, seconds, outcome, sentences, edits, stages)
            if categories:
                self._categories[route.arm.name].update(categories)

    def record_shadow(self, route: Route, comparisons: list[tuple[str, str, str]]) -> tuple[int, int]:
        """Sentences the shadow arm also decoded, as (sentence, served output, shadow output);
        returns (agreed, disagreed)."""
        if route.shadow is None or not self._current(route):
            return 0, 0
        counts = self._agreement.setdefault((route.arm.name, route.shadow.name), [0, 0])
        agreed = 0
        for sentence, served, shadow in comparisons:
            counts[0] += 1
            if served == shadow:
                agreed += 1
            else:
                self._disagreements.appendleft(
                    {
                        "at": time.time(),
                        "sentence": sentence,
                        "served_arm": route.arm.name,
                        "served": served,
                        "shadow_arm": route.shadow.name,
                        "shadow": shadow,
                    }
                )
        counts[1] += agreed
        return agreed, len(comparisons) - agreed

    def _current(self, route: Route) -> bool:
        return route.experiment is not None and self.state is not None and route.experiment == self.state.name

    # -- admin changes ----------------------------------------------------------------------

    async def start(
        self, definition: ExperimentDefinition, replace: bool = False, fallback_local: bool = False
    ) -> ExperimentState:
        """Start ``definition`` from nothing. While another experiment runs: ``ExperimentRunningError``,
        unless ``replace``, which stops that one (its numbers stay readable, as a stopped one's do). A
        stopped experiment of the same name is forgotten: the new one's numbers start from nothing. An experiment
        naming a model that is not served is refused (``UnservedModelError``)."""
        self.check_models(definition)
        try:
            current = await self.store.load()
            if current is not None and current.running and not replace:
                raise ExperimentRunningError(current.name)
            state = ExperimentState.begin(definition, version=(current.version + 1) if current else 1)
            retired = None
            if current is not None and current.name != definition.name:
                retired = current.stopped() if current.running else current
            await self.store.save(state, current.version if current else 0, retired)
            await self.store.forget(definition.name)
        except RedisError as error:
            if not fallback_local:
                raise
            self._store_failed(error)
            state = ExperimentState.begin(definition)
        await self._switch(state)
        log.info("experiment started", extra={"experiment": definition.name, "weights": state.weights})
        return state

    def check_models(self, definition: ExperimentDefinition) -> None:
        """``UnservedModelError`` naming the models ``definition``'s arms name that are not served."""
        served = set(self.model_names()) if self.model_names is not None else set()
        missing = definition.unserved(served)
        if missing:
            raise UnservedModelError(
                f"experiment {definition.name!r} names models that are not served: {', '.join(missing)}; served: "
                f"{', '.join(sorted(served)) or 'none'} (load them first: POST /v1/models)"
            )

    def models_in_use(self) -> set[str]:
        """The models the running experiment's arms name."""
        state = self.state
        return state.definition.models() if state is not None and state.running else set()

    async def stop(self, name: str) -> ExperimentState:
        """Stop assigning requests to ``name``; it and its numbers stay readable."""
        current = await self._running(name)
        state = current.stopped()
        await self.store.save(state, current.version, retired=state)
        self._adopt(state)
        log.info("experiment stopped", extra={"experiment": name})
        return state

    async def set_weights(self, name: str, weights: Mapping[str, float]) -> ExperimentState:
        """Change some or all arms' shares (``change_weights``; ``ValueError`` when they cannot add up to
        100, ``UnknownArmError`` for an arm the experiment does not have)."""
        current = await self._running(name)
        unknown = [arm for arm in weights if arm not in current.weights]
        if unknown:
            raise UnknownArmError(unknown[0], current.arm_names)
        state = current.with_weights(change_weights(current.weights, weights))
        await self.store.save(state, current.version)
        self._adopt(state)
        log.info("experiment weights changed", extra={"experiment": name, "weights": state.weights})
        return state

    async def _running(self, name: str) -> ExperimentState:
        current = await self.store.load()
        if current is None or current.name != name or not current.running:
            raise NoSuchExperimentError(name)
        return current

    # -- shared state -----------------------------------------------------------------------

    async def _switch(self, state: ExperimentState) -> None:
        """Adopt ``state``; when it is another experiment, publish the numbers of the one left first, so
        that they stay readable as they were (a new run of the same name starts from nothing anyway)."""
        previous = self.state
        if previous is not None and previous.name != state.name:
            try:
                await self.store.publish(previous.name, self.replica, self._numbers())
            except RedisError as error:
                self._store_failed(error)
        self._adopt(state)

    def _adopt(self, state: ExperimentState) -> None:
        previous = self.state
        if previous is None or (previous.name, previous.started_at) != (state.name, state.started_at):
            self.stats.reset()
            self._agreement.clear()
            self._disagreements.clear()
            self._assigned.clear()
            self._categories.clear()
        elif previous.weights_since != state.weights_since:
            self._assigned.clear()
        self._arms = {arm.name: arm.arm() for arm in state.definition.arms}
        self.state = state

    async def _sync_forever(self) -> None:
        while True:
            await asyncio.sleep(self.sync_interval_s)
            await self._sync()

    async def _sync(self, publish_only: bool = False) -> None:
        try:
            if not publish_only:
                state = await self.store.load()
                if state is not None and (self.state is None or state.version != self.state.version):
                    await self._switch(state)
            if self.state is not None:
                await self.store.publish(self.state.name, self.replica, self._numbers())
            if not self._store_ok:
                log.info("experiment store reachable again")
            self._store_ok = True
        except RedisError as error:
            self._store_failed(error)

    def _store_failed(self, error: Exception) -> None:
        if self._store_ok:
            log.warning("experiment store unreachable; serving with the last state known", extra={"error": str(error)})
        self._store_ok = False

    def _numbers(self) -> dict[str, Any]:
        assert self.state is not None
        return {
            "replica": self.replica,
            "experiment": self.state.name,
            "started_at": self.state.started_at,
            "weights_since": self.state.weights_since,
            "stats": self.stats.export(),
            "assigned": dict(self._assigned),
            "categories": {arm: dict(counts) for arm, counts in self._categories.items()},
            "agreement": [[served, shadow, *counts] for (served, shadow), counts in self._agreement.items()],
            "disagreements": list(self._disagreements),
        }

    # -- reading ----------------------------------------------------------------------------

    async def overview(self) -> dict[str, Any]:
        state = self.state
        return {
            "scope": self.store.scope if self._store_ok else "local",
            "default_backend": self.default.name,
            "experiment": None
            if state is None
            else {"name": state.name, "running": state.running, "weights": state.weights, "version": state.version},
            "backends": {
                name: {"strategy": b.strategy, "description": b.description, "exact": b.exact}
                for name, b in BACKENDS.items()
            },
        }

    async def report(self, name: str) -> dict[str, Any]:
        """Everything the dashboard shows for ``name``, the current experiment or a stopped one, merged over
        every replica that reports (``RedisError`` for a stopped one when the store is unreachable)."""
        state = self.state
        if state is None or state.name != name:
            current = await self.store.load()  # started on another replica since this one last looked?
            if current is not None and current.name == name:
                await self._switch(current)
                state = current
        if state is not None and state.name == name:
            numbers, scope, live = [self._numbers()], self.store.scope, 1
            try:
                others = await self.store.collect(name)
                live = await self.store.live_replicas()
                numbers += [n for n in others if n["replica"] != self.replica and n["started_at"] == state.started_at]
            except RedisError as error:
                self._store_failed(error)
                scope = "local"
        else:
            state = await self.store.retired(name)
            if state is None:
                raise NoSuchExperimentError(name)
            numbers = [n for n in await self.store.collect(name) if n["started_at"] == state.started_at]
            scope, live = self.store.scope, await self.store.live_replicas()
        merged = RollingStats(windows=STATS_WINDOWS, bucket_s=STATS_BUCKET_S)
        assigned: Counter[str] = Counter()
        categories: defaultdict[str, Counter[str]] = defaultdict(Counter)
        agreement: dict[tuple[str, str], list[int]] = {}
        disagreements: list[dict[str, Any]] = []
        for part in numbers:
            merged.absorb(part["stats"])
            for arm_name, counts in part.get("categories", {}).items():
                categories[arm_name].update(counts)
            if part["weights_since"] == state.weights_since:
                assigned.update(part["assigned"])
            for served, shadow, compared, agreed in part["agreement"]:
                counts = agreement.setdefault((served, shadow), [0, 0])
                counts[0] += compared
                counts[1] += agreed
            disagreements += part["disagreements"]
        report = self._report(state, merged, assigned, agreement, disagreements, scope, live, len(numbers))
        for arm in report["arms"]:
            arm["categories"] = dict(categories[arm["name"]].most_common())
        if self.feedback is not None:
            names = [arm.name for arm in state.definition.arms]
            try:
                counts, feedback_scope = (
                    await self.feedback.counts(state.name, str(state.started_at)),
                    self.feedback.scope,
                )
            except RedisError as error:  # the latency numbers still answer; the acceptance says it is unknown
                self._store_failed(error)
                counts, feedback_scope = {}, "unavailable"
            report["acceptance"] = {"scope": feedback_scope, **acceptance(counts, report["control"], names)}
        return report

    def _report(
        self,
        state: ExperimentState,
        merged: RollingStats,
        assigned: Counter[str],
        agreement: dict[tuple[str, str], list[int]],
        disagreements: list[dict[str, Any]],
        scope: str,
        live: int,
        reporting: int,
    ) -> dict[str, Any]:
        control = state.definition.control_arm
        total_weight = sum(state.weights.values())
        own = {definition.name: definition.arm() for definition in state.definition.arms}
        arms, totals = [], {}
        for arm in own.values():
            totals[arm.name] = merged.totals(arm.name)
            arms.append(
                {
                    "name": arm.name,
                    "backend": arm.backend,
                    "model": arm.model,
                    "params": dict(arm.overrides),
                    "exact": arm.exact,
                    "weight": state.weights[arm.name],
                    "share": state.weights[arm.name] / total_weight,
                    "assigned": assigned.get(arm.name, 0),
                    "requests_per_s": merged.window(arm.name, 60)["requests_per_s"],
                    **summarise(totals[arm.name]),
                }
            )
        comparisons = [
            {"arm": name, "control": control, **compare(totals[control], totals[name])}
            for name in totals
            if name != control
        ]
        shadow = None
        if state.definition.shadow is not None:
            pairs = []
            for (served, shadow_arm), (compared, agreed) in sorted(agreement.items()):
                pair = [own.get(name) or Arm.of_backend(name) for name in (served, shadow_arm)]
                exact = all(arm.exact for arm in pair) and pair[0].model == pair[1].model
                pairs.append(
                    {
                        "served": served,
                        "shadow": shadow_arm,
                        "compared": compared,
                        "agreed": agreed,
                        "agreement": agreed / compared if compared else None,
                        "expected": 1.0 if exact else None,
                        "same_model": pair[0].model == pair[1].model,
                    }
                )
            shadow = {
                **state.definition.shadow.model_dump(),
                "pairs": pairs,
                "disagreements": sorted(disagreements, key=lambda d: -d["at"])[: self._disagreements.maxlen],
            }
        return {
            "name": state.name,
            "description": state.definition.description,
            "status": "running" if state.running else "stopped",
            "started_at": state.started_at,
            "stopped_at": state.stopped_at,
            "weights_since": state.weights_since,
            "version": state.version,
            "scope": scope,
            "replicas": {"live": live, "reporting": reporting},
            "control": control,
            "arms": arms,
            "comparisons": comparisons,
            "sample_ratio": sample_ratio(assigned, state.weights),
            "shadow": shadow,
            "timeline": {
                "bucket_s": merged.bucket_s,
                "arms": {name: merged.timeline(name) for name in totals},
            },
        }
