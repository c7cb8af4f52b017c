"""``gecserve worker``: an engine worker fed from Redis Streams, for gateways started with ``--queue``.

    gecserve worker --model DIR --redis redis://HOST:PORT/DB [--arm NAME]... [--metrics-port PORT]
    (other settings: GECSERVE_*, as for ``gecserve serve``: batching, ORT threads, provider, prefix)

The process owns one engine (one GPU where there is one) and serves the queues named by ``--arm``
(an arm's queue, or ``generate``), or every queue the gateways use when none is named. Jobs are
read, batched, decoded, answered and acknowledged by ``service.batching.stream_worker.StreamConsumer``;
this module builds the engine, each queue's ``WorkerSession`` and the metrics around it. SIGTERM or SIGINT: stop
reading, finish what is held, leave. As in the gateway's own queues, the memory decoding used goes
back to the system once the worker is idle. Prometheus metrics (batch sizes, decoding times, jobs
answered by outcome, claimed and dead-lettered jobs) are served on ``--metrics-port`` when given.
Settings that cannot work (a value that does not validate, a model folder that is not one, a metrics
port in use) stop it before the model is loaded, with one line on stderr naming the setting and the
problem, and exit status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from prometheus_client import start_http_server

from service.batching import BatchPolicy, Job
from service.batching.session import Deliver
from service.batching.stream_worker import ConsumerEvents, StreamConsumer
from service.batching.streams import StreamKeys
from service.config import SettingError, Settings, check_model, listen, load_settings
from service.engine.allocator import keep_freed_blocks
from service.engine.decoding.types import decoding_from_json
from service.engine.engine import Engine
from service.engine.sessions import SessionSettings
from service.observability.hooks import MetricsHooks
from service.observability.logging import configure_logging
from service.observability.metrics import Metrics
from service.pipeline.runners import IdleRelease, Outcome, PayloadSession

__all__ = ["main", "work"]

log = logging.getLogger("gecserve.worker")

WARMUP_SOURCE = [[0, 1, 2, 3]]


def _as_reply(outcome: Any) -> Any:
    if isinstance(outcome, Outcome):
        return {
            "result": outcome.result.to_json(),
            "seconds": outcome.finished - outcome.started,
            "batch_size": outcome.batch_size,
        }
    return outcome


class WorkerSession:
    """A queue's decoding in the worker (a batcher ``Session``): each job's payload (its decoding, as
    sent) is read back, then the jobs are decoded by a ``PayloadSession`` (iteration-level batching
    for the strategies in ``continuous``, as in the gateway's own queues). Replies are JSON-ready."""

    def __init__(self, engine: Engine, idle: IdleRelease, continuous: frozenset[str], max_rows: int) -> None:
        self.decoding = PayloadSession(engine, continuous, max_rows, idle.batch_ended)

    @property
    def active(self) -> int:
        return self.decoding.active

    def advance(self, joining: list[Job], wake: threading.Event, deliver: Deliver) -> None:
        def reply(job: Job, outcome: Any) -> None:
            deliver(job, _as_reply(outcome))

        readable = []
        for job in joining:
            try:
                job.payload = decoding_from_json(job.payload)
            except (KeyError, TypeError, ValueError) as error:
                reply(job, ValueError(f"unreadable decoding {job.payload!r}: {error}"))
                continue
            readable.append(job)
        self.decoding.advance(readable, wake, reply)


async def work(settings: Settings, url: str, queues: list[str] | None, metrics_port: int | None) -> None:
    """Serve the job streams at ``url`` until SIGTERM/SIGINT."""
    session = SessionSettings(
        provider=settings.provider,
        intra_op_threads=settings.ort_threads,
        spinning=settings.ort_spinning,
        io_binding=settings.ort_io_binding,
    )
    engine = await asyncio.to_thread(Engine, settings.model_path, settings.model_variant, session)
    await asyncio.to_thread(engine.generate, WARMUP_SOURCE)
    idle = IdleRelease([engine])
    metrics = Metrics()
    if metrics_port is not None:
        start_http_server(metrics_port, registry=metrics.registry)
    manifest = engine.manifest
    keys = StreamKeys.for_model(settings.redis_prefix, manifest.name, manifest.version, engine.model.variant)
    consumer_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
    client = aioredis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
    batch_size = settings.batch_size(engine.model.on_gpu)
    policy = BatchPolicy(
        max_batch_size=batch_size,
        max_batch_tokens=settings.max_batch_tokens,
        max_wait_ms=settings.max_wait_ms,
        max_queue=max(settings.max_queue, 4 * batch_size),
        admit_within=0,  # the gateway admitted these jobs; here they only wait for a batch
    )
    events = ConsumerEvents(
        claimed=lambda queue, n: metrics.worker_job(queue, "claimed", n),
        dead_lettered=lambda queue, n: metrics.worker_job(queue, "dead_letter", n),
        answered=metrics.worker_job,
    )
    consumer = StreamConsumer(
        client,
        keys,
        consumer_id,
        None,
        policy,
        queues,
        sessions=lambda: WorkerSession(engine, idle, settings.continuous_strategies, policy.max_batch_size),
        hooks=MetricsHooks(metrics),
        events=events,
        claim_idle_s=settings.claim_idle_s,
        max_deliveries=settings.max_deliveries,
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, consumer.stop)
    keep_freed_blocks()
    busy = lambda: any(q.batcher.depth or q.batcher.in_flight for q in consumer.queues.values())  # noqa: E731
    release = asyncio.create_task(idle.run(busy), name="release-memory")
    log.info("worker ready", extra={"worker": consumer_id, "streams": keys.base, "queues": queues or "all"})
    try:
        await consumer.run()
    finally:
        release.cancel()
        await client.aclose()
    log.info("worker stopped", extra={"worker": consumer_id})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve worker", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, default=None, help="model folder (GECSERVE_MODEL_PATH)")
    parser.add_argument("--redis", required=True, help="Redis URL of the job streams (the gateways' --queue)")
    parser.add_argument("--arm", action="append", default=None, help="a queue to serve (repeat; default: all)")
    parser.add_argument("--metrics-port", type=int, default=None, help="serve Prometheus metrics on this port")
    args = parser.parse_args(argv)
    given = {"queue_url": args.redis} | ({"model_path": args.model} if args.model is not None else {})
    flags = {"queue_url": "--redis"} | ({"model_path": "--model"} if args.model is not None else {})
    try:
        settings = load_settings(given, flags)
        check_model(settings, flags, preprocesses=False)
        if args.metrics_port is not None:  # served once the engine is warm; is anything listening there now?
            listen("0.0.0.0", args.metrics_port, "metrics_port", {"metrics_port": "--metrics-port"}).close()
    except SettingError as error:
        print(f"gecserve worker: {error}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    asyncio.run(work(settings, args.redis, args.arm, args.metrics_port))
    return 0
