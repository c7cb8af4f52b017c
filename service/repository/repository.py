"""The models a service serves at once, by name, with one default (``GECSERVE_MODELS``, ``GECSERVE_MODEL_PATH``).

It holds any model that is ``Served``: what serving one takes (its preprocessing, queues and dispatcher:
``service.pipeline.served.ServedModel``) lies above it, in the pipeline. ``load`` builds a model with the ``Loader``
it was given (``service.wiring``: engines or job streams, warmed up) and only then offers it, so a model takes
traffic once it is ready; a load under a name already served swaps it: the new model is offered in one step, and the
old one drains (the requests holding it finish, then its queues) in the background, listed as ``draining``
meanwhile. ``unload`` takes a model out of service and drains it. Loads and unloads run one at a time. Refused, with
the reason: a load beyond ``max_models`` or beyond the memory budget (each loaded model's engines as measured when
it loaded, and the new one's graph files, times its engines, as the estimate), and the unload of the default model.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar

from service.engine.collector import thaw_objects
from service.repository.sources import ModelSource

__all__ = [
    "Loader",
    "ModelInUseError",
    "ModelLimitError",
    "ModelRepository",
    "ModelState",
    "Served",
    "UnknownModelError",
]

log = logging.getLogger(__name__)


class ModelState(enum.StrEnum):
    LOADING = "loading"
    READY = "ready"
    DRAINING = "draining"


class Served(Protocol):
    """What the repository asks of a model it serves."""

    name: str
    memory_bytes: int  # what loading it added to the resident set (the memory budget counts it)
    load_s: float  # seconds to load and warm up

    @property
    def version(self) -> str: ...

    async def drain(self, timeout: float) -> None:
        """Stop being offered; finish the requests holding it and what its queues hold, up to ``timeout`` seconds."""

    def describe(self, default: bool) -> dict[str, Any]:
        """What ``GET /v1/models`` says of it."""


Model = TypeVar("Model", bound=Served)
Loader = Callable[[ModelSource], Awaitable[Model]]


class UnknownModelError(KeyError):
    """No model of that name is served."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(name)
        self.name = name
        self.message = f"no model named {name!r} is served; served: {', '.join(known) or 'none'}"

    def __str__(self) -> str:
        return self.message


class ModelLimitError(RuntimeError):
    """The load would go past ``max_models`` or the memory budget (the message says which)."""


class ModelInUseError(RuntimeError):
    """The model cannot be unloaded now (it is the default)."""


class ModelRepository(Generic[Model]):
    """The served models (see the module docstring)."""

    def __init__(
        self,
        loader: Loader[Model],
        max_models: int,
        memory_budget_bytes: int,
        drain_timeout_s: float,
        estimate: Callable[[ModelSource], int],
    ) -> None:
        self.loader = loader
        self.max_models = max_models
        self.memory_budget_bytes = memory_budget_bytes
        self.drain_timeout_s = drain_timeout_s
        self.estimate = estimate
        self.models: dict[str, Model] = {}
        self.default_name: str | None = None
        self.loading: dict[str, ModelSource] = {}
        self.draining: list[Model] = []
        self._lock = asyncio.Lock()
        self._drains: set[asyncio.Task[None]] = set()

    # -- serving ------------------------------------------------------------------------------

    def get(self, name: str | None = None) -> Model:
        """The model called ``name`` (None: the default); ``UnknownModelError`` when none is served by that name."""
        model = self.models.get(name if name is not None else self.default_name or "")
        if model is None:
            raise UnknownModelError(name or "(default)", sorted(self.models))
        return model

    @property
    def default(self) -> Model | None:
        return self.models.get(self.default_name or "")

    def names(self) -> list[str]:
        return list(self.models)

    # -- changes ------------------------------------------------------------------------------

    async def load(self, source: ModelSource, make_default: bool = False) -> Model:
        """Load, warm up and offer ``source``; under a name already served, swap it (see the module docstring)."""
        async with self._lock:
            replaced = self.models.get(source.name)
            self._check_room(source, replaced)
            self.loading[source.name] = source
            try:
                model = await self.loader(source)
            finally:
                del self.loading[source.name]
            self.models[source.name] = model
            if make_default or self.default_name is None:
                self.default_name = source.name
            log.info(
                "model loaded",
                extra={"model": source.name, "version": model.version, "load_s": round(model.load_s, 3)},
            )
        if replaced is not None:
            self._drain_later(replaced)
        return model

    async def unload(self, name: str) -> Model:
        """Stop offering ``name`` and drain it (refused for the default model)."""
        async with self._lock:
            model = self.get(name)
            if name == self.default_name:
                raise ModelInUseError(
                    f"{name!r} is the default model: make another model the default first (load it with default)"
                )
            del self.models[name]
        await self._drain(model)
        return model

    def _check_room(self, source: ModelSource, replaced: Model | None) -> None:
        others = [model for model in self.models.values() if model is not replaced]
        if len(others) + 1 > self.max_models:
            raise ModelLimitError(
                f"{len(others)} models are loaded and GECSERVE_MAX_MODELS is {self.max_models}: unload one first"
            )
        if self.memory_budget_bytes:
            used = sum(model.memory_bytes for model in [*others, *self.draining])
            needed = self.estimate(source)
            if used + needed > self.memory_budget_bytes:
                mib = 2**20
                raise ModelLimitError(
                    f"{source.name!r} needs about {needed / mib:.0f} MiB; the loaded models take {used / mib:.0f} "
                    f"of the GECSERVE_MODEL_MEMORY_MB budget of {self.memory_budget_bytes / mib:.0f} MiB"
                )

    def _drain_later(self, model: Model) -> None:
        task = asyncio.create_task(self._drain(model), name=f"drain-{model.name}")
        self._drains.add(task)
        task.add_done_callback(self._drains.discard)

    async def _drain(self, model: Model) -> None:
        self.draining.append(model)
        try:
            await model.drain(self.drain_timeout_s)
        finally:
            self.draining.remove(model)
            thaw_objects()  # a frozen model's cycles would never be freed (service.engine.collector)
        log.info("model unloaded", extra={"model": model.name, "version": model.version})

    async def close(self) -> None:
        """Drain every model (the servers no longer take requests)."""
        await asyncio.gather(*self._drains, return_exceptions=True)
        models, self.models = list(self.models.values()), {}
        await asyncio.gather(*(self._drain(model) for model in models))

    # -- reading ------------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """What ``GET /v1/models`` answers: every model, loading, ready or draining, and the limits."""
        listed = [model.describe(default=name == self.default_name) for name, model in self.models.items()]
        listed += [model.describe(default=False) for model in self.draining]
        listed += [
            {"name": name, "state": str(ModelState.LOADING), "path": str(source.path), "default": False}
            for name, source in self.loading.items()
        ]
        return {
            "default": self.default_name,
            "models": listed,
            "max_models": self.max_models,
            "memory_budget_mib": round(self.memory_budget_bytes / 2**20, 1) if self.memory_budget_bytes else None,
            "memory_mib": round(sum(model.memory_bytes for model in self.models.values()) / 2**20, 1),
        }
