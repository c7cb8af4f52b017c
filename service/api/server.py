"""``gecserve serve``: HTTP (FastAPI on uvicorn) and gRPC (grpc.aio) in one process, one pipeline.

    gecserve serve [--model DIR] [--http-port 8000] [--grpc-port 50051] [--experiment FILE] [--redis URL]
                   [--queue URL] [--front-ends N]
    (other settings: GECSERVE_*)

Both servers listen at once; ``/healthz`` answers at once, ``/readyz`` and gRPC health turn
ready only after the model is loaded and every arm is warmed up. SIGTERM or SIGINT: readiness
turns off at once (``/readyz`` 503, gRPC health NOT_SERVING) while both servers keep listening,
and HTTP answers say ``Connection: close`` (clients reconnect, to a replica that is not leaving).
Requests are still served for ``GECSERVE_SHUTDOWN_DELAY_S`` (0 by default), so that load balancers
that poll readiness stop sending first; then new requests get 503 ``not_ready`` (gRPC UNAVAILABLE)
while those in flight finish, for up to ``GECSERVE_DRAIN_TIMEOUT_S``; then the listeners close,
whatever is still running is cancelled, and queued jobs drain. Settings that cannot work (a value
that does not validate, a model folder that is not one, a port in use, a bad experiment file or API
key entry) stop start-up with one line on stderr naming the setting (its flag, else its environment
variable) and the problem, and exit status 2. HTTP and gRPC share one access control, so a key's
rate limit counts both. The line that says the service is ready names where to open it: the front page, the
editor, the dashboard and the API docs (``http.front.page_urls``). With ``--front-ends N`` this process supervises N
front ends (each this module's server, decoding in an engine process) instead (``service.api.supervisor``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import grpc
import uvicorn
from grpc_health.v1 import health_pb2
from grpc_health.v1.health import HealthServicer

from service.api.access.auth import KeyFileError, load_keys
from service.api.access.control import AccessControl
from service.api.grpc.service import SERVICE_NAME, create_grpc_server
from service.api.http.app import create_app
from service.api.http.front import page_urls
from service.api.supervisor import supervise
from service.config import SettingError, Settings, setting_name
from service.engine.allocator import configure_malloc
from service.engine.collector import configure_collector
from service.experiments.definition import ExperimentFileError, load_experiment
from service.observability.logging import configure_logging
from service.observability.loop_lag import watch_loop_lag
from service.pipeline.pipeline import Pipeline
from service.repository.sources import model_sources
from service.startup import check_model, listen, load_settings
from service.wiring import Gateway

log = logging.getLogger("gecserve")

DRAIN_POLL_S = 0.05  # how often the drain looks at what is still in flight (and the least time left to finish)


class _HttpServer(uvicorn.Server):
    """uvicorn's server without its signal handlers (which close the listener at the first SIGTERM):
    ``serve`` owns SIGTERM and SIGINT and says when the listener closes."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve(
    settings: Settings, listener: socket.socket, flags: Mapping[str, str] | None = None, front_end: bool = False
) -> None:
    """Serve HTTP on ``listener`` and gRPC until SIGTERM/SIGINT, then drain (the module docstring); the event
    loop's lag measured all along (``gecserve_event_loop_lag_seconds``) and counted by admission
    (``Pipeline.loop_lagged``). A ``front_end`` (one of ``--front-ends``) shares both ports with its siblings."""
    gateway = Gateway(settings)
    async with watch_loop_lag(gateway.pipeline.loop_lagged):
        await _serve(settings, gateway, listener, flags, front_end)


