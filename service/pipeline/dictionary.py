"""The writers' own words: a personal dictionary per writer, as LanguageTool keeps one (``/v2/words``).

A writer (a ``username``, LanguageTool's; ``user`` of ``/v1/words``) adds words the service must not flag, and
the request path reads them once per request (``all_words``). A word is 1-64 characters with no whitespace and
no lone surrogate (``check_word`` says why it refuses one); words are compared and stored as given,
case-sensitively, as LanguageTool's are. A writer holds at most ``max_words_per_user`` words: one more is a
``DictionaryFullError``, nothing added.

``MemoryWordStore`` keeps them in the process (one replica), for at most ``max_users`` writers: beyond that the
least recently used writer's words are forgotten. ``RedisWordStore`` (``gecserve serve --redis URL``) keeps them
in Redis, shared by every replica, under a key prefix:

* ``{prefix}words:{user}``: a set of the writer's words (no expiry; Redis deletes it with its last word).

Adding is one Lua script (already there? full? else ``SADD``), so two replicas adding at once never take a
writer past the bound.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

from redis import asyncio as aioredis

from service.redis_keys import WORDS
from service.redis_pool import redis_client

__all__ = [
    "MAX_USER_CHARS",
    "MAX_WORD_CHARS",
    "DictionaryFullError",
    "MemoryWordStore",
    "RedisWordStore",
    "WordStore",
    "check_user",
    "check_word",
    "word_store",
]

MAX_WORD_CHARS = 64
MAX_USER_CHARS = 256  # as a username of /v2/check (service.api.languagetool.params.MAX_KEY_CHARS)
REDIS_TIMEOUT_S = 1.0  # the factory's clients: wait at most this for a connection, and for an answer


class DictionaryFullError(Exception):
    """The writer already holds ``max_words_per_user`` words: nothing was added."""

    def __init__(self, user: str, limit: int) -> None:
        super().__init__(f"the dictionary of {user!r} is full: it holds {limit} words, the most a writer may keep")
        self.user = user
        self.limit = limit


def _unicode(value: str) -> bool:
    """Whether ``value`` can be stored as UTF-8 (no lone surrogate, which a JSON ``\\ud800`` can carry)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_word(word: str) -> str:
    """``word`` when it can be a dictionary word; ``ValueError`` saying why not."""
    if not isinstance(word, str) or not word:
        raise ValueError("a word must be 1-64 characters, not empty")
    if len(word) > MAX_WORD_CHARS:
        raise ValueError(f"a word must be 1-{MAX_WORD_CHARS} characters, not {len(word)}")
    if any(char.isspace() for char in word):
        raise ValueError("a word must not contain whitespace: add each word on its own")
    if not _unicode(word):
        raise ValueError("a word must be valid Unicode (it holds a lone surrogate)")
    return word


def check_user(user: str) -> str:
    """``user`` when it can name a writer (1-256 characters of valid Unicode); ``ValueError`` saying why not."""
    if not isinstance(user, str) or not user:
        raise ValueError("a user must be named (1-256 characters)")
    if len(user) > MAX_USER_CHARS:
        raise ValueError(f"a user name must be 1-{MAX_USER_CHARS} characters, not {len(user)}")
    if not _unicode(user):
        raise ValueError("a user name must be valid Unicode (it holds a lone surrogate)")
    return user


def _valid_user(user: str) -> bool:
    try:
        check_user(user)
    except ValueError:
        return False
    return True


def _check_page(offset: int, limit: int | None) -> None:
    if offset < 0:
        raise ValueError(f"offset must be 0 or more, not {offset}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be 0 or more, not {limit}")


def _page(words: list[str], offset: int, limit: int | None) -> list[str]:
    return words[offset:] if limit is None else words[offset : offset + limit]


def _check_bound(max_words_per_user: int) -> None:
    if max_words_per_user < 1:
        raise ValueError(f"max_words_per_user must be at least 1, not {max_words_per_user}")


class WordStore(Protocol):
    scope: str  # "local" (this replica only) or "cluster" (shared by every replica)

    async def words(self, user: str, offset: int = 0, limit: int | None = None) -> list[str]:
        """The writer's words in code-point order, from ``offset``, at most ``limit`` of them (None: all)."""

    async def add(self, user: str, word: str) -> bool:
        """Add ``word``: True when added, False when it was there; ``DictionaryFullError`` past the bound,
        ``ValueError`` for a word ``check_word`` refuses."""

    async def delete(self, user: str, word: str) -> bool:
        """Delete ``word``: True when it was there, False when not."""

    async def all_words(self, user: str) -> frozenset[str]:
        """Every word of the writer (what the request path reads once per request); none, never a ``ValueError``,
        for a name ``check_user`` refuses (no dictionary can be kept under it)."""

    async def close(self) -> None: ...


