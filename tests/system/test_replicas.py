"""Two gateway replicas sharing experiments through a real Redis: merged numbers, shared weights; another
experiment starts only in place of the running one, and the one it replaced, like a stopped one, stays readable on
either replica with the numbers both replicas had served."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
import yaml

from tests.conftest import REDIS_URL
from tests.system.clients import post, wait_for
from tests.system.server import RunningServer, start_server
from tests.system.test_experiments import ADMIN, EXPERIMENT, KEY

pytestmark = [pytest.mark.slow, pytest.mark.server]

OTHER = {
    "name": "draft",
    "arms": [
        {"name": "accelerated", "weight": 1},
        {"name": "d32", "backend": "accelerated", "params": {"max_draft": 32}, "weight": 1},
    ],
}


@pytest.fixture
def replicas(tmp_path, redis_prefix: str) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Two servers running the experiment ``ab`` from a file, sharing it through the real Redis."""
    path = tmp_path / "ab.yaml"
    path.write_text(yaml.safe_dump(EXPERIMENT))
    shared = {"experiment": path, "admin_key": KEY, "redis_url": REDIS_URL, "redis_prefix": redis_prefix}
    first = start_server(tmp_path / "a", cache_size=0, **shared)
    second = start_server(tmp_path / "b", cache_size=0, **shared)
    yield first, second
    first.stop()
    second.stop()


def serve_users(server: RunningServer, count: int, prefix: str) -> None:
    for i in range(count):
        post(server, "/v1/correct", {"text": "i saw a apple.", "client": {"user_id": f"{prefix}{i}"}})


def report(server: RunningServer, name: str) -> dict:
    return httpx.get(f"{server.url}/v1/experiments/{name}", timeout=30).json()


def requests(body: dict) -> int:
    return sum(arm["requests"] for arm in body["arms"])


def test_two_replicas_report_the_merged_numbers_and_share_weights(replicas) -> None:
    first, second = replicas
    serve_users(first, 25, "a")
    serve_users(second, 15, "b")
    # each replica merges the numbers the other last published: both get there, not at the same moment
    wait_for(lambda: all(requests(report(server, "ab")) == 40 for server in (first, second)))
    for server in (first, second):
        body = report(server, "ab")
        assert body["scope"] == "cluster" and body["replicas"]["live"] == 2 and body["replicas"]["reporting"] == 2
        assert sum(arm["requests"] for arm in body["arms"]) == 40
        assert sum(arm["assigned"] for arm in body["arms"]) == 40
    # A weight change on one replica reaches the other.
    changed = httpx.put(
        f"{second.url}/v1/experiments/ab/weights",
        json={"weights": {"accelerated": 0, "autoregressive": 100}},
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
        assert post(first, "/v1/correct", payload).json()["arm"] == post(second, "/v1/correct", payload).json()["arm"]


def test_unreachable_redis_degrades_to_this_replicas_numbers(tmp_path) -> None:
    path = tmp_path / "ab.yaml"
    path.write_text(yaml.safe_dump(EXPERIMENT))
    server = start_server(tmp_path, experiment=path, redis_url="redis://127.0.0.1:9/0", cache_size=0)
    try:
        body = post(server, "/v1/correct", {"text": "i saw a apple.", "client": {"user_id": "u1"}}).json()
        assert body["experiment"] == "ab" and body["text"] == "I saw an apple."
        body = report(server, "ab")
        assert body["scope"] == "local" and requests(body) == 1
        refused = httpx.put(f"{server.url}/v1/experiments/ab/weights", json={"weights": {"accelerated": 1}})
        assert refused.status_code == 403  # no admin key here; with one, a store outage is a 503
        assert "experiment store unreachable" in server.log()
    finally:
        server.stop()


def test_a_replaced_experiment_stays_readable_on_every_replica(replicas) -> None:
    first, second = replicas
    serve_users(first, 12, "a")
    serve_users(second, 8, "b")
    wait_for(lambda: requests(report(first, "ab")) == 20)
    running = report(first, "ab")

    refused = httpx.post(second.url + "/v1/experiments", json=OTHER, headers=ADMIN)
    assert refused.status_code == 409 and "'ab' is running" in refused.json()["error"]["message"]
    started = httpx.post(second.url + "/v1/experiments", params={"replace": "true"}, json=OTHER, headers=ADMIN)
    assert started.status_code == 201

    late = []  # requests the first replica still assigned to "ab" before it learnt of the change

    def on_draft() -> bool:
        answer = post(first, "/v1/correct", {"text": "a b.", "client": {"user_id": "u"}}).json()
        late.append(answer["experiment"] == "ab")
        return answer["experiment"] == "draft"

    wait_for(on_draft)
    for server in (first, second):
        replaced = report(server, "ab")
        assert replaced["status"] == "stopped" and replaced["scope"] == "cluster"
        # a late request counts when it was also answered before its replica learnt of the change (one routed to
        # "ab" but answered after the switch is in neither experiment's numbers)
        assert replaced["replicas"]["reporting"] == 2 and 20 <= requests(replaced) <= 20 + sum(late)
        if not any(late):
            assert [arm["latency_ms"] for arm in replaced["arms"]] == [arm["latency_ms"] for arm in running["arms"]]

    # Stopped on one replica: the other stops assigning to it, and both read it.
    assert httpx.post(first.url + "/v1/experiments/draft/stop", headers=ADMIN).status_code == 200
    wait_for(lambda: "experiment" not in post(second, "/v1/correct", {"text": "a b."}).json())

    # What the second replica served until it learnt of the stop reaches Redis within a second: both read the
    # same count, and it stays so over a second (a request answered just before the stop is flushed after it).
    def settled() -> bool:
        before = requests(report(first, "draft"))
        time.sleep(1.2)
        return before == requests(report(first, "draft")) == requests(report(second, "draft"))

    wait_for(settled)
    served = requests(report(first, "draft"))
    assert served >= 1 and report(second, "draft")["status"] == "stopped"
    again = httpx.post(second.url + "/v1/experiments", json=EXPERIMENT, headers=ADMIN)  # nothing runs now
    assert again.status_code == 201
    wait_for(lambda: report(first, "ab")["status"] == "running")
    assert requests(report(first, "ab")) == 0 and requests(report(first, "draft")) == served
