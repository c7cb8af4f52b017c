"""Per-key token buckets, shared by every replica through Redis.

A bucket holds up to ``burst`` tokens and gains ``rate`` a second; a request takes one, and one
that finds less than a token is refused with the time until there is one (``Retry-After``).

With ``GECSERVE_REDIS_URL`` a bucket lives in Redis (``{prefix}ratelimit:{key name}``: tokens and
when they were counted), and one Lua script refills and takes in a single atomic step (EVALSHA),
so replicas cannot race between reading and writing it, and their combined admissions follow one
bucket. The script reads Redis's clock, so the replicas' own clocks do not matter, and gives the
bucket a TTL of the time it takes to fill (a full bucket and no bucket are the same).

Without Redis each process has its own buckets: N replicas admit up to N times a key's rate.

When Redis fails (an error, or no answer within ``timeout_s``) the request is decided by this
process's own bucket instead: the limiter fails open to per-replica limits rather than refuse
or hold requests on a store outage. The failure is counted (``on_error``) and logged once per
outage, and Redis is left alone for a backoff that doubles from 0.5 s up to ``max_backoff_s``,
so a down Redis costs at most one timeout per backoff, never one per request. (``limits`` has no
token bucket, and ``pyrate-limiter``'s Redis bucket keeps a timestamp per request; the script
below is the whole algorithm.)
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from redis.exceptions import RedisError

from service.error_reasons import ErrorReason
from service.pipeline.errors import RequestError
from service.redis_keys import RATE_LIMIT
from service.redis_pool import redis_client

__all__ = ["Bucket", "RateLimitedError", "RateLimiter", "retry_after"]

log = logging.getLogger(__name__)

# KEYS[1]: the bucket; ARGV: rate (tokens/s), burst. Returns {1 if taken else 0, seconds until a token}.
TAKE = """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(state[1]), tonumber(state[2])
if tokens == nil or at == nil then tokens, at = burst, now end
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local taken, wait = 0, 0
if tokens >= 1 then
  tokens, taken = tokens - 1, 1
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return {taken, tostring(wait)}
"""


class RateLimitedError(RequestError):
    reason = ErrorReason.RATE_LIMITED


@dataclass(frozen=True)
class Bucket:
    rate: float  # tokens per second, > 0
    burst: int  # capacity, >= 1


def retry_after(wait: float) -> str:
    """``Retry-After`` (whole seconds, at least 1) for a wait in seconds."""
    return str(max(1, math.ceil(wait)))


class RateLimiter:
    """Token buckets by key name, in Redis when ``redis_url`` is given, else (and while it fails) here."""

    def __init__(
        self,
        redis_url: str | None,
        prefix: str,
        on_error: Callable[[], None],
        timeout_s: float = 0.25,
        max_backoff_s: float = 30.0,
    ) -> None:
        self.prefix = prefix
        self.on_error = on_error
        self.timeout_s = timeout_s
        self.max_backoff_s = max_backoff_s
        self.client = redis_client(redis_url, timeout_s) if redis_url else None
        self._take = self.client.register_script(TAKE) if self.client is not None else None
        self._local: dict[str, tuple[float, float]] = {}  # name -> (tokens, monotonic time counted)
        self._down_until = 0.0
        self._backoff_s = 0.0

    async def take(self, name: str, bucket: Bucket) -> float:
        """Take a token from ``name``'s bucket: 0.0 when taken, else the seconds until one is there."""
        if self._take is not None and time.monotonic() >= self._down_until:
            try:
                async with asyncio.timeout(self.timeout_s):
                    key = RATE_LIMIT.key(self.prefix, key=name)
                    taken, wait = await self._take(keys=[key], args=[bucket.rate, bucket.burst])
            except (RedisError, OSError, TimeoutError) as error:
                self._failed(error)
            else:
                if self._backoff_s:
                    log.info("redis rate limiter reachable again")
                    self._backoff_s = 0.0
                return 0.0 if int(taken) else float(wait)
        return self._take_here(name, bucket)

    def _take_here(self, name: str, bucket: Bucket) -> float:
        now = time.monotonic()
        tokens, at = self._local.get(name, (float(bucket.burst), now))
        tokens = min(float(bucket.burst), tokens + (now - at) * bucket.rate)
        if tokens >= 1:
            self._local[name] = (tokens - 1, now)
            return 0.0
        self._local[name] = (tokens, now)
        return (1 - tokens) / bucket.rate

    def _failed(self, error: BaseException) -> None:
        self.on_error()
        if self._backoff_s == 0.0:
            log.warning(
                "redis rate limiter unreachable; this replica's own buckets decide meanwhile",
                extra={"error": repr(error)},
            )
        self._backoff_s = min(self.max_backoff_s, max(0.5, 2 * self._backoff_s))
        self._down_until = time.monotonic() + self._backoff_s

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()
