"""The writers' own words (``service.pipeline.dictionary``): the memory store and the Redis store on the real Redis,
held to the same behaviour; the Redis one shared by two clients as by two replicas, and bounded under a race."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from redis import asyncio as aioredis

from service.pipeline.dictionary import (
    MAX_WORD_CHARS,
    DictionaryFullError,
    MemoryWordStore,
    RedisWordStore,
    WordStore,
    check_word,
    word_store,
)
from tests.conftest import REDIS_URL

BOUND = 5


def redis_store(prefix: str, bound: int = BOUND) -> RedisWordStore:
    return RedisWordStore(aioredis.Redis.from_url(REDIS_URL), prefix, bound)


@pytest.fixture(params=["memory", "redis"])
def make_store(request, redis_prefix: str) -> Callable[[], WordStore]:
    """A factory of stores of one kind (Redis ones share the test's prefix, as replicas do)."""
    if request.param == "memory":
        return lambda: MemoryWordStore(BOUND, max_users=100)
    return lambda: redis_store(redis_prefix)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())


def test_add_list_delete(make_store) -> None:
    async def scenario() -> None:
        store = make_store()
        try:
            assert await store.words("ann") == []
            assert await store.add("ann", "gecserve") is True
            assert await store.add("ann", "Zorbling") is True
            assert await store.add("ann", "añadir") is True
            assert await store.add("ann", "GECserve") is True  # case-sensitive: another word
            assert await store.words("ann") == ["GECserve", "Zorbling", "añadir", "gecserve"]  # code-point order
            assert await store.all_words("ann") == {"gecserve", "Zorbling", "añadir", "GECserve"}
            assert await store.words("ann", offset=1, limit=2) == ["Zorbling", "añadir"]
            assert await store.words("ann", offset=3) == ["gecserve"]
            assert await store.words("ann", offset=9, limit=2) == []
            assert await store.words("ann", limit=0) == []
            assert await store.words("bob") == [] and await store.all_words("bob") == frozenset()
            assert await store.delete("ann", "Zorbling") is True
            assert await store.delete("ann", "zorbling") is False
            assert await store.delete("bob", "gecserve") is False  # another writer's words are not his
            assert await store.words("ann") == ["GECserve", "añadir", "gecserve"]
        finally:
            await store.close()

    run(scenario)


def test_adding_and_deleting_twice_change_nothing(make_store) -> None:
    async def scenario() -> None:
        store = make_store()
        try:
            assert await store.add("ann", "gecserve") is True
            assert await store.add("ann", "gecserve") is False
            assert await store.words("ann") == ["gecserve"]
            assert await store.delete("ann", "gecserve") is True
            assert await store.delete("ann", "gecserve") is False
            assert await store.words("ann") == [] and await store.all_words("ann") == frozenset()
        finally:
            await store.close()

    run(scenario)


def test_each_writer_holds_at_most_the_bound(make_store) -> None:
    async def scenario() -> None:
        store = make_store()
        try:
            for n in range(BOUND):
                assert await store.add("ann", f"word{n}") is True
            with pytest.raises(DictionaryFullError, match=f"holds {BOUND} words"):
                await store.add("ann", "one-more")
            assert await store.add("ann", "word0") is False  # a word already there is no more than full
            assert len(await store.words("ann")) == BOUND and "one-more" not in await store.all_words("ann")
            assert await store.add("bob", "one-more") is True  # the bound is per writer
            assert await store.delete("ann", "word0") is True
            assert await store.add("ann", "one-more") is True  # room again
        finally:
            await store.close()

    run(scenario)


BAD_WORDS = {
    "": "empty",
    "x" * (MAX_WORD_CHARS + 1): "1-64 characters, not 65",
    "two words": "whitespace",
    "tab\there": "whitespace",
    "line\n": "whitespace",
    "nbsp\u00a0inside": "whitespace",
    "lone\ud800": "lone surrogate",
}


@pytest.mark.parametrize("word", list(BAD_WORDS), ids=[repr(w[:12]) for w in BAD_WORDS])
def test_bad_words_are_refused_saying_why(make_store, word: str) -> None:
    async def scenario() -> None:
        store = make_store()
        try:
            with pytest.raises(ValueError, match=BAD_WORDS[word]):
                await store.add("ann", word)
            with pytest.raises(ValueError, match=BAD_WORDS[word]):
                await store.delete("ann", word)
            assert await store.words("ann") == []
        finally:
            await store.close()

    run(scenario)


