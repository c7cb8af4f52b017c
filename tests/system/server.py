"""The real ``gecserve serve`` on the tiny test model, on free ports, for the API tests."""

from __future__ import annotations

import socket
from pathlib import Path

from bench.served.spawn import RunningServer, free_port
from bench.served.spawn import start_server as _start
from tests.conftest import FIXTURE_MODEL

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["ROOT", "RunningServer", "free_port", "listening_socket", "start_server"]


def start_server(tmp: Path, model: Path = FIXTURE_MODEL, **settings: object) -> RunningServer:
    """A server for ``model`` (int8; the tiny test model unless given) with ``GECSERVE_<NAME>`` overrides from
    ``settings``."""
    return _start(model, tmp, cwd=ROOT, model_variant="int8", **settings)


def listening_socket() -> socket.socket:
    """A socket bound to a free port, for an in-process uvicorn (``serve(sockets=[...])``): binding here, not by
    port number later, leaves no moment in which another server in the test (gRPC on port 0) takes the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock
