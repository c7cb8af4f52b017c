"""The table of Redis keys (``service.redis_keys``) is what the service writes: every store, run on a real Redis under
a test prefix, writes keys of the table's families only, each of its family's type and with an expiry exactly when
the table gives one; together they write every family. The deployment page's table (docs/deployment.md, "Redis
keys") is the code's, and each family's ``built_by`` module builds its keys from it."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import redis.asyncio as aioredis

import service.redis_keys as redis_keys
from service.api.access.ratelimit import Bucket, RateLimiter
from service.batching import Job, deadline_in
from service.batching.batcher import JobFailedError
from service.batching.streams import ensure_group
from service.experiments.feedback import EditOrigin, RedisLedger
from service.experiments.state import ExperimentState
from service.experiments.store import RedisStore
from service.pipeline.cache import RedisCache
from service.pipeline.dictionary import RedisWordStore
from service.redis_keys import FAMILIES, KeyFamily
from tests.batching.test_streams import Echo, Harness, ghost_reads, queued, serve
from tests.conftest import REDIS_URL
from tests.experiments.test_store import DEFINITION

DEPLOYMENT_PAGE = Path(__file__).resolve().parent.parent / "docs" / "deployment.md"


def matcher(family: KeyFamily, prefix: str) -> re.Pattern[str]:
    """The keys of ``family`` under ``prefix``: each field any non-empty text."""
    return re.compile(re.sub(r"\\\{\w+\\\}", ".+", re.escape(prefix + family.pattern)))


def test_a_family_builds_its_keys_and_their_stem() -> None:
    assert redis_keys.FEEDBACK_COUNTS.key("p:", experiment="ab", run="7") == "p:feedback:counts:ab:7"
    assert redis_keys.FEEDBACK_COUNTS.stem("p:") == "p:feedback:counts:"
    assert redis_keys.JOBS.key("p:", model="m@1/int8", queue="q") == "p:m@1/int8:jobs:q"
    assert redis_keys.WORDS.key("p:", user="a{b}") == "p:words:a{b}"  # a field's text is taken as it is
    for family in FAMILIES:
        fields = {name: "x" for name in re.findall(r"\{(\w+)\}", family.pattern)}
        matching = [f for f in FAMILIES if matcher(f, "p:").fullmatch(family.key("p:", **fields))]
        assert matching == [family]


def test_the_deployment_page_is_the_table() -> None:
    section = DEPLOYMENT_PAGE.read_text(encoding="utf-8").split("\n## Redis keys\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `{prefix}")]
    assert rows == [
        f"| `{{prefix}}{f.pattern}` | {f.type} | {f.holds} | {f.expiry} | `{f.built_by}` |" for f in FAMILIES
    ]


def test_each_family_is_built_by_its_module() -> None:
    names = {family: name for name, family in vars(redis_keys).items() if isinstance(family, KeyFamily)}
    assert set(names) == set(FAMILIES) and len(FAMILIES) == len(set(f.pattern for f in FAMILIES))
    for family, name in names.items():
        source = inspect.getsource(importlib.import_module(family.built_by))
        assert re.search(rf"\b{name}\.(key|stem)\(", source), f"{family.built_by} builds no {name} key"


async def _written_by_the_stores(prefix: str) -> None:
    """Run every store once under ``prefix``; the stream transport's keys are checked while it runs."""
    cache = RedisCache(aioredis.Redis.from_url(REDIS_URL), prefix, ttl_s=60)
    await cache.set_many([("sentence", "Sentence.")])
    await cache.close()
    words = RedisWordStore(aioredis.Redis.from_url(REDIS_URL), prefix, max_words_per_user=10)
    await words.add("writer", "gecserve")
    await words.close()
    limiter = RateLimiter(REDIS_URL, prefix, on_error=lambda: None)
    await limiter.take("editor", Bucket(rate=1.0, burst=2))
    await limiter.close()
    ledger = RedisLedger(aioredis.Redis.from_url(REDIS_URL), prefix, ttl_s=60, max_edits=10)
    await ledger.remember({"e1": EditOrigin("r1", "ab", "1", "accelerated", "gec-default", "3", "verb")})
    await ledger.record(["e1"], "accepted")
    await ledger.close()
    store = RedisStore(REDIS_URL, prefix)
    state = ExperimentState.begin(DEFINITION)
    await store.save(state, 0)
    other = ExperimentState.begin(DEFINITION.model_copy(update={"name": "other"}), version=state.version + 1)
    await store.save(other, state.version, retired=state.stopped())
    await store.publish("other", "replica-1", {"replica": "replica-1"})
    await store.close()


async def _streams(prefix: str, check: Callable[[str], Awaitable[None]]) -> None:
    async with Harness(prefix) as h:
        worker = await serve(h.consumer(Echo()))
        await h.batcher.submit(Job(tokens=[1], deadline=deadline_in(10)))
        await check(prefix)  # while the gateway lives: its reply stream goes with it
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
    async with Harness(prefix) as h:  # a job delivered too often: dead-lettered
        await ensure_group(h.client, h.keys.jobs("q"))
        submitted = asyncio.ensure_future(h.batcher.submit(Job(tokens=[7], deadline=deadline_in(30))))
        await queued(h, 1)
        await ghost_reads(h, times=3)
        worker = await serve(h.consumer(Echo(), claim_idle_s=0.3, max_deliveries=3))
        with pytest.raises(JobFailedError):
            await asyncio.wait_for(submitted, 10)
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)


def test_the_stores_write_the_table_and_nothing_else(redis_prefix: str) -> None:
    seen: dict[str, KeyFamily] = {}

    async def check(prefix: str) -> None:
        client = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
        try:
            async for key in client.scan_iter(match=f"{prefix}*"):
                (family,) = [f for f in FAMILIES if matcher(f, prefix).fullmatch(key)] or [None]
                assert family is not None, f"{key} is of no family"
                kind = (await client.type(key)).replace("zset", "sorted set")
                ttl = await client.pttl(key)
                assert kind == family.type, key
                assert (ttl == -1) == family.expiry.startswith("none"), (key, ttl, family.expiry)
                seen[key] = family
        finally:
            await client.aclose()

    async def scenario() -> None:
        await _written_by_the_stores(redis_prefix)
        await _streams(redis_prefix, check)
        await check(redis_prefix)

    asyncio.run(scenario())
    assert set(seen.values()) == set(FAMILIES)
