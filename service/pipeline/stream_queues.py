"""Decoding queues whose engines are ``gecserve worker`` processes, joined through Redis Streams
(``gecserve serve --queue redis://HOST:PORT/DB``).

Each queue is a ``StreamBatcher`` on the stream of the same name; the gateway's ``ReplyRouter``
brings the results back. A monitor reads, every second, how many workers have sent a heartbeat
within ``worker_timeout_s`` (none: the gateway is not ready, and refuses work at once rather than
queue it for nobody) and each queue's lag and pending count (Prometheus gauges).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from service.batching import Batcher, Job
from service.batching.stream_gateway import ReplyRouter, StreamBatcher
from service.batching.streams import GROUP, Reply, StreamKeys, cancel_task
from service.inference.batches import Outcome
from service.inference.remote import outcome_of_reply
from service.observability.hooks import MetricsHooks
from service.observability.metrics import Metrics
from service.pipeline.queues import ForwardedQueues
from service.redis_pool import redis_client

__all__ = ["StreamQueues"]

log = logging.getLogger(__name__)

MONITOR_S = 1.0


def _outcome(reply: Reply, received: float) -> Outcome:
    assert reply.result is not None
    return outcome_of_reply(reply.result, reply.seconds, reply.batch_size, received)


class StreamQueues(ForwardedQueues):
    """See the module docstring."""

    def __init__(
        self,
        url: str,
        keys: StreamKeys,
        gateway: str,
        max_queue: int,
        admit_within: float,
        worker_timeout_s: float,
        metrics: Metrics,
    ) -> None:
        self.keys = keys
        self.max_queue = max_queue
        self.admit_within = admit_within
        self.worker_timeout_s = worker_timeout_s
        self.metrics = metrics
        self.hooks = MetricsHooks(metrics)
        self.client = redis_client(url, timeout_s=5, connect_timeout_s=2)
        # the reply reader blocks in XREAD: a connection of its own, with a timeout past the block
        self._reader = aioredis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
        self.router = ReplyRouter(self._reader, keys.reply(gateway))
        self.batchers: dict[str, Batcher] = {}
        self.live_workers = 0
        self._monitor: asyncio.Task[None] | None = None
        self._reachable = True

    def _start(self, name: str, decoding: Callable[[Job], dict[str, Any]]) -> StreamBatcher:
        batcher = StreamBatcher(
            self.client,
            self.keys,
            name,
            self.router,
            self.max_queue,
            self.admit_within,
            decoding,
            _outcome,
            lambda: self.live_workers,
            self.hooks,
        )
        batcher.start()
        self.batchers[name] = batcher
        return batcher

    async def start(self) -> None:
        self.router.start()
        await self._look()
        self._monitor = asyncio.create_task(self._monitor_forever(), name="stream-monitor")

    async def stop(self, timeout: float) -> None:
        for batcher in list(self.batchers.values()):
            await batcher.stop(drain=True, timeout=timeout)
        if self._monitor is not None:
            await cancel_task(self._monitor)
        await self.router.stop()
        await self.client.aclose()
        await self._reader.aclose()

    @property
    def ready(self) -> bool:
        return self.live_workers > 0 and self.router.healthy

    def health(self) -> dict[str, Any]:
        return {"transport": "redis", "streams": self.keys.base, "workers": self.live_workers}

    async def _monitor_forever(self) -> None:
        while True:
            await asyncio.sleep(MONITOR_S)
            await self._look()

    async def _look(self) -> None:
        try:
            now = time.time()
            self.live_workers = int(await self.client.zcount(self.keys.workers, now - self.worker_timeout_s, "+inf"))
            for name, batcher in list(self.batchers.items()):
                assert isinstance(batcher, StreamBatcher)
                await batcher.register()
                groups = await self.client.xinfo_groups(batcher.stream)
                group = next(g for g in groups if g["name"] in (GROUP, GROUP.encode()))
                self.metrics.set_stream(name, int(group.get("lag") or 0), int(group["pending"]))
                batcher.observe_depth(int(await self.client.xlen(batcher.stream)))
            self.metrics.workers_live.set(self.live_workers)
            if not self._reachable:
                log.info("job streams reachable again")
            self._reachable = True
        except (RedisError, OSError) as error:
            if self._reachable:
                log.warning("job streams unreachable", extra={"error": repr(error)})
            self._reachable = False
            self.live_workers = 0
            self.metrics.workers_live.set(0)
