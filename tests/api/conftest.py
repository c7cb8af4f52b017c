"""A real server for the API tests (module-scoped: one process per test module)."""

from __future__ import annotations

import pytest

from tests.api.server import RunningServer, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> RunningServer:
    running = start_server(tmp_path_factory.mktemp("server"))
    yield running
    running.stop()
