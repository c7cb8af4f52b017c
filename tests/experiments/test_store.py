"""The experiment stores: in-process, and in a real Redis (state with optimistic writes, published numbers,
stopped experiments kept by name)."""

from __future__ import annotations

import asyncio

import pytest

from service.experiments.definition import ExperimentDefinition
from service.experiments.state import ExperimentState
from service.experiments.store import ConflictError, LocalStore, RedisStore
from tests.conftest import REDIS_URL

DEFINITION = ExperimentDefinition.model_validate(
    {"name": "ab", "arms": [{"name": "accelerated", "weight": 1}, {"name": "autoregressive", "weight": 1}]}
)


@pytest.mark.parametrize("kind", ["local", "redis"])
def test_state_round_trips_and_conflicting_writes_are_refused(kind: str, redis_prefix: str) -> None:
    async def scenario() -> None:
        store = LocalStore() if kind == "local" else RedisStore(REDIS_URL, redis_prefix)
        try:
            assert await store.load() is None
            state = ExperimentState.begin(DEFINITION)
            await store.save(state, 0)
            assert await store.load() == state
            changed = state.with_weights({"accelerated": 3, "autoregressive": 1})
            await store.save(changed, state.version)
            with pytest.raises(ConflictError):
                await store.save(state.with_weights({"accelerated": 1, "autoregressive": 9}), state.version)
            loaded = await store.load()
            assert loaded.weights == {"accelerated": 3.0, "autoregressive": 1.0} and loaded.table == changed.table
        finally:
            await store.close()

    asyncio.run(scenario())


def test_redis_keeps_every_replicas_numbers(redis_prefix: str) -> None:
    async def scenario() -> None:
        first, second = RedisStore(REDIS_URL, redis_prefix), RedisStore(REDIS_URL, redis_prefix)
        try:
            await first.publish("ab", "r1", {"replica": "r1", "n": 1})
            await second.publish("ab", "r2", {"replica": "r2", "n": 2})
            await second.publish("ab", "r2", {"replica": "r2", "n": 3})  # a replica's latest numbers replace its own
            assert sorted(n["n"] for n in await first.collect("ab")) == [1, 3]
            assert await first.live_replicas() == 2
            await first.forget("ab")
            assert await second.collect("ab") == []
        finally:
            await first.close()
            await second.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("kind", ["local", "redis"])
def test_a_stopped_experiment_is_kept_with_the_change_that_stopped_it(kind: str, redis_prefix: str) -> None:
    async def scenario() -> None:
        store = LocalStore() if kind == "local" else RedisStore(REDIS_URL, redis_prefix)
        try:
            state = ExperimentState.begin(DEFINITION)
            await store.save(state, 0)
            assert await store.retired("ab") is None
            other = ExperimentState.begin(DEFINITION.model_copy(update={"name": "other"}), version=state.version + 1)
            stopped = state.stopped()
            with pytest.raises(ConflictError):  # a refused write keeps nothing
                await store.save(other, state.version + 5, retired=stopped)
            assert await store.retired("ab") is None
            await store.save(other, state.version, retired=stopped)
            kept = await store.retired("ab")
            assert kept == stopped and not kept.running and kept.stopped_at is not None
            assert (await store.load()).name == "other"
            await store.publish("ab", "r1", {"replica": "r1"})
            await store.forget("ab")  # an experiment of the same name starts afresh
            assert await store.retired("ab") is None and await store.collect("ab") == []
        finally:
            await store.close()

    asyncio.run(scenario())
