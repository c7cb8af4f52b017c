"""Shared fixtures: the tiny test model exported by the real exporter, and a real Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

FIXTURE_MODEL = Path(__file__).parent / "fixtures" / "tiny-gec"
REDIS_URL = "redis://127.0.0.1:6379/0"  # .ci/run starts a server here when none answers


@pytest.fixture(scope="session")
def tiny_model_dir() -> Path:
    return FIXTURE_MODEL


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A key prefix of the test's own on the real Redis; its keys are deleted afterwards."""
    client = redis.Redis.from_url(REDIS_URL)
    client.ping()  # a real Redis is part of the test environment: fail here, clearly, without one
    prefix = f"gecserve-test:{uuid.uuid4().hex[:12]}:"
    yield prefix
    keys = list(client.scan_iter(match=prefix + "*"))
    if keys:
        client.delete(*keys)
    client.close()
