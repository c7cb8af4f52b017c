"""A/B experiments against a real server: assignment, overrides, admin key, shadow agreement, the report."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import yaml

from service.api.proto import gecserve_pb2 as pb
from tests.api.clients import grpc_call, post, wait_for
from tests.api.server import RunningServer, start_server

KEY = "s3cret-admin-key"
EXPERIMENT = {
    "name": "ab",
    "control": "autoregressive",
    "arms": [{"name": "accelerated", "weight": 50}, {"name": "autoregressive", "weight": 50}],
    "shadow": {"arm": "autoregressive", "sample_rate": 1.0},
}
ADMIN = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture(scope="module")
def ab_server(tmp_path_factory) -> RunningServer:
    folder = tmp_path_factory.mktemp("ab")
    path = folder / "ab.yaml"
    path.write_text(yaml.safe_dump(EXPERIMENT))
    running = start_server(folder, experiment=path, admin_key=KEY, cache_size=0)
    yield running
    running.stop()


def report(server: RunningServer, name: str = "ab") -> dict:
    return httpx.get(f"{server.url}/v1/experiments/{name}", timeout=30).json()


def test_users_are_assigned_stickily_and_told_which_arm(ab_server) -> None:
    arms = {}
    for i in range(40):
        response = post(ab_server, "/v1/correct", {"text": "i saw a apple.", "client": {"user_id": f"user-{i}"}})
        body = response.json()
        assert body["experiment"] == "ab" == response.headers["x-gecserve-experiment"]
        assert body["arm"] == response.headers["x-gecserve-arm"] and body["arm"] == body["backend"]
        arms[f"user-{i}"] = body["arm"]
    assert set(arms.values()) == {"accelerated", "autoregressive"}
    for user, arm in list(arms.items())[:10]:
        again = post(ab_server, "/v1/correct", {"text": "Tom found an owl.", "client": {"user_id": user}}).json()
        assert again["arm"] == arm
        reply, metadata = grpc_call(
            ab_server, "Correct", pb.CorrectRequest(text="Tom found an owl.", client=pb.ClientInfo(user_id=user))
        )
        assert reply.arm == metadata["x-gecserve-arm"] == arm and reply.experiment == "ab"


def test_overrides_are_served_but_not_counted_in_the_arms(ab_server) -> None:
    before = {arm["name"]: arm["requests"] for arm in report(ab_server)["arms"]}
    forced = post(ab_server, "/v1/correct", {"text": "i saw a apple."}, headers={"X-Gecserve-Arm": "autoregressive"})
    assert forced.json()["arm"] == "autoregressive" and "experiment" not in forced.json()
    beam = post(ab_server, "/v1/correct", {"text": "i saw a apple.", "options": {"alternatives": 2}}).json()
    assert beam["arm"] == "beam" and "experiment" not in beam
    after = {arm["name"]: arm["requests"] for arm in report(ab_server)["arms"]}
    assert after == before
    metrics = httpx.get(ab_server.url + "/metrics").text
    assert 'arm="autoregressive",experiment="none",kind="override"' in metrics


def test_shadow_agreement_of_exact_arms_is_complete(ab_server) -> None:
    """Accelerated and autoregressive decoding give the same output: every shadowed sentence agrees."""
    texts = ["i saw a apple. We visited a island last week.", "Tom found a honest owl. My friend bought a umbrella"]
    for i in range(30):
        post(ab_server, "/v1/correct", {"text": texts[i % 2], "client": {"user_id": f"shadow-{i}"}})

    def compared() -> int:
        pairs = (report(ab_server)["shadow"] or {}).get("pairs", [])
        return sum(p["compared"] for p in pairs)

    wait_for(lambda: compared() >= 10)
    shadow = report(ab_server)["shadow"]
    (pair,) = shadow["pairs"]
    assert (pair["served"], pair["shadow"], pair["expected"]) == ("accelerated", "autoregressive", 1.0)
    assert pair["agreement"] == 1.0 and shadow["disagreements"] == []
    metrics = httpx.get(ab_server.url + "/metrics").text
    assert 'experiment="ab",result="agree",served="accelerated",shadow="autoregressive"' in metrics


def test_report_has_intervals_comparison_and_sample_ratio(ab_server) -> None:
    for i in range(60):
        post(ab_server, "/v1/correct", {"text": "i saw a apple yesterday.", "client": {"session_id": f"s{i}"}})
    body = report(ab_server)
    assert body["scope"] == "local" and body["replicas"] == {"live": 1, "reporting": 1}
    arms = {arm["name"]: arm for arm in body["arms"]}
    for arm in arms.values():
        latency = arm["latency_ms"]["p50"]
        assert latency["ci"][0] <= latency["value"] <= latency["ci"][1]
        assert set(arm["stages_ms"]) >= {"preprocess", "queue", "inference"}
    (comparison,) = body["comparisons"]
    assert comparison["arm"] == "accelerated" and comparison["control"] == "autoregressive"
    assert comparison["speedup"]["p50"]["value"] > 0 and comparison["median_test"]["p_value"] is not None
    assert body["sample_ratio"]["mismatch"] is False
    assert sum(body["sample_ratio"]["observed"].values()) == sum(arm["assigned"] for arm in body["arms"])
    assert any(body["timeline"]["arms"][name] for name in arms)
    overview = httpx.get(ab_server.url + "/v1/experiments").json()
    assert overview["experiment"]["name"] == "ab" and "accelerated" in overview["backends"]


def test_weights_change_at_run_time_with_the_admin_key(ab_server) -> None:
    url = f"{ab_server.url}/v1/experiments/ab/weights"
    body = {"weights": {"accelerated": 100, "autoregressive": 0}}
    assert httpx.put(url, json=body).status_code == 401
    assert httpx.put(url, json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
    for bad, reason in (
        ({"weights": {"quantum": 1}}, "unknown_arm"),
        ({"weights": {"accelerated": -1}}, "invalid_weights"),
        ({"weights": {"accelerated": 0, "autoregressive": 0}}, "invalid_weights"),
    ):
        refused = httpx.put(url, json=bad, headers=ADMIN)
        assert refused.status_code == 400 and refused.json()["error"]["reason"] == reason
    changed = httpx.put(url, json=body, headers=ADMIN)
    assert changed.status_code == 200 and changed.json()["weights"] == {"accelerated": 100.0, "autoregressive": 0.0}
    arms = {
        post(ab_server, "/v1/correct", {"text": "a b.", "client": {"user_id": f"w{i}"}}).json()["arm"]
        for i in range(30)
    }
    assert arms == {"accelerated"}
    restored = httpx.put(url, json={"weights": {"autoregressive": 100}}, headers=ADMIN)
    assert restored.json()["weights"] == {"accelerated": 100.0, "autoregressive": 100.0}


def test_start_and_stop_with_the_admin_key(ab_server) -> None:
    other = {
        "name": "draft",
        "arms": [
            {"name": "accelerated", "weight": 1},
            {"name": "d32", "backend": "accelerated", "params": {"max_draft": 32}, "weight": 1},
        ],
    }
    assert httpx.post(ab_server.url + "/v1/experiments", json=other).status_code == 401
    started = httpx.post(ab_server.url + "/v1/experiments", json=other, headers=ADMIN)
    assert started.status_code == 201 and started.json()["running"]
    served = {
        post(ab_server, "/v1/correct", {"text": "i saw a apple.", "client": {"user_id": f"d{i}"}}).json()["arm"]
        for i in range(20)
    }
    assert served == {"accelerated", "d32"}
    stopped = httpx.post(ab_server.url + "/v1/experiments/draft/stop", headers=ADMIN)
    assert stopped.status_code == 200 and not stopped.json()["running"]
    after = post(ab_server, "/v1/correct", {"text": "i saw a apple.", "client": {"user_id": "d1"}}).json()
    assert after["arm"] == "accelerated" and "experiment" not in after
    assert report(ab_server, "draft")["status"] == "stopped"
    again = httpx.post(ab_server.url + "/v1/experiments", json=EXPERIMENT, headers=ADMIN)
    assert again.status_code == 201


def test_a_bad_experiment_file_stops_start_up(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        yaml.safe_dump({**EXPERIMENT, "arms": [{"name": "accelerated", "weight": -5}, {"name": "beam", "weight": 1}]})
    )
    with pytest.raises(RuntimeError) as error:
        start_server(tmp_path, experiment=path)
    assert "exited with 2" in str(error.value) and "arms.0.weight" in str(error.value)
