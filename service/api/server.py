"""``gecserve serve``: HTTP (FastAPI on uvicorn) and gRPC (grpc.aio) in one process, one pipeline.

    gecserve serve [--model DIR] [--http-port 8000] [--grpc-port 50051] [--experiment FILE] [--redis URL]
                   [--queue URL]
    (other settings: GECSERVE_*)

Both servers listen at once; ``/healthz`` answers at once, ``/readyz`` and gRPC health turn
ready only after the model is loaded and every arm is warmed up. SIGTERM or SIGINT: readiness
turns off, the servers stop accepting, in-flight requests finish, queued jobs drain. A bad
experiment file, or a bad API key entry, stops start-up with a message naming the field or line
(exit status 2). HTTP and gRPC share one access control, so a key's rate limit counts both.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

import uvicorn
from grpc_health.v1 import health_pb2

from service.api.access import AccessControl
from service.api.auth import KeyFileError, load_keys
from service.api.grpc_service import SERVICE_NAME, create_grpc_server
from service.api.http import create_app
from service.config import Settings
from service.experiments.definition import ExperimentFileError, load_experiment
from service.observability.logging import configure_logging
from service.pipeline.pipeline import Pipeline

log = logging.getLogger("gecserve")


async def serve(settings: Settings) -> None:
    """Run until SIGTERM/SIGINT, then shut down gracefully."""
    pipeline = Pipeline(settings)
    access = AccessControl.from_settings(settings, pipeline.metrics)
    app = create_app(pipeline, access)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.http_port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=int(settings.drain_timeout_s) or None,
        timeout_keep_alive=settings.keep_alive_s,
    )
    http = uvicorn.Server(config)
    http.install_signal_handlers = lambda: None  # this function owns the signals
    grpc_server = health_servicer = None
    if settings.grpc_port >= 0:
        grpc_server, health_servicer, grpc_port = create_grpc_server(
            pipeline, f"{settings.host}:{settings.grpc_port}", access
        )
        await grpc_server.start()
        log.info("grpc listening", extra={"port": grpc_port})

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    http_task = asyncio.create_task(http.serve())

    async def warm_up() -> None:
        await pipeline.start()
        if health_servicer is not None:
            for name in (SERVICE_NAME, ""):
                health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("ready", extra={"http_port": settings.http_port, "grpc_port": settings.grpc_port})

    warm_task = asyncio.create_task(warm_up())
    stop_task = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({http_task, stop_task, warm_task}, return_when=asyncio.FIRST_COMPLETED)
    if warm_task in done and warm_task.exception() is None:
        done, _ = await asyncio.wait({http_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    elif warm_task in done:
        log.error("start-up failed", exc_info=warm_task.exception())

    log.info("shutting down")
    pipeline.ready = False
    if health_servicer is not None:
        health_servicer.enter_graceful_shutdown()
    http.should_exit = True
    await asyncio.gather(
        http_task,
        grpc_server.stop(settings.drain_timeout_s) if grpc_server else asyncio.sleep(0),
        return_exceptions=True,
    )
    if not warm_task.done():
        warm_task.cancel()
    await pipeline.stop()
    await access.close()
    log.info("stopped")
    if warm_task.done() and not warm_task.cancelled() and warm_task.exception() is not None:
        raise SystemExit(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve serve", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, default=None, help="model folder (GECSERVE_MODEL_PATH)")
    parser.add_argument("--http-port", type=int, default=None, help="GECSERVE_HTTP_PORT")
    parser.add_argument("--grpc-port", type=int, default=None, help="GECSERVE_GRPC_PORT (-1: no gRPC)")
    parser.add_argument("--experiment", type=Path, default=None, help="experiment file, YAML (GECSERVE_EXPERIMENT)")
    parser.add_argument("--redis", default=None, help="Redis URL shared by replicas (GECSERVE_REDIS_URL)")
    parser.add_argument(
        "--queue", default=None, help="Redis URL of the job streams: decode on gecserve workers (GECSERVE_QUEUE_URL)"
    )
    args = parser.parse_args(argv)
    given = (
        ("model_path", args.model),
        ("http_port", args.http_port),
        ("grpc_port", args.grpc_port),
        ("experiment", args.experiment),
        ("redis_url", args.redis),
        ("queue_url", args.queue),
    )
    settings = Settings(**{k: v for k, v in given if v is not None})
    configure_logging(settings.log_level)
    try:
        load_keys(settings.api_keys_file, settings.api_keys)
    except KeyFileError as error:
        log.error("bad API key entry", extra={"error": str(error)})
        print(f"gecserve serve: bad API key entry: {error}", file=sys.stderr)
        return 2
    if settings.experiment is not None:
        try:
            load_experiment(settings.experiment)
        except ExperimentFileError as error:
            log.error("bad experiment file", extra={"error": str(error)})
            print(f"gecserve serve: bad experiment file: {error}", file=sys.stderr)
            return 2
    asyncio.run(serve(settings))
    return 0
