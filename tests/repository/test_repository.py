"""The model repository in-process, no server started: loads offered once ready, the default model, swaps that
drain the replaced model while requests hold it, unloads (which hand frozen objects back to the collector), and the
refusals (past ``max_models``, past the memory budget, the default's unload, an unknown name).

The loader is the service's own (``service.wiring.ModelBuilder``, as the gateway builds it), loading the tiny
fixture model with its engines, preprocessing and queues; the tests only note what the repository lists while a
load runs.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from service.config import Settings
from service.pipeline.served import ServedModel
from service.repository.repository import (
    ModelInUseError,
    ModelLimitError,
    ModelRepository,
    ModelState,
    UnknownModelError,
)
from service.repository.sources import ModelSource
from service.wiring import Gateway
from tests.conftest import FIXTURE_MODEL
from tests.waiting import wait_until

MAIN, SECOND = ModelSource("main", FIXTURE_MODEL), ModelSource("second", FIXTURE_MODEL)
MIB = 2**20


class Loads:
    """The gateway's model builder as the repository's loader, noting what the repository lists while it loads."""

    def __init__(self, gateway: Gateway) -> None:
        self.builder = gateway.builder
        self.repository: ModelRepository[ServedModel] | None = None
        self.listed_while_loading: list[dict[str, Any]] = []  # GET /v1/models, as each load began
        self.offered_while_loading: list[list[str]] = []  # the names served then

    async def __call__(self, source: ModelSource) -> ServedModel:
        assert self.repository is not None
        self.listed_while_loading.append(self.repository.describe())
        self.offered_while_loading.append(self.repository.names())
        return await self.builder(source)


@asynccontextmanager
async def repository(
    max_models: int = 4, budget_bytes: int = 0, estimate: Callable[[ModelSource], int] = lambda source: 0
) -> AsyncIterator[tuple[ModelRepository[ServedModel], Loads]]:
    """A repository over the real loader; closed (every model drained) and the gateway stopped afterwards."""
    gateway = Gateway(Settings(model_path=FIXTURE_MODEL, model_variant="int8", cache_size=0, inference_workers=1))
    loads = Loads(gateway)
    served = ModelRepository(loads, max_models, budget_bytes, drain_timeout_s=10.0, estimate=estimate)
    loads.repository = served
    try:
        yield served, loads
    finally:
        await served.close()
        await gateway.stop()


def state_of(served: ModelRepository[ServedModel], name: str) -> list[str]:
    """The states ``GET /v1/models`` lists under ``name`` (a swap lists the new model and the draining one)."""
    return [model["state"] for model in served.describe()["models"] if model["name"] == name]


def test_a_model_is_offered_once_loaded_and_the_first_one_loaded_is_the_default() -> None:
    async def scenario() -> None:
        async with repository() as (served, loads):
            assert served.default is None and served.names() == []
            with pytest.raises(UnknownModelError, match="served: none"):
                served.get()
            main = await served.load(MAIN)
            (during,) = loads.listed_while_loading
            assert loads.offered_while_loading == [[]] and during["default"] is None
            assert during["models"] == [
                {"name": "main", "state": "loading", "path": str(FIXTURE_MODEL), "default": False}
            ]
            assert served.get() is served.get("main") is served.default is main
            assert main.state == ModelState.READY and main.name == "main"
            second = await served.load(SECOND)
            assert served.get() is main and served.get("second") is second  # a later load leaves the default
            listing = served.describe()
            assert listing["default"] == "main" and [m["name"] for m in listing["models"]] == ["main", "second"]
            assert [m["default"] for m in listing["models"]] == [True, False]
            assert {m["state"] for m in listing["models"]} == {"ready"}
            assert await served.load(SECOND, make_default=True) is served.get()

    asyncio.run(scenario())


def test_a_swap_offers_the_new_model_at_once_and_drains_the_old_one_after_its_requests() -> None:
    async def scenario() -> None:
        async with repository() as (served, _):
            old = await served.load(MAIN)
            with old.serving():  # a request routed to the old model before the swap
                new = await served.load(MAIN)
                assert served.get("main") is new is not old and served.default is new
                await wait_until(lambda: old.state == ModelState.DRAINING, 10, what="the old model draining")
                assert sorted(state_of(served, "main")) == ["draining", "ready"]
                assert served.draining == [old] and old.active == 1  # its request is still served
            await wait_until(lambda: not served.draining, 30, what="the old model drained")
            assert state_of(served, "main") == ["ready"] and new.state == ModelState.READY

    asyncio.run(scenario())


def test_unload_drains_a_model_but_the_default_stays() -> None:
    async def scenario() -> None:
        async with repository() as (served, _):
            await served.load(MAIN)
            second = await served.load(SECOND)
            gc.freeze()  # as ``gecserve serve`` does once loaded: the unload hands the objects back to the collector
            with pytest.raises(ModelInUseError, match="'main' is the default model"):
                await served.unload("main")
            assert await served.unload("second") is second
            assert second.state == ModelState.DRAINING and served.names() == ["main"] and not served.draining
            assert gc.get_freeze_count() == 0  # the unloaded model's cycles can be freed
            with pytest.raises(UnknownModelError, match="no model named 'second' is served; served: main"):
                served.get("second")
            with pytest.raises(UnknownModelError):
                await served.unload("second")

    asyncio.run(scenario())


def test_a_load_past_max_models_is_refused_but_a_swap_is_not() -> None:
    async def scenario() -> None:
        async with repository(max_models=1) as (served, loads):
            main = await served.load(MAIN)
            with pytest.raises(ModelLimitError, match="1 models are loaded and GECSERVE_MAX_MODELS is 1"):
                await served.load(SECOND)
            assert len(loads.listed_while_loading) == 1  # refused before the loader ran
            assert served.names() == ["main"] and served.get() is main
            assert await served.load(MAIN) is not main  # the model it replaces does not count

    asyncio.run(scenario())


def test_a_load_past_the_memory_budget_is_refused() -> None:
    """The models loaded (their measured memory) and the new one's estimate together must fit the budget."""
    budget = 1000 * MIB
    estimates = {"main": 400 * MIB}

    async def scenario() -> None:
        async with repository(budget_bytes=budget, estimate=lambda source: estimates[source.name]) as (served, _):
            main = await served.load(MAIN)
            estimates["second"] = budget - main.memory_bytes + 1
            with pytest.raises(ModelLimitError, match=r"'second' needs about \d+ MiB; the loaded models take \d+"):
                await served.load(SECOND)
            assert served.names() == ["main"]
            estimates["second"] = budget - main.memory_bytes  # fits exactly
            await served.load(SECOND)
            assert served.names() == ["main", "second"]
            assert served.describe()["memory_budget_mib"] == 1000.0

    asyncio.run(scenario())


def test_close_drains_every_model() -> None:
    async def scenario() -> None:
        async with repository() as (served, _):
            models = [await served.load(MAIN), await served.load(SECOND)]
            await served.close()
            assert served.names() == [] and served.describe()["models"] == []
            assert [model.state for model in models] == [ModelState.DRAINING] * 2

    asyncio.run(scenario())
