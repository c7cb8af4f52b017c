"""A redis-server of a test's own on a free port, to kill, freeze and start again (Redis faults)."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import redis

from bench.served.spawn import free_port
from tests.system.clients import wait_for


class PrivateRedis:
    """A redis-server of the test's own on a free port, to stop and start again."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.folder = folder
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(command, cwd=self.folder, stdout=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url)
        wait_for(lambda: _pings(client))
        client.close()

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def freeze(self) -> None:
        """SIGSTOP: connections are still accepted (by the kernel) and never answered, as by a hung Redis."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False
