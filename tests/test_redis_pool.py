"""The service's Redis clients wait for a pooled connection instead of failing past the pool's size."""

from __future__ import annotations

import asyncio

from service.redis_pool import POOL_SIZE, redis_client
from tests.conftest import REDIS_URL


def test_more_concurrent_commands_than_connections_all_succeed(redis_prefix: str) -> None:
    """Three times the pool's size of commands that each hold a connection for 50 ms (a blocking pop
    on an empty list): all answered (redis-py's default pool raised "Too many connections" at 100)."""

    async def scenario() -> list[object]:
        client = redis_client(REDIS_URL, timeout_s=10)
        try:
            return await asyncio.gather(*(client.blpop([f"{redis_prefix}empty"], 0.05) for _ in range(3 * POOL_SIZE)))
        finally:
            await client.aclose()

    assert asyncio.run(scenario()) == [None] * (3 * POOL_SIZE)
