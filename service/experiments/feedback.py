"""The feedback ledger: what writers did with the suggestions they were shown, counted per experiment run.

Every correction answer carries edit ids. The service remembers, for a bounded time (``ttl_s``) and a bounded
number of ids (``max_edits``; in memory, also a bounded number of bytes, ``max_bytes``), where each id came from
(an ``EditOrigin``: the request, the experiment run, the arm, the model and the edit's type); a writer's feedback
on ids it remembers ("accepted", "dismissed") is counted per experiment run, arm, edit type and action. An id
counts at most once: the same action again changes nothing, the other action moves its count (the latest action
wins). Feedback naming any id the ledger does not know (never remembered, expired or evicted) is refused whole:
nothing is counted.

``MemoryLedger`` keeps it in the process: one replica. It counts what each id holds (``entry_bytes``: the id's
and its origin's strings, and ``ENTRY_OVERHEAD_BYTES`` for the objects around them, counted high) and forgets the
oldest ids while the total is over ``max_bytes``: every answer with edits adds ids, so without a bound in bytes
the ledger grows with the requests served (about 0.8 KB an id, up to 1,000,000 ids by default).
``RedisLedger`` (``gecserve serve --redis URL``) keeps it in Redis, so that any replica can take the feedback on an
edit another replica served, under a key prefix:

* ``{prefix}feedback:edit:{id}``: a hash of the id's origin (the ``EditOrigin`` fields) and, once feedback
  came, its ``action``; it expires ``ttl_s`` after the answer that carried the id.
* ``{prefix}feedback:edits``: a sorted set of the remembered ids, scored by the time they were remembered
  (microseconds since the epoch), trimmed to ``max_edits``: the oldest ids' hashes are deleted with them, so
  the ledger stays bounded however many answers are served.
* ``{prefix}feedback:counts:{experiment}:{run}``: a hash of ``arm\\x1ftype\\x1faction`` -> count for one
  experiment run (experiment "" and run "": the requests no experiment assigned); it expires 30 days after its
  last change, long after the ids it counts.

Recording is one Lua script (check that every id exists, then count), so two replicas taking the same id at
once count it once; it builds the counts keys from the ids' origins, which suits a single Redis (not a
cluster).
"""

from __future__ import annotations

import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Protocol

from redis import asyncio as aioredis

from service.redis_keys import FEEDBACK_COUNTS, FEEDBACK_EDIT, FEEDBACK_EDITS
from service.redis_pool import redis_client

__all__ = [
    "ACTIONS",
    "ENTRY_OVERHEAD_BYTES",
    "Counted",
    "EditOrigin",
    "FeedbackLedger",
    "FeedbackResult",
    "MemoryLedger",
    "RedisLedger",
    "UnknownEditsError",
    "entry_bytes",
    "feedback_ledger",
]

ACTIONS = ("accepted", "dismissed")
COUNTS_TTL_S = 30 * 24 * 3600.0  # a run's counts outlive the ids they count by far
REDIS_TIMEOUT_S = 1.0  # the factory's clients: wait at most this for a connection, and for an answer
FIELD_SEPARATOR = "\x1f"


@dataclass(frozen=True)
class EditOrigin:
    """Where an edit id came from."""

    request_id: str
    experiment: str  # "" when no experiment assigned the request
    run: str  # the experiment run (its started_at as text), "" when none: a run restarted afresh counts from nothing
    arm: str
    model: str  # the served model's name
    version: str  # its version
    type: str  # the edit's category (e.g. "spelling", "verb", "punctuation", "other")


ORIGIN_FIELDS = tuple(f.name for f in fields(EditOrigin))


@dataclass(frozen=True)
class Counted:
    """One id whose feedback changed the counts."""

    edit_id: str
    origin: EditOrigin
    action: str
    replaced: str | None  # the action it replaced (the writer changed their mind), else None