class _Words:
    """One writer's words, with the frozen copy readers get, made once per change."""

    __slots__ = ("_frozen", "words")

    def __init__(self) -> None:
        self.words: set[str] = set()
        self._frozen: frozenset[str] | None = None

    def frozen(self) -> frozenset[str]:
        if self._frozen is None:
            self._frozen = frozenset(self.words)
        return self._frozen

    def changed(self) -> None:
        self._frozen = None


class MemoryWordStore:
    """The dictionaries in this process, for at most ``max_users`` writers (the least recently used forgotten
    first); nothing is shared."""

    scope = "local"

    def __init__(self, max_words_per_user: int, max_users: int) -> None:
        _check_bound(max_words_per_user)
        if max_users < 1:
            raise ValueError(f"max_users must be at least 1, not {max_users}")
        self.max_words_per_user = max_words_per_user
        self.max_users = max_users
        self._users: OrderedDict[str, _Words] = OrderedDict()  # least recently used first

    def _get(self, user: str) -> _Words | None:
        entry = self._users.get(check_user(user))
        if entry is not None:
            self._users.move_to_end(user)
        return entry

    async def words(self, user: str, offset: int = 0, limit: int | None = None) -> list[str]:
        _check_page(offset, limit)
        entry = self._get(user)
        return _page(sorted(entry.words), offset, limit) if entry else []

    async def add(self, user: str, word: str) -> bool:
        check_word(word)
        entry = self._get(user)
        if entry is not None and word in entry.words:
            return False
        if entry is not None and len(entry.words) >= self.max_words_per_user:
            raise DictionaryFullError(user, self.max_words_per_user)
        if entry is None:
            entry = self._users[user] = _Words()
            while len(self._users) > self.max_users:
                self._users.popitem(last=False)
        entry.words.add(word)
        entry.changed()
        return True

    async def delete(self, user: str, word: str) -> bool:
        check_word(word)
        entry = self._get(user)
        if entry is None or word not in entry.words:
            return False
        entry.words.discard(word)
        entry.changed()
        if not entry.words:
            del self._users[user]
        return True

    async def all_words(self, user: str) -> frozenset[str]:
        if not _valid_user(user):
            return frozenset()
        entry = self._get(user)
        return entry.frozen() if entry else frozenset()

    async def close(self) -> None:
        return None


# KEYS[1]: the writer's set; ARGV[1]: the word; ARGV[2]: the most words a writer may keep.
# 0: already there; -1: full (nothing added); 1: added.
_ADD = """
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then
  return 0
end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return -1
end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
"""


def _text(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class RedisWordStore:
    """The dictionaries in Redis, shared by every replica (see the module docstring). It closes ``client`` on
    ``close``."""

    scope = "cluster"

    def __init__(self, client: aioredis.Redis, prefix: str, max_words_per_user: int) -> None:
        _check_bound(max_words_per_user)
        self.redis = client
        self.prefix = prefix
        self.max_words_per_user = max_words_per_user
        self._add = client.register_script(_ADD)

    def key(self, user: str) -> str:
        """The Redis key of ``user``'s set."""
        return WORDS.key(self.prefix, user=check_user(user))

    async def words(self, user: str, offset: int = 0, limit: int | None = None) -> list[str]:
        _check_page(offset, limit)
        words = await self.redis.smembers(self.key(user))
        return _page(sorted(_text(word) for word in words), offset, limit)

    async def add(self, user: str, word: str) -> bool:
        check_word(word)
        answer = int(await self._add(keys=[self.key(user)], args=[word, self.max_words_per_user]))
        if answer < 0:
            raise DictionaryFullError(user, self.max_words_per_user)
        return answer == 1

    async def delete(self, user: str, word: str) -> bool:
        check_word(word)
        return bool(await self.redis.srem(self.key(user), word))

    async def all_words(self, user: str) -> frozenset[str]:
        if not _valid_user(user):
            return frozenset()
        return frozenset(_text(word) for word in await self.redis.smembers(self.key(user)))

    async def close(self) -> None:
        await self.redis.aclose()


MAX_LOCAL_USERS = 1_000  # writers whose words one replica keeps without Redis (at most ~0.6 GB at the bound)


def word_store(redis_url: str | None, prefix: str, max_words_per_user: int) -> WordStore:
    """A ``RedisWordStore`` on ``redis_url`` (shared by the replicas), or a ``MemoryWordStore`` without one
    (``MAX_LOCAL_USERS`` writers)."""
    if redis_url:
        return RedisWordStore(redis_client(redis_url, REDIS_TIMEOUT_S), prefix, max_words_per_user)
    return MemoryWordStore(max_words_per_user, MAX_LOCAL_USERS)
