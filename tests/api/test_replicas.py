"""Two gateway replicas sharing one experiment through a real Redis: merged numbers, shared weights."""

from __future__ import annotations

import httpx
import pytest
import yaml

from tests.api.clients import post, wait_for
from tests.api.server import start_server
from tests.api.test_experiments import ADMIN, EXPERIMENT, KEY
from tests.conftest import REDIS_URL

pytestmark = pytest.mark.slow


def test_two_replicas_report_the_merged_numbers_and_share_weights(tmp_path, redis_prefix: str) -> None:
    path = tmp_path / "ab.yaml"
    path.write_text(yaml.safe_dump(EXPERIMENT))
    shared = {"experiment": path, "admin_key": KEY, "redis_url": REDIS_URL, "redis_prefix": redis_prefix}
    first = start_server(tmp_path / "a", cache_size=0, **shared)
    second = start_server(tmp_path / "b", cache_size=0, **shared)
    try:
        for i in range(25):
            post(first, "/v1/correct", {"text": "i saw a apple.", "client": {"user_id": f"a{i}"}})
        for i in range(15):
            post(second, "/v1/correct", {"text": "i saw a apple.", "client": {"user_id": f"b{i}"}})

        def merged(server) -> dict:
            return httpx.get(f"{server.url}/v1/experiments/ab", timeout=30).json()

        wait_for(lambda: sum(arm["requests"] for arm in merged(first)["arms"]) == 40)
        for server in (first, second):
            body = merged(server)
            assert body["scope"] == "cluster" and body["replicas"]["live"] == 2 and body["replicas"]["reporting"] == 2
            assert sum(arm["requests"] for arm in body["arms"]) == 40
            assert sum(arm["assigned"] for arm in body["arms"]) == 40
        # A weight change on one replica reaches the other.
        changed = httpx.put(
            f"{second.url}/v1/experiments/ab/weights",
            json={"weights": {"accelerated": 0, "autoregressive": 1}},
            headers=ADMIN,
        )
        assert changed.status_code == 200

        def routed_to_control() -> bool:
            arms = {
                post(first, "/v1/correct", {"text": "a b.", "client": {"user_id": f"c{i}"}}).json()["arm"]
                for i in range(10)
            }
            return arms == {"autoregressive"}

        wait_for(routed_to_control, timeout=30)
        # The same user lands on the same arm on either replica.
        for i in range(10):
            payload = {"text": "a b.", "client": {"user_id": f"same-{i}"}}
            assert (
                post(first, "/v1/correct", payload).json()["arm"] == post(second, "/v1/correct", payload).json()["arm"]
            )
    finally:
        first.stop()
        second.stop()


def test_unreachable_redis_degrades_to_this_replicas_numbers(tmp_path) -> None:
    path = tmp_path / "ab.yaml"
    path.write_text(yaml.safe_dump(EXPERIMENT))
    server = start_server(tmp_path, experiment=path, redis_url="redis://127.0.0.1:9/0", cache_size=0)
    try:
        body = post(server, "/v1/correct", {"text": "i saw a apple.", "client": {"user_id": "u1"}}).json()
        assert body["experiment"] == "ab" and body["text"] == "I saw an apple."
        report = httpx.get(f"{server.url}/v1/experiments/ab", timeout=30).json()
        assert report["scope"] == "local" and sum(arm["requests"] for arm in report["arms"]) == 1
        refused = httpx.put(f"{server.url}/v1/experiments/ab/weights", json={"weights": {"accelerated": 1}})
        assert refused.status_code == 403  # no admin key here; with one, a store outage is a 503
        assert "experiment store unreachable" in server.log()
    finally:
        server.stop()