@dataclass(frozen=True)
class FeedbackResult:
    counted: list[Counted]  # ids newly counted, or moved from the other action
    repeated: list[str]  # ids already counted with this same action (counted once: nothing changes)


class UnknownEditsError(KeyError):
    """Feedback named ids the ledger does not know (never remembered, expired or evicted): nothing was counted."""

    def __init__(self, edit_ids: Sequence[str]) -> None:
        self.edit_ids = list(edit_ids)
        super().__init__(self.edit_ids)

    def __str__(self) -> str:
        return f"unknown or expired edit ids: {', '.join(self.edit_ids)}"


Counts = dict[str, dict[str, dict[str, int]]]  # arm -> edit type -> action -> count


class FeedbackLedger(Protocol):
    scope: str  # "local" (this replica only) or "cluster" (shared by every replica)

    async def remember(self, origins: Mapping[str, EditOrigin]) -> None:
        """Remember where each id came from; an id remembered again starts afresh (its previous action is
        forgotten, the counts already made stay)."""

    async def record(self, edit_ids: Sequence[str], action: str) -> FeedbackResult:
        """Count ``action`` for every id, or for none: ``UnknownEditsError`` when any is unknown or expired."""

    async def counts(self, experiment: str, run: str) -> Counts:
        """arm -> edit type -> action -> count, for that experiment run."""

    async def close(self) -> None: ...


def _check_action(action: str) -> None:
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}, not {action!r}")


def _check_bounds(ttl_s: float, max_edits: int) -> None:
    if ttl_s <= 0:
        raise ValueError(f"ttl_s must be positive, not {ttl_s}")
    if max_edits < 1:
        raise ValueError(f"max_edits must be at least 1, not {max_edits}")


# A remembered id's objects besides its strings: its ``_Entry`` and ``EditOrigin`` (with its ``__dict__``) and
# its slot in the ledger's ordered dict. tracemalloc measures 346 bytes (162 the entry and its slot, 184 the origin);
# tests/experiments/test_feedback_memory.py checks that a full ledger holds no more than it counts.
ENTRY_OVERHEAD_BYTES = 384


def entry_bytes(edit_id: str, origin: EditOrigin) -> int:
    """The bytes ``MemoryLedger`` counts for remembering ``edit_id`` from ``origin``, counted high: the strings
    of one answer's ids are shared, and each id counts them all."""
    strings = sum(sys.getsizeof(getattr(origin, name)) for name in ORIGIN_FIELDS)
    return ENTRY_OVERHEAD_BYTES + sys.getsizeof(edit_id) + strings


def _unique(edit_ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(edit_ids))


@dataclass(slots=True)
class _Entry:
    origin: EditOrigin
    at: float
    size: int  # its ``entry_bytes``
    action: str | None = None


