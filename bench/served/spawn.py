"""Start real ``gecserve serve`` and ``gecserve worker`` subprocesses and wait until they are ready.

Used by ``gecserve bench serve --spawn`` and ``bench scaleout``, the other tools in ``bench/served/`` and the
integration tests, which talk to real servers over real sockets. ``start_peer_ct2`` starts the FastAPI +
CTranslate2 peer (``bench/served/peer_server.py``) the same way, for ``gecserve bench serve --peer-ct2``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread's) process ``pid`` and its live children have used so far, and
    the children it has waited for."""
    process = psutil.Process(pid)
    times = process.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in process.children(recursive=True):
        with contextlib.suppress(psutil.Error):  # a child that ended meanwhile
            times = child.cpu_times()
            total += times.user + times.system
    return total


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RunningServer:
    process: subprocess.Popen
    http_port: int
    grpc_port: int | None  # None: an HTTP-only server (the peer)
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def grpc_target(self) -> str:
        if self.grpc_port is None:
            raise ValueError("this server has no gRPC port")
        return f"127.0.0.1:{self.grpc_port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def memory_mb(self) -> tuple[float, float]:
        """The server process's resident memory, now and at its peak (``VmRSS``, ``VmHWM``), in MB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        rss, peak = (int(fields[name].split()[0]) * 1024 / 1e6 for name in ("VmRSS", "VmHWM"))
        return rss, peak

    def cpu_seconds(self) -> float:
        """The server's CPU time so far (``cpu_seconds``)."""
        return cpu_seconds(self.process.pid)

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM (graceful drain), then kill after ``timeout`` seconds; returns the exit status."""
        return _terminate(self.process, timeout)


def _terminate(process: subprocess.Popen, timeout: float) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def _environment(model: Path, settings: dict[str, object]) -> dict[str, str]:
    env = {**os.environ, "GECSERVE_MODEL_PATH": str(model)}
    env.update({f"GECSERVE_{k.upper()}": str(v) for k, v in settings.items()})
    return env


def start_server(
    model: Path,
    log_dir: Path,
    ready_timeout_s: float = 60,
    cwd: Path | None = None,
    until: str = "/readyz",
    **settings: object,
) -> RunningServer:
    """Run ``gecserve serve`` for ``model`` with ``GECSERVE_<NAME>`` settings; return once ``until``
    (``/readyz``, or ``/healthz`` for a gateway that has no worker yet) answers 200."""
    http_port, grpc_port = free_port(), free_port()
    env = _environment(model, settings)
    env.update(GECSERVE_HOST="127.0.0.1", GECSERVE_HTTP_PORT=str(http_port), GECSERVE_GRPC_PORT=str(grpc_port))
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"server-{http_port}.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve"],
        cwd=cwd,
        env=env,
        stdout=log_path.open("w"),
        stderr=subprocess.STDOUT,
    )
    return _when_ready(RunningServer(process, http_port, grpc_port, log_path), until, ready_timeout_s)


def start_peer_ct2(
    checkpoint: Path, log_dir: Path, ready_timeout_s: float = 180, cwd: Path | None = None
) -> RunningServer:
    """Run the FastAPI + CTranslate2 peer (``python -m bench.served.peer_server``) for the Hugging Face ``checkpoint``
    on a free port; return once its ``/healthz`` answers 200 (it converts the checkpoint first)."""
    port = free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"peer-{port}.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.served.peer_server", "--checkpoint", str(checkpoint), "--port", str(port)],
        cwd=cwd,
        stdout=log_path.open("w"),
        stderr=subprocess.STDOUT,
    )
    return _when_ready(RunningServer(process, port, None, log_path), "/healthz", ready_timeout_s)


def _when_ready(server: RunningServer, until: str, ready_timeout_s: float) -> RunningServer:
    """``server`` once ``until`` answers 200; stopped, and its log raised, if it exits or takes too long."""
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"server exited with {server.process.returncode}:\n{server.log()}")
        try:
            if httpx.get(f"{server.url}{until}", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"server not ready in {ready_timeout_s:.0f} s:\n{server.log()}")


@dataclass
class RunningWorker:
    process: subprocess.Popen
    metrics_port: int
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def metrics(self) -> str:
        return httpx.get(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5).text

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM (finish what it holds, leave), then kill after ``timeout`` seconds; the exit status."""
        return _terminate(self.process, timeout)


def start_worker(
    model: Path,
    log_dir: Path,
    queue_url: str,
    ready_timeout_s: float = 60,
    cwd: Path | None = None,
    model_name: str | None = None,
    **settings: object,
) -> RunningWorker:
    """Run ``gecserve worker`` for ``model`` (or ``--model model_name``, one of ``GECSERVE_MODELS``) on the streams
    at ``queue_url`` with ``GECSERVE_<NAME>`` settings; return once it reads its streams."""
    metrics_port = free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"worker-{metrics_port}.log"
    named = ["--model", model_name] if model_name else []
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service.cli",
            "worker",
            "--redis",
            queue_url,
            "--metrics-port",
            str(metrics_port),
            *named,
        ],
        cwd=cwd,
        env=_environment(model, settings),
        stdout=log_path.open("w"),
        stderr=subprocess.STDOUT,
    )
    worker = RunningWorker(process, metrics_port, log_path)
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"worker exited with {process.returncode}:\n{worker.log()}")
        if "worker ready" in worker.log():
            return worker
        time.sleep(0.1)
    worker.stop()
    raise RuntimeError(f"worker not ready in {ready_timeout_s:.0f} s:\n{worker.log()}")
