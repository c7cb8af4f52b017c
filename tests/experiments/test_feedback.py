"""The feedback ledger, in the process and in a real Redis: counts by run, arm, type and action; an id counted
once; refused feedback counting nothing; expiry and the bound on remembered ids; two replicas at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from service.experiments.feedback import (
    Counted,
    EditOrigin,
    FeedbackLedger,
    MemoryLedger,
    RedisLedger,
    UnknownEditsError,
    feedback_ledger,
)
from service.redis_pool import redis_client
from tests.conftest import REDIS_URL
from tests.waiting import wait_until

KINDS = ["memory", "redis"]
RUN = "1718000000.5"


def origin(arm: str = "accelerated", kind: str = "spelling", experiment: str = "ab", run: str = RUN) -> EditOrigin:
    return EditOrigin("req-1", experiment, run, arm, "gec-default", "3", kind)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def ledger_of(
    kind: str, prefix: str, ttl_s: float = 60.0, max_edits: int = 100, clock: Callable[[], float] | None = None
) -> AsyncIterator[FeedbackLedger]:
    if kind == "memory":
        ledger: FeedbackLedger = MemoryLedger(ttl_s, max_edits, 2**30, clock or time.monotonic)
    else:
        ledger = RedisLedger(redis_client(REDIS_URL, 2.0), prefix, ttl_s, max_edits)
    try:
        yield ledger
    finally:
        await ledger.close()


@pytest.mark.parametrize("kind", KINDS)
def test_feedback_is_counted_by_arm_type_and_action(kind: str, redis_prefix: str) -> None:
    async def scenario() -> None:
        async with ledger_of(kind, redis_prefix) as ledger:
            await ledger.remember(
                {
                    "a1": origin("accelerated", "spelling"),
                    "a2": origin("accelerated", "spelling"),
                    "a3": origin("accelerated", "verb"),
                    "b1": origin("autoregressive", "spelling"),
                }
            )
            result = await ledger.record(["a1", "a2", "b1"], "accepted")
            assert [c.edit_id for c in result.counted] == ["a1", "a2", "b1"] and result.repeated == []
            assert result.counted[2] == Counted("b1", origin("autoregressive", "spelling"), "accepted", None)
            await ledger.record(["a3"], "dismissed")
            assert await ledger.counts("ab", RUN) == {
                "accelerated": {"spelling": {"accepted": 2}, "verb": {"dismissed": 1}},
                "autoregressive": {"spelling": {"accepted": 1}},
            }
            assert await ledger.counts("ab", "another run") == {}
            with pytest.raises(ValueError, match="action"):
                await ledger.record(["a1"], "liked")

    asyncio.run(scenario())


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_action_twice_counts_once_and_the_other_action_moves_the_count(kind: str, redis_prefix: str) -> None:
    async def scenario() -> None:
        async with ledger_of(kind, redis_prefix) as ledger:
            await ledger.remember({"e1": origin(), "e2": origin()})
            first = await ledger.record(["e1", "e1", "e2"], "accepted")  # a duplicate within a call counts once
            assert [c.edit_id for c in first.counted] == ["e1", "e2"]
            again = await ledger.record(["e1"], "accepted")
            assert again.counted == [] and again.repeated == ["e1"]
            assert await ledger.counts("ab", RUN) == {"accelerated": {"spelling": {"accepted": 2}}}
            changed = await ledger.record(["e1", "e2"], "dismissed")
            assert [(c.edit_id, c.action, c.replaced) for c in changed.counted] == [
                ("e1", "dismissed", "accepted"),
                ("e2", "dismissed", "accepted"),
            ]
            assert await ledger.counts("ab", RUN) == {"accelerated": {"spelling": {"dismissed": 2}}}
            back = await ledger.record(["e2"], "accepted")
            assert back.counted[0].replaced == "dismissed"
            assert await ledger.counts("ab", RUN) == {"accelerated": {"spelling": {"accepted": 1, "dismissed": 1}}}
            # an answer carrying the id again starts it afresh: its counts stay, and it counts once more
            await ledger.remember({"e2": origin("autoregressive")})
            fresh = await ledger.record(["e2"], "accepted")
            assert fresh.counted == [Counted("e2", origin("autoregressive"), "accepted", None)]
            assert await ledger.counts("ab", RUN) == {
                "accelerated": {"spelling": {"accepted": 1, "dismissed": 1}},
                "autoregressive": {"spelling": {"accepted": 1}},
            }

    asyncio.run(scenario())


@pytest.mark.parametrize("kind", KINDS)
def test_feedback_naming_an_unknown_id_counts_nothing(kind: str, redis_prefix: str) -> None:
    async def scenario() -> None:
        async with ledger_of(kind, redis_prefix) as ledger:
            await ledger.remember({"k1": origin(), "k2": origin()})
            with pytest.raises(UnknownEditsError) as raised:
                await ledger.record(["k1", "nope", "k2", "gone"], "accepted")
            assert raised.value.edit_ids == ["nope", "gone"]
            assert isinstance(raised.value, KeyError) and "nope" in str(raised.value)
            assert await ledger.counts("ab", RUN) == {}
            assert [c.edit_id for c in (await ledger.record(["k1", "k2"], "accepted")).counted] == ["k1", "k2"]

    asyncio.run(scenario())


def test_memory_ids_expire_after_the_ttl() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        async with ledger_of("memory", "", ttl_s=10.0, clock=clock) as ledger:
            await ledger.remember({"old": origin()})
            clock.now += 6
            await ledger.remember({"new": origin()})
            clock.now += 5  # "old" is 11 s old, "new" 5 s
            with pytest.raises(UnknownEditsError) as raised:
                await ledger.record(["new", "old"], "accepted")
            assert raised.value.edit_ids == ["old"]
            assert (await ledger.record(["new"], "accepted")).counted[0].edit_id == "new"
            clock.now += 10
            with pytest.raises(UnknownEditsError):
                await ledger.record(["new"], "dismissed")
            assert await ledger.counts("ab", RUN) == {"accelerated": {"spelling": {"accepted": 1}}}  # counts stay

    asyncio.run(scenario())


def test_redis_ids_expire_after_the_ttl(redis_prefix: str) -> None:
    async def scenario() -> None:
        async with ledger_of("redis", redis_prefix, ttl_s=1.0) as ledger:
            await ledger.remember({"short": origin()})
            assert 0 < await ledger.redis.pttl(f"{redis_prefix}feedback:edit:short") <= 1000

            async def expired() -> bool:
                try:
                    await ledger.record(["short"], "dismissed")
                except UnknownEditsError:
                    return True
                return False

            await wait_until(expired, timeout=10.0, every=0.05, what="the edit id expiring")
            # the poll may have counted the id before it expired, once at most
            assert (await ledger.counts("ab", RUN)) in ({}, {"accelerated": {"spelling": {"dismissed": 1}}})

    asyncio.run(scenario())


@pytest.mark.parametrize("kind", KINDS)
def test_the_oldest_ids_beyond_the_bound_are_forgotten(kind: str, redis_prefix: str) -> None:
    async def scenario() -> None:
        async with ledger_of(kind, redis_prefix, max_edits=3) as ledger:
            await ledger.remember({"m1": origin(), "m2": origin()})
            await ledger.remember({"m3": origin(), "m4": origin(), "m5": origin()})
            with pytest.raises(UnknownEditsError) as raised:
                await ledger.record(["m1", "m2", "m3", "m4", "m5"], "accepted")
            assert raised.value.edit_ids == ["m1", "m2"]
            assert len((await ledger.record(["m3", "m4", "m5"], "accepted")).counted) == 3
            if kind == "redis":
                redis = ledger.redis
                assert await redis.zcard(f"{redis_prefix}feedback:edits") == 3
                assert not await redis.exists(f"{redis_prefix}feedback:edit:m1", f"{redis_prefix}feedback:edit:m2")

    asyncio.run(scenario())


@pytest.mark.parametrize("kind", KINDS)
def test_counts_are_kept_apart_by_experiment_run(kind: str, redis_prefix: str) -> None:
    async def scenario() -> None:
        async with ledger_of(kind, redis_prefix) as ledger:
            await ledger.remember(
                {
                    "r1": origin(run="100.0"),
                    "r2": origin(run="200.0"),
                    "r3": origin(experiment="other", run="100.0"),
                    "r4": origin(experiment="", run="", arm="default"),
                }
            )
            await ledger.record(["r1", "r2", "r3", "r4"], "accepted")
            one = {"accelerated": {"spelling": {"accepted": 1}}}
            assert await ledger.counts("ab", "100.0") == one
            assert await ledger.counts("ab", "200.0") == one
            assert await ledger.counts("other", "100.0") == one
            assert await ledger.counts("", "") == {"default": {"spelling": {"accepted": 1}}}

    asyncio.run(scenario())


def test_two_replicas_taking_the_same_ids_at_once_count_them_once(redis_prefix: str) -> None:
    async def scenario() -> None:
        async with (
            ledger_of("redis", redis_prefix, max_edits=1000) as first,
            ledger_of("redis", redis_prefix, max_edits=1000) as second,
        ):
            ids = [f"c{i:03d}" for i in range(200)]
            await first.remember({edit_id: origin() for edit_id in ids})
            for attempt in range(5):
                results = await asyncio.gather(
                    first.record(ids, "accepted"),
                    second.record(ids, "accepted"),
                    first.record(ids[::-1], "accepted"),
                    second.record(ids[::-1], "accepted"),
                )
                counted = [c.edit_id for result in results for c in result.counted]
                assert sorted(counted) == (sorted(ids) if attempt == 0 else [])  # each id counted once in all
                assert sum(len(result.repeated) for result in results) == 4 * len(ids) - len(counted)
                assert await second.counts("ab", RUN) == {"accelerated": {"spelling": {"accepted": 200}}}
            moved = await asyncio.gather(first.record(ids, "dismissed"), second.record(ids, "dismissed"))
            assert sorted(c.edit_id for result in moved for c in result.counted) == sorted(ids)
            assert await first.counts("ab", RUN) == {"accelerated": {"spelling": {"dismissed": 200}}}

    asyncio.run(scenario())


def test_the_factory_picks_redis_with_a_url(redis_prefix: str) -> None:
    async def scenario() -> None:
        local = feedback_ledger(None, redis_prefix, 60.0, 10, 2**20)
        shared = feedback_ledger(REDIS_URL, redis_prefix, 60.0, 10, 2**20)
        try:
            assert isinstance(local, MemoryLedger) and local.scope == "local"
            assert isinstance(shared, RedisLedger) and shared.scope == "cluster"
            await shared.remember({"f1": origin()})
            assert (await shared.record(["f1"], "accepted")).counted[0].origin == origin()
        finally:
            await local.close()
            await shared.close()

    asyncio.run(scenario())