class MemoryLedger:
    """The ledger in this process; nothing is shared. It holds at most ``max_edits`` ids and ``max_bytes``
    bytes of them (``entry_bytes``), forgetting the oldest first."""

    scope = "local"

    def __init__(
        self, ttl_s: float, max_edits: int, max_bytes: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        _check_bounds(ttl_s, max_edits)
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, not {max_bytes}")
        self.ttl_s = ttl_s
        self.max_edits = max_edits
        self.max_bytes = max_bytes
        self.bytes = 0  # the entry_bytes of the ids held
        self._clock = clock
        self._edits: OrderedDict[str, _Entry] = OrderedDict()  # oldest first
        self._counts: dict[tuple[str, str], Counts] = {}  # (experiment, run) -> counts

    def _forget_oldest(self) -> None:
        self.bytes -= self._edits.popitem(last=False)[1].size

    def _drop_expired(self, now: float) -> None:
        while self._edits:
            entry = next(iter(self._edits.values()))
            if now - entry.at < self.ttl_s:
                return
            self._forget_oldest()

    async def remember(self, origins: Mapping[str, EditOrigin]) -> None:
        now = self._clock()
        for edit_id, origin in origins.items():
            previous = self._edits.pop(edit_id, None)
            if previous is not None:
                self.bytes -= previous.size
            entry = _Entry(origin, now, entry_bytes(edit_id, origin))
            self._edits[edit_id] = entry
            self.bytes += entry.size
        while len(self._edits) > self.max_edits or self.bytes > self.max_bytes:
            self._forget_oldest()
        self._drop_expired(now)

    def _add(self, origin: EditOrigin, action: str, delta: int) -> None:
        runs = self._counts.setdefault((origin.experiment, origin.run), {})
        actions = runs.setdefault(origin.arm, {}).setdefault(origin.type, {})
        actions[action] = actions.get(action, 0) + delta
        if actions[action] <= 0:
            del actions[action]

    async def record(self, edit_ids: Sequence[str], action: str) -> FeedbackResult:
        _check_action(action)
        self._drop_expired(self._clock())
        ids = _unique(edit_ids)
        unknown = [edit_id for edit_id in ids if edit_id not in self._edits]
        if unknown:
            raise UnknownEditsError(unknown)
        counted: list[Counted] = []
        repeated: list[str] = []
        for edit_id in ids:
            entry = self._edits[edit_id]
            if entry.action == action:
                repeated.append(edit_id)
                continue
            if entry.action is not None:
                self._add(entry.origin, entry.action, -1)
            self._add(entry.origin, action, 1)
            counted.append(Counted(edit_id, entry.origin, action, entry.action))
            entry.action = action
        return FeedbackResult(counted, repeated)

    async def counts(self, experiment: str, run: str) -> Counts:
        counts = self._counts.get((experiment, run), {})
        return {
            arm: {kind: dict(actions) for kind, actions in types.items() if actions}
            for arm, types in counts.items()
            if any(types.values())
        }

    async def close(self) -> None:
        return None


# Drop the ids beyond the newest ARGV[1] from the index and delete their hashes, and drop the index's ids
# remembered before ARGV[2] (their hashes have expired). KEYS[1]: the index; ARGV[3]: the hashes' key prefix.
_TRIM = """
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[1])
if excess > 0 then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, excess - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, excess - 1)
  for _, id in ipairs(oldest) do
    redis.call('DEL', ARGV[3] .. id)
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2])
return 0
"""

# KEYS: the ids' hashes. ARGV[1]: the action; ARGV[2]: the counts keys' prefix; ARGV[3]: their expiry in ms.
# Refuses whole ({0, positions of the missing ids}) or counts every id and answers {1, per id: its previous
# action ("" when none) and its origin fields}.
_RECORD = """
local missing = {}
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 0 then
    missing[#missing + 1] = i
  end
end
if #missing > 0 then
  return {0, missing}
end
local action = ARGV[1]
local answers = {}
for i, key in ipairs(KEYS) do
  local f = redis.call('HMGET', key, 'request_id', 'experiment', 'run', 'arm', 'model', 'version', 'type', 'action')
  for j = 1, 7 do
    if not f[j] then f[j] = '' end
  end
  local previous = f[8] or ''
  if previous ~= action then
    local counts = ARGV[2] .. f[2] .. ':' .. f[3]
    if previous ~= '' then
      local field = f[4] .. '\\31' .. f[7] .. '\\31' .. previous
      if redis.call('HINCRBY', counts, field, -1) <= 0 then
        redis.call('HDEL', counts, field)
      end
    end
    redis.call('HINCRBY', counts, f[4] .. '\\31' .. f[7] .. '\\31' .. action, 1)
    redis.call('PEXPIRE', counts, ARGV[3])
    redis.call('HSET', key, 'action', action)
  end
  answers[i] = {previous, f[1], f[2], f[3], f[4], f[5], f[6], f[7]}
end
return {1, answers}
"""


def _text(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class RedisLedger:
    """The ledger in Redis, shared by every replica (see the module docstring). It closes ``client`` on
    ``close``."""

    scope = "cluster"

    def __init__(self, client: aioredis.Redis, prefix: str, ttl_s: float, max_edits: int) -> None:
        _check_bounds(ttl_s, max_edits)
        self.redis = client
        self.prefix = prefix
        self.ttl_s = ttl_s
        self.max_edits = max_edits
        self._edit_prefix = FEEDBACK_EDIT.stem(prefix)
        self._index = FEEDBACK_EDITS.key(prefix)
        self._counts_prefix = FEEDBACK_COUNTS.stem(prefix)
        self._ttl_ms = max(1, round(ttl_s * 1000))
        self._counts_ttl_ms = round(max(COUNTS_TTL_S, 2 * ttl_s) * 1000)
        self._last_us = 0  # the latest score given: this replica's ids are ordered as remembered
        self._trim = client.register_script(_TRIM)
        self._record = client.register_script(_RECORD)

    def _scores(self, count: int) -> tuple[int, int]:
        """The first score of ``count`` ids remembered now, one microsecond apart, and now in microseconds."""
        now_us = time.time_ns() // 1000
        first = max(now_us, self._last_us + 1)
        self._last_us = first + count - 1
        return first, now_us

    async def remember(self, origins: Mapping[str, EditOrigin]) -> None:
        if not origins:
            return
        first, now_us = self._scores(len(origins))
        async with self.redis.pipeline(transaction=True) as pipe:
            for edit_id, origin in origins.items():
                key = self._edit_prefix + edit_id
                pipe.delete(key)  # an id remembered again starts afresh: no action yet
                pipe.hset(key, mapping=asdict(origin))
                pipe.pexpire(key, self._ttl_ms)
            pipe.zadd(self._index, {edit_id: first + i for i, edit_id in enumerate(origins)})
            expired_before = now_us - round(self.ttl_s * 1_000_000)
            await self._trim(keys=[self._index], args=[self.max_edits, expired_before, self._edit_prefix], client=pipe)
            await pipe.execute()

    async def record(self, edit_ids: Sequence[str], action: str) -> FeedbackResult:
        _check_action(action)
        ids = _unique(edit_ids)
        if not ids:
            return FeedbackResult([], [])
        keys = [self._edit_prefix + edit_id for edit_id in ids]
        ok, answers = await self._record(keys=keys, args=[action, self._counts_prefix, self._counts_ttl_ms])
        if not ok:
            raise UnknownEditsError([ids[int(position) - 1] for position in answers])
        counted: list[Counted] = []
        repeated: list[str] = []
        for edit_id, answer in zip(ids, answers, strict=True):
            previous, *values = (_text(value) for value in answer)
            if previous == action:
                repeated.append(edit_id)
                continue
            origin = EditOrigin(**dict(zip(ORIGIN_FIELDS, values, strict=True)))
            counted.append(Counted(edit_id, origin, action, previous or None))
        return FeedbackResult(counted, repeated)

    async def counts(self, experiment: str, run: str) -> Counts:
        raw = await self.redis.hgetall(FEEDBACK_COUNTS.key(self.prefix, experiment=experiment, run=run))
        counts: Counts = {}
        for field, value in raw.items():
            count = int(value)
            if count <= 0:
                continue
            arm, kind, action = _text(field).split(FIELD_SEPARATOR)
            counts.setdefault(arm, {}).setdefault(kind, {})[action] = count
        return counts

    async def close(self) -> None:
        await self.redis.aclose()


def feedback_ledger(redis_url: str | None, prefix: str, ttl_s: float, max_edits: int, max_bytes: int) -> FeedbackLedger:
    """A ``RedisLedger`` on ``redis_url`` (shared by the replicas), or a ``MemoryLedger`` of at most ``max_bytes``
    without one."""
    if redis_url:
        return RedisLedger(redis_client(redis_url, REDIS_TIMEOUT_S), prefix, ttl_s, max_edits)
    return MemoryLedger(ttl_s, max_edits, max_bytes)
