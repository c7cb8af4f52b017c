"""The serving runtime stays apart from the benchmarks: serving loads none of ``bench``, Locust, gevent, matplotlib."""

from __future__ import annotations

from tests.conftest import modules_loaded


def test_the_runtime_imports_no_load_tooling() -> None:
    tooling = ("bench", "locust", "gevent", "matplotlib")
    assert modules_loaded("service.cli, service.api.server, service.worker", tooling) == []
