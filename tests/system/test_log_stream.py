"""A real server whose log stream stalls (its stderr a pipe nobody reads, as a stalled log collector leaves it)
keeps answering, and writes every line once the stream takes them again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading

import httpx
import pytest

from tests.conftest import FIXTURE_MODEL
from tests.system.clients import wait_for
from tests.system.server import ROOT, free_port

pytestmark = pytest.mark.server

REQUESTS = 1_000  # about 300 KB of request lines: several times what the pipe holds (64 KB)


def _start_unread(http_port: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "GECSERVE_MODEL_PATH": str(FIXTURE_MODEL),
        "GECSERVE_MODEL_VARIANT": "int8",
        "GECSERVE_HOST": "127.0.0.1",
        "GECSERVE_HTTP_PORT": str(http_port),
        "GECSERVE_GRPC_PORT": str(free_port()),
    }
    command = [sys.executable, "-m", "service.cli", "serve"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _read(pipe: int, into: list[bytes]) -> None:
    while chunk := os.read(pipe, 65536):
        into.append(chunk)


async def _correct_all(url: str) -> list[int]:
    limit = asyncio.Semaphore(16)
    async with httpx.AsyncClient(timeout=10) as client:

        async def one(i: int) -> int:
            async with limit:
                return (await client.post(url, json={"text": f"She go to school number {i}."})).status_code

        return await asyncio.gather(*(one(i) for i in range(REQUESTS)))


def test_a_server_whose_log_stream_stalls_keeps_answering_and_loses_no_line() -> None:
    http_port = free_port()
    process = _start_unread(http_port)
    output: list[bytes] = []
    try:

        def ready() -> bool:
            assert process.poll() is None, "the server exited before it was ready"
            try:
                return httpx.get(f"http://127.0.0.1:{http_port}/readyz", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        wait_for(ready, 60, every=0.2, what="the server's readiness")
        statuses = asyncio.run(_correct_all(f"http://127.0.0.1:{http_port}/v1/correct"))
        assert statuses == [200] * REQUESTS
    finally:
        assert process.stdout is not None
        reader = threading.Thread(target=_read, args=(process.stdout.fileno(), output), daemon=True)
        reader.start()  # the stream takes lines again
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        reader.join(10)
    lines = [json.loads(line) for line in b"".join(output).decode().splitlines() if line.startswith("{")]
    answered = [line for line in lines if line["logger"] == "gecserve.requests" and line["route"] == "correct"]
    assert len(answered) == REQUESTS