def test_the_longest_word_and_odd_characters_are_kept_as_given(make_store) -> None:
    words = ["x" * MAX_WORD_CHARS, "and/or", "😀", "naïve", "a:b%20"]  # as many as the bound

    async def scenario() -> None:
        store = make_store()
        try:
            for word in words:
                assert await store.add("ann:with:colons", word) is True
            assert await store.words("ann:with:colons", limit=None) == sorted(words)
        finally:
            await store.close()

    assert check_word("x" * MAX_WORD_CHARS)
    run(scenario)


def test_bad_user_names_and_pages_are_refused(make_store) -> None:
    async def scenario() -> None:
        store = make_store()
        try:
            for user in ("", "u" * 257, "lone\udc00"):
                with pytest.raises(ValueError, match="user"):
                    await store.add(user, "word")
                with pytest.raises(ValueError, match="user"):
                    await store.words(user)
                assert await store.all_words(user) == frozenset()  # the request path: no words, never an error
            with pytest.raises(ValueError, match="offset"):
                await store.words("ann", offset=-1)
            with pytest.raises(ValueError, match="limit"):
                await store.words("ann", limit=-1)
        finally:
            await store.close()

    run(scenario)


def test_two_redis_clients_see_the_same_words(redis_prefix: str) -> None:
    """Two replicas' stores on one Redis: what one adds or deletes, the other reads at once."""

    async def scenario() -> None:
        one, two = redis_store(redis_prefix), redis_store(redis_prefix)
        try:
            assert await one.add("ann", "gecserve") is True
            assert await two.add("ann", "gecserve") is False
            assert await two.words("ann") == ["gecserve"] and await one.all_words("ann") == {"gecserve"}
            assert await two.delete("ann", "gecserve") is True
            assert await one.words("ann") == []
            assert await one.add("ann", "Zorbling") is True
            raw = aioredis.Redis.from_url(REDIS_URL)
            try:
                assert await raw.smembers(f"{redis_prefix}words:ann") == {b"Zorbling"}  # the documented key
            finally:
                await raw.aclose()
        finally:
            await one.close()
            await two.close()

    run(scenario)


def test_replicas_adding_at_once_never_pass_the_bound(redis_prefix: str) -> None:
    """Twenty different words added at once through four clients: exactly the bound is added, the rest refused."""

    async def scenario() -> None:
        stores = [redis_store(redis_prefix) for _ in range(4)]
        try:
            results = await asyncio.gather(
                *(stores[n % 4].add("ann", f"w{n}") for n in range(20)), return_exceptions=True
            )
            assert results.count(True) == BOUND
            assert all(isinstance(r, DictionaryFullError) for r in results if r is not True)
            assert len(await stores[0].words("ann", limit=None)) == BOUND
        finally:
            for store in stores:
                await store.close()

    run(scenario)


def test_the_memory_store_forgets_the_least_recently_used_writer() -> None:
    async def scenario() -> None:
        store = MemoryWordStore(BOUND, max_users=2)
        await store.add("ann", "a")
        await store.add("bob", "b")
        assert await store.all_words("ann") == {"a"}  # ann used: bob is now the least recently used
        await store.add("cid", "c")
        assert await store.words("bob") == []
        assert await store.words("ann") == ["a"] and await store.words("cid") == ["c"]

    run(scenario)


def test_the_factory_picks_redis_with_a_url(redis_prefix: str) -> None:
    async def scenario() -> None:
        shared = word_store(REDIS_URL, redis_prefix, BOUND)
        local = word_store(None, redis_prefix, BOUND)
        try:
            assert isinstance(shared, RedisWordStore) and shared.scope == "cluster"
            assert isinstance(local, MemoryWordStore) and local.scope == "local"
            assert await shared.add("ann", "gecserve") is True
            assert await local.words("ann") == []
        finally:
            await shared.close()
            await local.close()

    run(scenario)
    with pytest.raises(ValueError, match="at least 1"):
        MemoryWordStore(0, 10)
