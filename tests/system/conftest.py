"""A real server for the API tests (module-scoped: one process per test module)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from bench.served.browser import chromium
from bench.served.spawn import start_server as spawn_server
from service.config import DEFAULT_MODEL
from tests.system.private_redis import PrivateRedis
from tests.system.server import ROOT, RunningServer, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> RunningServer:
    running = start_server(tmp_path_factory.mktemp("server"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def bundled(tmp_path_factory) -> Iterator[RunningServer]:
    """The real server on the bundled default model (its sentence cache off), for checks of what it answers."""
    running = spawn_server(DEFAULT_MODEL, tmp_path_factory.mktemp("bundled"), cwd=ROOT, cache_size=0)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """A headless Chromium for the browser tests of one module (``tests.conftest.NEEDS_CHROMIUM``)."""
    with chromium() as running:
        yield running


@pytest.fixture
def private_redis(tmp_path) -> Iterator[PrivateRedis]:
    """A redis-server of the test's own, killed at the end (thawed first if frozen)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.thaw()
    server.kill()
