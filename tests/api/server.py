"""Starts the real ``gecserve serve`` in a subprocess on free ports and waits until it is ready."""

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

from tests.conftest import FIXTURE_MODEL

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
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

    def stop(self, timeout: float = 30) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def start_server(tmp: Path, **settings: object) -> RunningServer:
    http_port, grpc_port = free_port(), free_port()
    env = {
        **os.environ,
        "GECSERVE_HOST": "127.0.0.1",
        "GECSERVE_HTTP_PORT": str(http_port),
        "GECSERVE_GRPC_PORT": str(grpc_port),
        "GECSERVE_MODEL_PATH": str(FIXTURE_MODEL),
        "GECSERVE_MODEL_VARIANT": "int8",
    }
    env.update({f"GECSERVE_{k.upper()}": str(v) for k, v in settings.items()})
    log_path = tmp / f"server-{http_port}.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve"],
        cwd=ROOT,
        env=env,
        stdout=log_path.open("w"),
        stderr=subprocess.STDOUT,
    )
    server = RunningServer(process, http_port, grpc_port, log_path)
    deadline = time.monotonic() + 60
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
    raise RuntimeError(f"server not ready in 60 s:\n{server.log()}")
