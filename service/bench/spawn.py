"""Start a real ``gecserve serve`` subprocess on free ports and wait until it is ready.

Used by ``gecserve bench serve --spawn`` (a one-command load benchmark) and by the
integration tests, which talk to a real server over real sockets.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RunningServer:
    process: subprocess.Popen
    http_port: int
    grpc_port: int
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def grpc_target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def memory_mb(self) -> tuple[float, float]:
        """The server process's resident memory, now and at its peak (``VmRSS``, ``VmHWM``), in MB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        rss, peak = (int(fields[name].split()[0]) * 1024 / 1e6 for name in ("VmRSS", "VmHWM"))
        return rss, peak

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM (graceful drain), then kill after ``timeout`` seconds; returns the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def start_server(
    model: Path, log_dir: Path, ready_timeout_s: float = 60, cwd: Path | None = None, **settings: object
) -> RunningServer:
    """Run ``gecserve serve`` for ``model`` with ``GECSERVE_<NAME>`` settings; return once ``/readyz`` is 200."""
    http_port, grpc_port = free_port(), free_port()
    env = {
        **os.environ,
        "GECSERVE_HOST": "127.0.0.1",
        "GECSERVE_HTTP_PORT": str(http_port),
        "GECSERVE_GRPC_PORT": str(grpc_port),
        "GECSERVE_MODEL_PATH": str(model),
    }
    env.update({f"GECSERVE_{k.upper()}": str(v) for k, v in settings.items()})
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"server-{http_port}.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve"],
        cwd=cwd,
        env=env,
        stdout=log_path.open("w"),
        stderr=subprocess.STDOUT,
    )
    server = RunningServer(process, http_port, grpc_port, log_path)
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{server.log()}")
        try:
            if httpx.get(f"{server.url}/readyz", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"server not ready in {ready_timeout_s:.0f} s:\n{server.log()}")
