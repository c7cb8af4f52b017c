"""The sentence cache levels: the in-memory LRU, Redis (a real server), and the two in tiers."""

from __future__ import annotations

import asyncio
import logging

import redis
import redis.asyncio as aioredis

from service.pipeline.cache import MemoryCache, RedisCache, TieredCache
from tests.conftest import REDIS_URL

UNREACHABLE = "redis://127.0.0.1:9/0"  # nothing listens on the discard port


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


def test_redis_entries_are_hashed_keys_with_a_ttl(redis_prefix: str) -> None:
    key = "gec-default\x1f2\x1fint8\x1faggressive\x1fparams\x1fI has a apple \ud800."

    async def scenario() -> tuple[list, list]:
        client = aioredis.Redis.from_url(REDIS_URL)
        cache = RedisCache(client, redis_prefix, ttl_s=60)
        await cache.set_many([(key, '["I have an apple."]')])
        found = await cache.get_many([key, key + "!", key])
        await client.aclose()
        return found, [cache.redis_key(key)]

    found, (stored,) = asyncio.run(scenario())
    assert found == ['["I have an apple."]', None, '["I have an apple."]']
    plain = redis.Redis.from_url(REDIS_URL)
    assert stored.startswith(redis_prefix + "cache:") and "apple" not in stored
    assert 0 < plain.pttl(stored) <= 60_000
    plain.close()


def test_an_unreachable_redis_costs_one_timeout_then_is_skipped_until_it_may_be_back(caplog) -> None:
    errors: list[str] = []

    async def scenario() -> tuple[list, int, int, bool]:
        client = aioredis.Redis.from_url(UNREACHABLE, socket_connect_timeout=0.05)
        # Every command, alone or in a pipeline, first takes a connection from the pool: count those.
        pool, connections = client.connection_pool, []
        get_connection = pool.get_connection

        async def counted(*args, **kwargs):
            connections.append(None)
            return await get_connection(*args, **kwargs)

        pool.get_connection = counted
        cache = RedisCache(client, "x:", ttl_s=60, timeout_s=0.2, on_error=errors.append)
        first = await cache.get_many(["a", "b"])
        tried = len(connections)
        for _ in range(50):  # backing off: no network call at all
            await cache.get_many(["a"])
            await cache.set_many([("a", "1")])
        skipped = len(connections) - tried
        down = not cache.available
        await client.aclose()
        return first, tried, skipped, down

    with caplog.at_level(logging.WARNING, logger="service.pipeline.cache"):
        first, tried, skipped, down = asyncio.run(scenario())
    assert first == [None, None] and down
    assert tried >= 1, "the first lookup did not reach for Redis: nothing was counted"
    # Causal, not a speed limit: while backing off, not one of the 100 calls asked for a connection.
    assert errors == ["get"] and skipped == 0
    assert sum("unreachable" in record.message for record in caplog.records) == 1


def test_the_backoff_grows_and_a_success_restores_the_level(redis_prefix: str) -> None:
    async def scenario() -> tuple[list[float], bool, list]:
        client = aioredis.Redis.from_url(REDIS_URL)
        cache = RedisCache(client, redis_prefix, ttl_s=60, max_backoff_s=4)
        backoffs = []
        for _ in range(5):
            cache._failed("get", ConnectionError("test"))
            backoffs.append(cache._backoff_s)
        cache._down_until = 0.0  # the retry time has come
        await cache.set_many([("k", "v")])
        restored = cache.available and cache._backoff_s == 0.0
        found = await cache.get_many(["k"])
        await client.aclose()
        return backoffs, restored, found

    backoffs, restored, found = asyncio.run(scenario())
    assert backoffs == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert restored and found == ["v"]


def test_tiers_read_in_order_fill_the_levels_above_and_report_each_level(redis_prefix: str) -> None:
    seen: list[tuple[str, int, int]] = []

    async def scenario() -> tuple[list, list]:
        client = aioredis.Redis.from_url(REDIS_URL)
        shared = RedisCache(client, redis_prefix, ttl_s=60)
        await shared.set_many([("in-redis", "r")])
        memory = MemoryCache(10)
        await memory.set_many([("in-memory", "m")])
        tiers = TieredCache([("memory", memory), ("redis", shared)], lambda *counts: seen.append(counts))
        found = await tiers.get_many(["in-memory", "in-redis", "nowhere"])
        backfilled = await memory.get_many(["in-redis"])
        await tiers.set_many([("new", "n")])
        written = [await memory.get_many(["new"]), await shared.get_many(["new"])]
        await client.aclose()
        return found + backfilled, written

    found, written = asyncio.run(scenario())
    assert found == ["m", "r", None, "r"]
    assert seen == [("memory", 1, 2), ("redis", 1, 1)]
    assert written == [["n"], ["n"]]
