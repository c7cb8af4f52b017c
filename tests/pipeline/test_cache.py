"""The in-memory sentence cache."""

from __future__ import annotations

import asyncio

from service.pipeline.cache import MemoryCache, cache_key


def test_lru_evicts_the_least_recently_used() -> None:
    async def scenario() -> list:
        cache = MemoryCache(2)
        await cache.set_many([("a", "1"), ("b", "2")])
        await cache.get_many(["a"])
        await cache.set_many([("c", "3")])
        return await cache.get_many(["a", "b", "c"])

    assert asyncio.run(scenario()) == ["1", None, "3"]


def test_zero_capacity_disables() -> None:
    async def scenario() -> list:
        cache = MemoryCache(0)
        await cache.set_many([("a", "1")])
        return await cache.get_many(["a"])

    assert asyncio.run(scenario()) == [None]


def test_keys_separate_models_versions_and_arms() -> None:
    keys = {cache_key(m, v, a, "Same sentence.") for m in ("x", "y") for v in ("1", "2") for a in ("p", "q")}
    assert len(keys) == 8
