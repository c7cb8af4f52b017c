"""This replica's copy of the shared experiment state, kept in step with the store.

Every state this replica adopts goes to the router (routing) and the tally (counting) at once. Leaving an
experiment for another, the replica publishes the numbers of the one it leaves first, so that they stay readable
as they were when it stopped. With Redis (``scope == "cluster"``), a background task reloads the state every
``sync_interval_s`` (so a weight change on one replica reaches all within a second) and publishes this replica's
numbers. Redis trouble never fails a request: routing goes on with the last state known, logged once until the
store answers again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from redis.exceptions import RedisError

from service.experiments.router import Router
from service.experiments.state import ExperimentState
from service.experiments.store import ExperimentStore
from service.experiments.tally import Tally

__all__ = ["ExperimentSync"]

log = logging.getLogger(__name__)


class ExperimentSync:
    """Adopts experiment states for the router and the tally, and keeps them in step with ``store``."""

    def __init__(
        self, store: ExperimentStore, router: Router, tally: Tally, replica: str, sync_interval_s: float = 1.0
    ) -> None:
        self.store = store
        self.router = router
        self.tally = tally
        self.replica = replica
        self.sync_interval_s = sync_interval_s
        self.store_ok = True
        self._task: asyncio.Task[None] | None = None

    @property
    def state(self) -> ExperimentState | None:
        """The state this replica routes with."""
        return self.router.state

    @property
    def scope(self) -> str:
        """Whose numbers a read merges: the store's scope, or ``local`` while it is unreachable."""
        return self.store.scope if self.store_ok else "local"

    def numbers(self) -> dict[str, Any]:
        """This replica's numbers of the current experiment, as it publishes them."""
        return self.tally.export(self.replica)

    async def load(self) -> ExperimentState | None:
        """The stored state; None when there is none or the store is unreachable (logged)."""
        try:
            return await self.store.load()
        except RedisError as error:
            self.store_failed(error)
            return None

    def adopt(self, state: ExperimentState) -> None:
        """Route and count with ``state`` from now on."""
        self.tally.follow(state)
        self.router.follow(state)

    async def switch(self, state: ExperimentState) -> None:
        """Adopt ``state``; when it is another experiment, publish the numbers of the one left first, so
        that they stay readable as they were (a new run of the same name starts from nothing anyway)."""
        previous = self.state
        if previous is not None and previous.name != state.name:
            try:
                await self.store.publish(previous.name, self.replica, self.numbers())
            except RedisError as error:
                self.store_failed(error)
        self.adopt(state)

    def start(self) -> None:
        """Keep in step with a shared store from now on (nothing to do for a local one)."""
        if self.store.scope == "cluster":
            self._task = asyncio.create_task(self._sync_forever(), name="experiment-sync")

    async def close(self) -> None:
        """Stop keeping in step, publish this replica's numbers once more, close the store."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            await self._sync(publish_only=True)
        await self.store.close()

    async def _sync_forever(self) -> None:
        while True:
            await asyncio.sleep(self.sync_interval_s)
            await self._sync()

    async def _sync(self, publish_only: bool = False) -> None:
        try:
            if not publish_only:
                state = await self.store.load()
                if state is not None and (self.state is None or state.version != self.state.version):
                    await self.switch(state)
            if self.state is not None:
                await self.store.publish(self.state.name, self.replica, self.numbers())
            if not self.store_ok:
                log.info("experiment store reachable again")
            self.store_ok = True
        except RedisError as error:
            self.store_failed(error)

    def store_failed(self, error: Exception) -> None:
        """The store did not answer: logged once until it answers again; reads say their scope is local."""
        if self.store_ok:
            log.warning("experiment store unreachable; serving with the last state known", extra={"error": str(error)})
        self.store_ok = False
