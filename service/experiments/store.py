"""Where replicas share the experiment: its state, and each replica's published numbers.

``LocalStore`` keeps the state in the process: one replica, numbers are local. ``RedisStore``
(``gecserve serve --redis URL``) keeps it in Redis under a key prefix:

* ``{prefix}experiment``: the state as JSON; changed with an optimistic transaction (WATCH), so
  two admins changing weights at once cannot lose an update silently.
* ``{prefix}experiment:{name}:state``: a stopped experiment's state, written in the same
  transaction as the change that stopped it (a stop, or the start of another), so that it stays
  readable by name once another experiment runs.
* ``{prefix}experiment:{name}:replicas``: a hash of replica id -> that replica's numbers
  (zlib-compressed JSON of mergeable sketches and counters), rewritten every second by each
  replica and merged on read, and once more when a replica leaves the experiment for another. It
  outlives a replica that stops, and the experiment, so its numbers still count.
* ``{prefix}replicas``: a sorted set of replica id -> last heartbeat, for the live-replica count.

Both keep a stopped experiment and its numbers until an experiment of the same name starts
(``forget``).
"""

from __future__ import annotations

import json
import time
import zlib
from typing import Any, Protocol

from redis.exceptions import WatchError

from service.experiments.state import ExperimentState
from service.redis_keys import EXPERIMENT, EXPERIMENT_REPLICAS, REPLICAS, RETIRED_EXPERIMENT
from service.redis_pool import redis_client

__all__ = ["ConflictError", "ExperimentStore", "LocalStore", "RedisStore"]

LIVE_S = 10.0  # a replica that has not published for this long is not counted as live


class ConflictError(RuntimeError):
    """The state changed since it was read (another admin, another replica): read it and retry."""


class ExperimentStore(Protocol):
    scope: str  # "local" (this replica only) or "cluster" (merged over every replica)

    async def load(self) -> ExperimentState | None: ...

    async def save(self, state: ExperimentState, expected_version: int, retired: ExperimentState | None = None) -> None:
        """Write ``state`` if the stored version is still ``expected_version`` (0: none stored), and with
        it ``retired``, a stopped experiment to keep readable by its name."""

    async def retired(self, experiment: str) -> ExperimentState | None:
        """The stopped experiment of that name, as it was when it stopped."""

    async def publish(self, experiment: str, replica: str, numbers: dict[str, Any]) -> None: ...

    async def collect(self, experiment: str) -> list[dict[str, Any]]:
        """Every replica's last published numbers for ``experiment``."""

    async def forget(self, experiment: str) -> None:
        """Drop the published numbers and the stopped state of ``experiment`` (it starts again from nothing)."""

    async def live_replicas(self) -> int: ...

    async def close(self) -> None: ...


class LocalStore:
    """The state in this process; nothing is shared."""

    scope = "local"

    def __init__(self) -> None:
        self._state: ExperimentState | None = None
        self._retired: dict[str, ExperimentState] = {}
        self._numbers: dict[str, dict[str, dict[str, Any]]] = {}  # experiment -> replica -> numbers

    async def load(self) -> ExperimentState | None:
        return self._state

    async def save(self, state: ExperimentState, expected_version: int, retired: ExperimentState | None = None) -> None:
        current = self._state.version if self._state is not None else 0
        if current != expected_version:
            raise ConflictError(f"experiment state is at version {current}, not {expected_version}")
        self._state = state
        if retired is not None:
            self._retired[retired.name] = retired

    async def retired(self, experiment: str) -> ExperimentState | None:
        return self._retired.get(experiment)

    async def publish(self, experiment: str, replica: str, numbers: dict[str, Any]) -> None:
        self._numbers.setdefault(experiment, {})[replica] = numbers

    async def collect(self, experiment: str) -> list[dict[str, Any]]:
        return list(self._numbers.get(experiment, {}).values())

    async def forget(self, experiment: str) -> None:
        self._numbers.pop(experiment, None)
        self._retired.pop(experiment, None)

    async def live_replicas(self) -> int:
        return 1

    async def close(self) -> None:
        return None


class RedisStore:
    """The state and every replica's numbers in Redis (see the module docstring)."""

    scope = "cluster"

    def __init__(self, url: str, prefix: str = "gecserve:", timeout_s: float = 1.0) -> None:
        self.prefix = prefix
        self.redis = redis_client(url, timeout_s)
        self._state_key = EXPERIMENT.key(prefix)

    def _replicas_key(self, experiment: str) -> str:
        return EXPERIMENT_REPLICAS.key(self.prefix, name=experiment)

    def _retired_key(self, experiment: str) -> str:
        return RETIRED_EXPERIMENT.key(self.prefix, name=experiment)

    async def load(self) -> ExperimentState | None:
        raw = await self.redis.get(self._state_key)
        return ExperimentState.from_json(raw) if raw is not None else None

    async def save(self, state: ExperimentState, expected_version: int, retired: ExperimentState | None = None) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(self._state_key)
                raw = await pipe.get(self._state_key)
                current = ExperimentState.from_json(raw).version if raw is not None else 0
                if current != expected_version:
                    raise ConflictError(f"experiment state is at version {current}, not {expected_version}")
                pipe.multi()
                pipe.set(self._state_key, state.to_json())
                if retired is not None:
                    pipe.set(self._retired_key(retired.name), retired.to_json())
                await pipe.execute()
            except WatchError as error:
                raise ConflictError("experiment state changed while it was being written") from error

    async def retired(self, experiment: str) -> ExperimentState | None:
        raw = await self.redis.get(self._retired_key(experiment))
        return ExperimentState.from_json(raw) if raw is not None else None

    async def publish(self, experiment: str, replica: str, numbers: dict[str, Any]) -> None:
        payload = zlib.compress(json.dumps(numbers).encode("utf-8"), 6)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(self._replicas_key(experiment), replica, payload)
            pipe.zadd(REPLICAS.key(self.prefix), {replica: time.time()})
            await pipe.execute()

    async def collect(self, experiment: str) -> list[dict[str, Any]]:
        raw = await self.redis.hgetall(self._replicas_key(experiment))
        return [json.loads(zlib.decompress(value)) for value in raw.values()]

    async def forget(self, experiment: str) -> None:
        await self.redis.delete(self._replicas_key(experiment), self._retired_key(experiment))

    async def live_replicas(self) -> int:
        key = REPLICAS.key(self.prefix)
        now = time.time()
        await self.redis.zremrangebyscore(key, "-inf", now - 10 * LIVE_S)
        return int(await self.redis.zcount(key, now - LIVE_S, "+inf"))

    async def close(self) -> None:
        await self.redis.aclose()
