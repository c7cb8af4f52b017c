"""Token buckets: in this process, shared through a real Redis, and a Redis that is down."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis

from service.api.access.ratelimit import Bucket, RateLimiter, retry_after
from tests.conftest import REDIS_URL
from tests.system.server import free_port

SLOW = Bucket(rate=0.01, burst=5)  # a token every 100 s: nothing refills during a test
# Seconds: tells takes decided at once (microseconds; the limiter gives Redis 0.25 s at most) from takes held on
# a Redis that is down (its retries); a bound, not a speed limit.
HELD_S = 10.0


def errors() -> tuple[list[None], RateLimiter]:
    seen: list[None] = []
    return seen, RateLimiter(None, "unused:", lambda: seen.append(None))


async def takes(limiter: RateLimiter, name: str, bucket: Bucket, count: int) -> list[float]:
    return list(await asyncio.gather(*(limiter.take(name, bucket) for _ in range(count))))


def test_a_local_bucket_gives_its_burst_then_the_wait_for_a_token() -> None:
    _, limiter = errors()
    waits = asyncio.run(takes(limiter, "alice", SLOW, 7))
    assert waits[:5] == [0.0] * 5
    assert all(95 < wait <= 100 for wait in waits[5:])  # 1 token at 0.01/s
    assert asyncio.run(limiter.take("bob", SLOW)) == 0.0  # each key its own bucket


def test_a_local_bucket_refills_at_its_rate() -> None:
    _, limiter = errors()
    fast = Bucket(rate=20, burst=1)
    assert asyncio.run(limiter.take("alice", fast)) == 0.0
    assert 0 < asyncio.run(limiter.take("alice", fast)) <= 0.05
    time.sleep(0.06)
    assert asyncio.run(limiter.take("alice", fast)) == 0.0


def test_retry_after_is_whole_seconds_at_least_one() -> None:
    assert [retry_after(w) for w in (0.001, 1.0, 1.2, 99.5)] == ["1", "1", "2", "100"]


def test_two_replicas_draw_on_one_redis_bucket_atomically(redis_prefix: str) -> None:
    """Two limiters (two replicas) taking at once: together they admit the bucket's burst, not twice it."""

    async def run() -> list[float]:
        failures: list[None] = []
        # Atomicity is the point here, not the timeout: a loaded machine may stall a take past the default 0.25 s.
        first = RateLimiter(REDIS_URL, redis_prefix, lambda: failures.append(None), timeout_s=5.0)
        second = RateLimiter(REDIS_URL, redis_prefix, lambda: failures.append(None), timeout_s=5.0)
        try:
            waits = await asyncio.gather(takes(first, "alice", SLOW, 20), takes(second, "alice", SLOW, 20))
            other = await second.take("bob", SLOW)
        finally:
            await first.close()
            await second.close()
        assert not failures and other == 0.0
        return [w for group in waits for w in group]

    waits = asyncio.run(run())
    assert waits.count(0.0) == SLOW.burst
    assert all(95 < w <= 100 for w in waits if w)


def test_a_redis_that_is_down_falls_back_to_this_process_and_is_counted(redis_prefix: str) -> None:
    failures: list[None] = []

    async def run() -> tuple[list[float], float]:
        limiter = RateLimiter(f"redis://127.0.0.1:{free_port()}/0", redis_prefix, lambda: failures.append(None))
        started = time.monotonic()
        try:
            waits = [await limiter.take("alice", SLOW) for _ in range(7)]
        finally:
            await limiter.close()
        return waits, time.monotonic() - started

    waits, seconds = asyncio.run(run())
    assert waits[:5] == [0.0] * 5 and all(w > 0 for w in waits[5:])  # the local bucket decided
    assert len(failures) == 1  # then Redis was left alone for the backoff: one failure, not one per request
    assert seconds < HELD_S  # and nothing waited on it


@pytest.mark.parametrize("burst", [1, 3])
def test_the_redis_bucket_expires_once_it_would_be_full(redis_prefix: str, burst: int) -> None:
    async def run() -> None:
        limiter = RateLimiter(REDIS_URL, redis_prefix, lambda: None)
        try:
            await limiter.take("alice", Bucket(rate=10, burst=burst))
        finally:
            await limiter.close()

    started = time.monotonic()
    asyncio.run(run())
    ttl = redis.Redis.from_url(REDIS_URL).pttl(f"{redis_prefix}ratelimit:alice")
    elapsed_ms = (time.monotonic() - started) * 1000
    # one token to refill at 10/s (100 ms), plus a second, less the time since it was set
    assert 1100 - elapsed_ms - 1 <= ttl <= 1100
