"""``gecserve serve --front-ends N``: the process layout for many cores, one supervisor over its processes.

The supervisor starts, per served model, one engine process (``gecserve engine``: the model's engines and their
batching loop), and ``N`` front-end processes (``gecserve serve`` with ``GECSERVE_ENGINE_DIR``), each its own HTTP
and gRPC servers and the whole request path up to decoding: validation, preprocessing, the review, the edits,
metrics, logging. The front ends share the HTTP listener the supervisor opened (as uvicorn's workers do) and bind
the gRPC port each with ``SO_REUSEPORT`` (gRPC's default on Linux), so the kernel spreads connections among them;
each sends its jobs to the engine processes over ZeroMQ (``service.batching.engine_client``). The same settings
reach every process (the environment, with the flags given written into it); metrics are merged across them
(``PROMETHEUS_MULTIPROC_DIR``: any front end's ``/metrics`` shows every process's). A front end takes
connections only once it is ready, so a restarted one never answers ``not_ready`` while its siblings serve.

With ``--queue`` (scale-out), the front ends are gateways of the job streams and start no engine process: the
workers (``gecserve worker``) decode.

A process that dies is started again (after a pause that doubles while it keeps dying young): a front end loses
only its own in-flight requests; an engine's front ends fail its in-flight requests with 503 at once and refuse
work for that model until it is back, while other models' engines serve on. SIGTERM or SIGINT: every front end
drains as one process does (``service.api.server``), then the engines finish what they hold and stop.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from prometheus_client import multiprocess

from service.config import Settings
from service.repository.sources import model_sources
from service.wiring import engine_endpoint

__all__ = ["supervise"]

log = logging.getLogger("gecserve.supervisor")

POLL_S = 0.1  # how often the supervisor looks for processes that died
YOUNG_S = 10.0  # a process that dies younger than this is restarted after a pause that doubles each time
MAX_PAUSE_S = 5.0
STOP_GRACE_S = 10.0  # past the drain timeout, what a process gets before it is killed


@dataclass
class _Child:
    """One supervised process: its role, command, and the process running it now."""

    role: str  # "front end" or "engine"
    command: list[str]
    pass_fds: tuple[int, ...] = ()
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    pause: float = 0.0
    restart_at: float | None = None
    restarts: int = 0

    def start(self, env: dict[str, str]) -> None:
        # a session of its own: a terminal's Ctrl-C reaches the supervisor, which says when each stops
        self.process = subprocess.Popen(self.command, env=env, pass_fds=self.pass_fds, start_new_session=True)
        self.started = time.monotonic()
        self.restart_at = None

    def signal(self, number: int) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(number)


def _environment(settings: Settings, folder: Path, grpc_port: int) -> dict[str, str]:
    """Every process's environment: the supervisor's, the settings it was given (flags included), and where the
    engines listen and the metrics meet."""
    env = dict(os.environ)
    for name, value in settings.model_dump(mode="json", exclude={"admin_key", "api_keys"}).items():
        if value is not None:
            env[f"GECSERVE_{name.upper()}"] = str(value)
    env.update(
        GECSERVE_FRONT_ENDS="0", GECSERVE_GRPC_PORT=str(grpc_port), PROMETHEUS_MULTIPROC_DIR=str(folder / "metrics")
    )
    if not settings.queue_url:  # else the front ends are gateways of the job streams, decoded by workers
        env["GECSERVE_ENGINE_DIR"] = str(folder)
    return env


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def supervise(settings: Settings, listener: socket.socket) -> int:
    """Run the layout (the module docstring) until SIGTERM or SIGINT, with the HTTP ``listener``; the exit status."""
    folder = Path(tempfile.mkdtemp(prefix="gecserve-"))
    (folder / "metrics").mkdir()
    grpc_port = _free_port(settings.host) if settings.grpc_port == 0 else settings.grpc_port
    env = _environment(settings, folder, grpc_port)
    python = [sys.executable, "-m", "service.cli"]
    engines = [
        _Child(
            "engine",
            [*python, "engine", "--model", str(source.path), "--endpoint", engine_endpoint(folder, source.name)],
        )
        for source in ([] if settings.queue_url else model_sources(settings))
    ]
    fd = listener.fileno()
    front_ends = [
        _Child("front end", [*python, "serve", "--listen-fd", str(fd)], pass_fds=(fd,))
        for _ in range(settings.front_ends)
    ]
    stopping: list[int] = []

    def stop(number: int, frame: FrameType | None) -> None:
        stopping.append(number)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info(
        "starting front ends and engines",
        extra={"front_ends": len(front_ends), "engines": len(engines), "http_port": listener.getsockname()[1]},
    )
    try:
        for child in [*engines, *front_ends]:
            child.start(env)
        while not stopping:
            for child in [*engines, *front_ends]:
                _look_after(child, env)
            time.sleep(POLL_S)
        log.info("shutting down", extra={"signal": stopping[0]})
        listener.close()  # the front ends hold it: it closes with the last of them
        _stop_all(front_ends, settings.shutdown_delay_s + settings.drain_timeout_s + STOP_GRACE_S)
        _stop_all(engines, settings.drain_timeout_s + STOP_GRACE_S)
    finally:
        for child in [*front_ends, *engines]:
            child.signal(signal.SIGKILL)
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
    log.info("stopped")
    return 0


def _look_after(child: _Child, env: dict[str, str]) -> None:
    """Start ``child`` again when it has died (after its pause)."""
    now = time.monotonic()
    if child.restart_at is not None:
        if now >= child.restart_at:
            child.start(env)
        return
    assert child.process is not None
    status = child.process.poll()
    if status is None:
        return
    multiprocess.mark_process_dead(child.process.pid, env["PROMETHEUS_MULTIPROC_DIR"])  # type: ignore[no-untyped-call]
    young = now - child.started < YOUNG_S
    child.pause = min(MAX_PAUSE_S, max(0.25, 2 * child.pause)) if young else 0.0
    child.restarts += 1
    child.restart_at = now + child.pause
    log.warning(
        f"{child.role} died; starting it again",
        extra={"pid": child.process.pid, "status": status, "restarts": child.restarts, "pause_s": child.pause},
    )


def _stop_all(children: list[_Child], timeout: float) -> None:
    """SIGTERM to every one of ``children`` at once; SIGKILL to those still running ``timeout`` seconds later."""
    for child in children:
        child.signal(signal.SIGTERM)
    until = time.monotonic() + timeout
    for child in children:
        if child.process is None:
            continue
        try:
            child.process.wait(max(0.0, until - time.monotonic()))
        except subprocess.TimeoutExpired:
            log.warning(f"{child.role} did not stop in time; killed", extra={"pid": child.process.pid})
            child.process.kill()
