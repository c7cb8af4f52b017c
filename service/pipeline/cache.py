"""The sentence cache: a sentence already decoded with the same model and decoding is not decoded again.

Two levels. ``MemoryCache``, an LRU in the process, is always first. ``RedisCache``, shared by every
replica (``--redis URL``), is second: keys are hashes of the full cache key (model, version and
variant, the arm's decoding, the normalised sentence), so a new model version or another decoding
never reads an old entry, and every entry carries a TTL. Configure Redis with
``maxmemory-policy volatile-lru``: under memory pressure it evicts cache entries (they have a TTL)
and never the experiment state or the job streams (they have none).

The Redis level never fails or stalls a request: each call is bounded by a timeout, and after a
failure the level is skipped (logged once, counted) until a retry time that backs off
exponentially; the first call that succeeds again restores it. ``TieredCache`` reads level by
level, copies hits into the levels above, writes every level, and reports hits and misses per level.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Protocol

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from service.redis_keys import CACHE

__all__ = ["MemoryCache", "RedisCache", "SentenceCache", "TieredCache"]

log = logging.getLogger(__name__)

LevelObserver = Callable[[str, int, int], None]  # (level, hits, misses)


class SentenceCache(Protocol):
    async def get_many(self, keys: Sequence[str]) -> list[str | None]: ...

    async def set_many(self, items: Sequence[tuple[str, str]]) -> None: ...

    async def close(self) -> None: ...


class MemoryCache:
    """A bounded least-recently-used map (``capacity`` 0 disables it)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        found: list[str | None] = []
        for key in keys:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            found.append(value)
        return found

    async def set_many(self, items: Sequence[tuple[str, str]]) -> None:
        if self.capacity <= 0:
            return
        for key, value in items:
            self._items[key] = value
            self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    async def close(self) -> None:
        self._items.clear()


class RedisCache:
    """Entries in Redis (``service.redis_keys.CACHE``: a hash of the key) with a TTL; see the module docstring.

    ``on_error(operation)`` is called for every failed call (the metrics count them).
    """

    def __init__(
        self,
        client: aioredis.Redis,
        prefix: str,
        ttl_s: float,
        timeout_s: float = 0.1,
        max_backoff_s: float = 30.0,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.ttl_ms = max(1, int(ttl_s * 1000))
        self.timeout_s = timeout_s
        self.max_backoff_s = max_backoff_s
        self.on_error = on_error or (lambda operation: None)
        self._down_until = 0.0
        self._backoff_s = 0.0

    def redis_key(self, key: str) -> str:
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return CACHE.key(self.prefix, digest=digest)

    @property
    def available(self) -> bool:
        """False while backing off after a failure."""
        return time.monotonic() >= self._down_until

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        if not keys or not self.available:
            return [None] * len(keys)
        try:
            async with asyncio.timeout(self.timeout_s):
                values = await self.client.mget([self.redis_key(key) for key in keys])
        except (RedisError, OSError, TimeoutError) as error:
            self._failed("get", error)
            return [None] * len(keys)
        self._succeeded()
        return [value.decode("utf-8") if isinstance(value, bytes) else value for value in values]

    async def set_many(self, items: Sequence[tuple[str, str]]) -> None:
        if not items or not self.available:
            return
        try:
            async with asyncio.timeout(self.timeout_s):
                async with self.client.pipeline(transaction=False) as pipe:
                    for key, value in items:
                        pipe.set(self.redis_key(key), value, px=self.ttl_ms)
                    await pipe.execute()
        except (RedisError, OSError, TimeoutError) as error:
            self._failed("set", error)
            return
        self._succeeded()

    def _failed(self, operation: str, error: BaseException) -> None:
        self.on_error(operation)
        if self._backoff_s == 0.0:
            log.warning("redis sentence cache unreachable; serving without it", extra={"error": repr(error)})
        self._backoff_s = min(self.max_backoff_s, max(0.5, 2 * self._backoff_s))
        self._down_until = time.monotonic() + self._backoff_s

    async def close(self) -> None:
        await self.client.aclose()

    def _succeeded(self) -> None:
        if self._backoff_s:
            log.info("redis sentence cache reachable again")
            self._backoff_s = 0.0


class TieredCache:
    """Levels read in order (first is fastest), named for the metrics; ``observe(level, hits, misses)``."""

    def __init__(self, levels: Sequence[tuple[str, SentenceCache]], observe: LevelObserver) -> None:
        self.levels = list(levels)
        self.observe = observe

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        found: list[str | None] = [None] * len(keys)
        missing = list(range(len(keys)))
        for depth, (name, level) in enumerate(self.levels):
            if not missing:
                break
            values = await level.get_many([keys[i] for i in missing])
            hits = [(i, value) for i, value in zip(missing, values, strict=True) if value is not None]
            self.observe(name, len(hits), len(missing) - len(hits))
            for i, value in hits:
                found[i] = value
            if hits:
                for _, upper in self.levels[:depth]:
                    await upper.set_many([(keys[i], value) for i, value in hits])
            missing = [i for i in missing if found[i] is None]
        return found

    async def set_many(self, items: Sequence[tuple[str, str]]) -> None:
        for _, level in self.levels:
            await level.set_many(items)

    async def close(self) -> None:
        for _, level in self.levels:
            await level.close()
