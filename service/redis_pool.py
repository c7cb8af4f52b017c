"""Redis clients of the service: a bounded pool per client that waits for a free connection.

redis-py's default asyncio pool raises "Too many connections" once 100 are in use, which failed
requests of a gateway under load (a 503 "the job queue is unreachable" with Redis up); a blocking
pool makes a command wait for a connection instead, up to its own timeout.
"""

from __future__ import annotations

from redis import asyncio as aioredis

__all__ = ["POOL_SIZE", "redis_client"]

POOL_SIZE = 64  # connections per client; commands beyond it wait for one to come back


def redis_client(url: str, timeout_s: float, connect_timeout_s: float | None = None) -> aioredis.Redis:
    """A client for ``url`` whose commands wait at most ``timeout_s`` for a pooled connection and as
    long for Redis's answer."""
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=POOL_SIZE,
        timeout=timeout_s,
        socket_timeout=timeout_s,
        socket_connect_timeout=timeout_s if connect_timeout_s is None else connect_timeout_s,
    )
    return aioredis.Redis(connection_pool=pool)
