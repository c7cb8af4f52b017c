"""``gecserve worker``: a worker, an engine fed from Redis Streams, for gateways started with ``--queue``.

    gecserve worker --model NAME|DIR --redis redis://HOST:PORT/DB [--arm NAME]... [--metrics-port PORT]
    (other settings: GECSERVE_*, as for ``gecserve serve``: batching, ORT threads, provider, prefix)

The process owns one engine of one model (one GPU where there is one): ``--model`` names one of
``GECSERVE_MODELS`` (the gateways' list), or is a model folder; without it, ``GECSERVE_MODEL_PATH``.
It serves that model's job streams (gateways route each model's jobs to its own), the queues named by ``--arm``
(an arm's queue, or ``generate``), or every queue the gateways use when none is named. Jobs are
read, batched, decoded, answered and acknowledged by ``service.batching.stream_worker.StreamConsumer``,
which ``service.wiring`` builds with the engine and each queue's ``RemoteBatch``, as it builds the gateway's
parts; this module runs it, with the metrics and the signals around it. SIGTERM or SIGINT: stop
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
import signal
import sys
from pathlib import Path

import redis.asyncio as aioredis
from prometheus_client import start_http_server

from service.config import SettingError, Settings, setting_name
from service.engine.allocator import configure_malloc
from service.observability.logging import configure_logging
from service.observability.loop_lag import watch_loop_lag
from service.observability.metrics import Metrics
from service.repository.sources import parse_models
from service.startup import check_model, listen, load_settings
from service.wiring import release_while_idle, warm_engines, worker_consumer

__all__ = ["main", "work"]

log = logging.getLogger("gecserve.worker")


async def work(settings: Settings, url: str, queues: list[str] | None, metrics_port: int | None) -> None:
    """Serve the job streams at ``url`` until SIGTERM/SIGINT."""
    (engine,) = await asyncio.to_thread(warm_engines, settings, 1)
    metrics = Metrics()
    if metrics_port is not None:
        start_http_server(metrics_port, registry=metrics.exposed)
    client = aioredis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
    consumer, idle = worker_consumer(settings, engine, client, queues, metrics)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, consumer.stop)
    busy = lambda: any(q.batcher.depth or q.batcher.in_flight for q in consumer.queues.values())  # noqa: E731
    release = asyncio.create_task(release_while_idle(idle, busy), name="release-memory")
    log.info(
        "worker ready", extra={"worker": consumer.consumer, "streams": consumer.keys.base, "queues": queues or "all"}
    )
    try:
        async with watch_loop_lag(metrics.loop_lagged):
            await consumer.run()
    finally:
        release.cancel()
        await client.aclose()
    log.info("worker stopped", extra={"worker": consumer.consumer})


def model_folder(model: str, listed: str, flags: dict[str, str]) -> Path:
    """The folder of ``--model``: the model of that name in ``listed`` (``GECSERVE_MODELS``), else a folder."""
    try:
        by_name = {source.name: source.path for source in parse_models(listed)}
    except ValueError as error:
        raise SettingError(f"{setting_name('models', flags)}: {error}") from error
    return by_name.get(model, Path(model))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve worker", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model", default=None, help="a model of GECSERVE_MODELS by name, or a model folder (GECSERVE_MODEL_PATH)"
    )
    parser.add_argument("--redis", required=True, help="Redis URL of the job streams (the gateways' --queue)")
    parser.add_argument(
        "--arm",
        dest="queues",
        metavar="NAME",
        action="append",
        default=None,
        help="a queue to serve (repeat; default: all)",
    )
    parser.add_argument("--metrics-port", type=int, default=None, help="serve Prometheus metrics on this port")
    args = parser.parse_args(argv)
    configure_malloc()  # before any thread: see service.engine.allocator
    given: dict[str, object] = {"queue_url": args.redis, "models": ""}  # this worker's one model, checked alone
    flags = {"queue_url": "--redis"} | ({"model_path": "--model"} if args.model is not None else {})
    try:
        if args.model is not None:
            given["model_path"] = model_folder(args.model, load_settings({}, flags).models, flags)
        settings = load_settings(given, flags)
        check_model(settings, flags, preprocesses=False)
        if args.metrics_port is not None:  # served once the engine is warm; is anything listening there now?
            listen("0.0.0.0", args.metrics_port, "metrics_port", {"metrics_port": "--metrics-port"}).close()
    except SettingError as error:
        print(f"gecserve worker: {error}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    asyncio.run(work(settings, args.redis, args.queues, args.metrics_port))
    return 0
