"""The admin changes of the shared experiment: open at start-up, start, stop, change weights.

Starting an experiment while another runs is refused (``ExperimentRunningError``) unless the new one replaces it;
weights are shares in percent, changed for some arms or all (``change_weights``). A stopped or replaced
experiment's state stays readable by name (``report.py``) until an experiment of the same name starts afresh. An
arm may run on a model of its own (``model:``; the served models are ``model_names``): an experiment naming a model
that is not served is refused. Each change is written to the store and adopted here at once (``sync.py``); the
other replicas adopt it within a second.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from redis.exceptions import RedisError

from service.experiments.arms import UnknownArmError
from service.experiments.definition import ExperimentDefinition, change_weights
from service.experiments.state import ExperimentState, NoSuchExperimentError
from service.experiments.sync import ExperimentSync

__all__ = ["ExperimentAdmin", "ExperimentRunningError", "UnservedModelError"]

log = logging.getLogger(__name__)


class ExperimentRunningError(RuntimeError):
    """Another experiment runs: stop it first, or start the new one as its replacement."""

    def __init__(self, name: str) -> None:
        super().__init__(f"experiment {name!r} is running")
        self.name = name


class UnservedModelError(ValueError):
    """An experiment names a model this service does not serve."""


class ExperimentAdmin:
    """Opens, starts, stops and reweighs experiments through ``sync``'s store."""

    def __init__(self, sync: ExperimentSync) -> None:
        self.sync = sync
        self.model_names: Callable[[], list[str]] | None = None  # the served models, where arms may name one

    async def open(self, definition: ExperimentDefinition | None) -> None:
        """Adopt the shared state; start ``definition`` (the ``--experiment`` file), replacing another
        experiment that runs, unless the store already runs that very experiment (another replica
        started it: keep its weights). ``UnservedModelError`` when it names a model that is not served.
        Then keep in step with the store."""
        if definition is not None:
            self.check_models(definition)
        current = await self.sync.load()
        if definition is not None:
            if current is not None and current.running and current.definition == definition:
                self.sync.adopt(current)
            else:
                await self.start(definition, replace=True, fallback_local=True)
        elif current is not None:
            self.sync.adopt(current)
        self.sync.start()

    async def start(
        self, definition: ExperimentDefinition, replace: bool = False, fallback_local: bool = False
    ) -> ExperimentState:
        """Start ``definition`` from nothing. While another experiment runs: ``ExperimentRunningError``,
        unless ``replace``, which stops that one (its numbers stay readable, as a stopped one's do). A
        stopped experiment of the same name is forgotten: the new one's numbers start from nothing. An experiment
        naming a model that is not served is refused (``UnservedModelError``)."""
        self.check_models(definition)
        store = self.sync.store
        try:
            current = await store.load()
            if current is not None and current.running and not replace:
                raise ExperimentRunningError(current.name)
            state = ExperimentState.begin(definition, version=(current.version + 1) if current else 1)
            retired = None
            if current is not None and current.name != definition.name:
                retired = current.stopped() if current.running else current
            await store.save(state, current.version if current else 0, retired)
            await store.forget(definition.name)
        except RedisError as error:
            if not fallback_local:
                raise
            self.sync.store_failed(error)
            state = ExperimentState.begin(definition)
        await self.sync.switch(state)
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

    def using(self, model: str) -> str | None:
        """The running experiment whose arms run on ``model``, if any."""
        state = self.sync.state
        return state.name if state is not None and state.running and model in state.definition.models() else None

    async def stop(self, name: str) -> ExperimentState:
        """Stop assigning requests to ``name``; it and its numbers stay readable."""
        current = await self._running(name)
        state = current.stopped()
        await self.sync.store.save(state, current.version, retired=state)
        self.sync.adopt(state)
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
        await self.sync.store.save(state, current.version)
        self.sync.adopt(state)
        log.info("experiment weights changed", extra={"experiment": name, "weights": state.weights})
        return state

    async def _running(self, name: str) -> ExperimentState:
        current = await self.sync.store.load()
        if current is None or current.name != name or not current.running:
            raise NoSuchExperimentError(name)
        return current