async def _serve(
    settings: Settings, gateway: Gateway, listener: socket.socket, flags: Mapping[str, str] | None, front_end: bool
) -> None:
    pipeline = gateway.pipeline
    if front_end:  # its siblings serve meanwhile: it takes connections once ready (service.api.supervisor)
        await gateway.start()
    access = AccessControl.from_settings(settings, pipeline.metrics)
    app = create_app(pipeline, access)
    config = uvicorn.Config(
        app,
        http="httptools",
        log_config=None,  # uvicorn's loggers go to the service's JSON lines (``configure_logging``)
        log_level="warning",
        access_log=False,
        timeout_keep_alive=settings.keep_alive_s,
    )
    http = _HttpServer(config)
    grpc_server = health_servicer = None
    grpc_port = settings.grpc_port  # -1: no gRPC server
    if settings.grpc_port >= 0:
        address = f"{settings.host}:{settings.grpc_port}"
        try:
            grpc_server, health_servicer, grpc_port = create_grpc_server(pipeline, address, access, front_end)
        except RuntimeError as error:  # grpc could not bind the address
            raise SettingError(f"{setting_name('grpc_port', flags or {})}: cannot listen on {address}") from error
        await grpc_server.start()
        log.info("grpc listening", extra={"port": grpc_port})

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    http_task = asyncio.create_task(http.serve(sockets=[listener]))
    http_port = listener.getsockname()[1]
    log.info("http listening", extra={"port": http_port})

    async def warm_up() -> None:
        if not front_end:
            await gateway.start()
        frozen = configure_collector()  # see service.engine.collector
        if health_servicer is not None:
            for name in (SERVICE_NAME, ""):
                health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        urls = page_urls(settings.host, http_port)
        log.info(
            f"ready: open {urls['home']} (editor {urls['editor']}, dashboard {urls['dashboard']}, "
            f"API docs {urls['api_docs']})",
            extra={"http_port": http_port, "grpc_port": grpc_port, "urls": urls, "frozen_objects": frozen},
        )

    warm_task = asyncio.create_task(warm_up())
    stop_task = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({http_task, stop_task, warm_task}, return_when=asyncio.FIRST_COMPLETED)
    if warm_task in done and warm_task.exception() is None:
        done, _ = await asyncio.wait({http_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    elif warm_task in done:
        log.error("start-up failed", exc_info=warm_task.exception())

    await _drain(settings, pipeline, http, http_task, grpc_server, health_servicer)
    if not warm_task.done():
        warm_task.cancel()
    await gateway.stop()
    await access.close()
    log.info("stopped")
    if warm_task.done() and not warm_task.cancelled() and warm_task.exception() is not None:
        raise SystemExit(1)


async def _drain(
    settings: Settings,
    pipeline: Pipeline,
    http: uvicorn.Server,
    http_task: asyncio.Task[None],
    grpc_server: grpc.aio.Server | None,
    health: HealthServicer | None,
) -> None:
    """After SIGTERM: readiness off, requests served for the shutdown delay, then refused while those in flight
    finish (both servers still listening), then both servers stopped, with what is left of the drain timeout."""
    log.info(
        "shutting down",
        extra={"shutdown_delay_s": settings.shutdown_delay_s, "drain_timeout_s": settings.drain_timeout_s},
    )
    pipeline.draining = True
    if health is not None:
        health.enter_graceful_shutdown()
    if settings.shutdown_delay_s and pipeline.ready and not http_task.done():
        await asyncio.sleep(settings.shutdown_delay_s)  # still serving, readiness off
    pipeline.ready = False  # from here on new requests get 503 not_ready
    loop = asyncio.get_running_loop()
    drain_until = loop.time() + settings.drain_timeout_s
    while (http.server_state.tasks or pipeline.metrics.in_progress_total()) and loop.time() < drain_until:
        await asyncio.sleep(DRAIN_POLL_S)
    left = max(drain_until - loop.time(), DRAIN_POLL_S)
    http.config.timeout_graceful_shutdown = left  # past it uvicorn cancels what is still running
    http.should_exit = True
    await asyncio.gather(http_task, grpc_server.stop(left) if grpc_server else asyncio.sleep(0), return_exceptions=True)


def _settings(args: argparse.Namespace) -> tuple[Settings, dict[str, str], socket.socket]:
    """The settings, the flags given (field -> flag) and the HTTP listener; ``SettingError`` for any that
    cannot work, found before the model is loaded."""
    given = (
        ("model_path", "--model", args.model),
        ("http_port", "--http-port", args.http_port),
        ("grpc_port", "--grpc-port", args.grpc_port),
        ("experiment", "--experiment", args.experiment),
        ("redis_url", "--redis", args.redis),
        ("queue_url", "--queue", args.queue),
        ("front_ends", "--front-ends", args.front_ends),
    )
    flags = {field: flag for field, flag, value in given if value is not None}
    settings = load_settings({field: value for field, _, value in given if value is not None}, flags)
    check_model(settings, flags, decodes=settings.decodes)
    try:
        load_keys(settings.api_keys_file, settings.api_keys)
    except KeyFileError as error:
        raise SettingError(f"bad API key entry: {error}") from error
    if settings.experiment is not None:
        try:
            definition = load_experiment(settings.experiment)
        except ExperimentFileError as error:
            raise SettingError(f"{setting_name('experiment', flags)}: bad experiment file: {error}") from error
        served = {source.name for source in model_sources(settings)}
        missing = definition.unserved(served)
        if missing:
            raise SettingError(
                f"{setting_name('experiment', flags)}: the experiment's arms run on models that are not served: "
                f"{', '.join(missing)} (served: {', '.join(sorted(served))}; list them in GECSERVE_MODELS)"
            )
    if args.listen_fd is not None:  # a front end: the supervisor checked the ports and holds the listener
        return settings, flags, socket.socket(fileno=args.listen_fd)
    listener = listen(settings.host, settings.http_port, "http_port", flags)
    if settings.grpc_port > 0:  # gRPC binds it later; is anything listening there now?
        try:
            listen(settings.host, settings.grpc_port, "grpc_port", flags).close()
        except SettingError:
            listener.close()
            raise
    return settings, flags, listener


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
    parser.add_argument(
        "--front-ends",
        type=int,
        default=None,
        help="front-end processes, and an engine process per model (GECSERVE_FRONT_ENDS; 0: one process)",
    )
    parser.add_argument(
        "--listen-fd", type=int, default=None, help="a front end's: the HTTP listener it inherits (set by --front-ends)"
    )
    args = parser.parse_args(argv)
    configure_malloc()  # before any thread: see service.engine.allocator
    try:
        settings, flags, listener = _settings(args)
        configure_logging(settings.log_level)
        if settings.front_ends:
            return supervise(settings, listener)
        asyncio.run(serve(settings, listener, flags, front_end=args.listen_fd is not None))
    except SettingError as error:
        print(f"gecserve serve: {error}", file=sys.stderr)
        return 2
    return 0
