"""A/B experiments against a real server: assignment, overrides, admin key, shadow agreement, the report,
starting one while another runs, stopped experiments' numbers, and weights as shares in percent."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml

from service.api.grpc.proto import gecserve_pb2 as pb
from service.experiments.assignment import bucket_of, initial_table, rebalance
from tests.system.clients import grpc_call, post, wait_for
from tests.system.server import RunningServer, start_server

pytestmark = pytest.mark.server

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
    # One arm named: it takes that share, the other the rest.
    restored = httpx.put(url, json={"weights": {"autoregressive": 50}}, headers=ADMIN)
    assert restored.json()["weights"] == {"accelerated": 50.0, "autoregressive": 50.0}


def test_start_and_stop_with_the_admin_key(ab_server) -> None:
    """Another experiment is refused while one runs (409), unless it replaces it; the replaced and the
    stopped experiments' numbers stay readable, as they were; the same name again starts afresh."""
    other = {
        "name": "draft",
        "arms": [
            {"name": "accelerated", "weight": 1},
            {"name": "d32", "backend": "accelerated", "params": {"max_draft": 32}, "weight": 1},
        ],
    }
    url = ab_server.url + "/v1/experiments"
    assert httpx.post(url, json=other).status_code == 401
    ab = arm_numbers(report(ab_server))
    assert sum(requests for requests, _ in ab.values()) > 0
    refused = httpx.post(url, json=other, headers=ADMIN)
    assert refused.status_code == 409 and refused.json()["error"]["reason"] == "conflict"
    assert (
        "'ab' is running" in refused.json()["error"]["message"] and "replace=true" in refused.json()["error"]["message"]
    )
    assert report(ab_server)["status"] == "running"
    started = httpx.post(url, params={"replace": "true"}, json=other, headers=ADMIN)
    assert started.status_code == 201 and started.json()["running"]
    assert started.json()["weights"] == {"accelerated": 50.0, "d32": 50.0}  # the file's 1:1, as shares
    replaced = report(ab_server, "ab")
    assert replaced["status"] == "stopped" and replaced["stopped_at"] >= replaced["started_at"]
    assert arm_numbers(replaced) == ab
    served = {
        post(ab_server, "/v1/correct", {"text": "i saw a apple.", "client": {"user_id": f"d{i}"}}).json()["arm"]
        for i in range(20)
    }
    assert served == {"accelerated", "d32"}
    assert arm_numbers(report(ab_server, "ab")) == ab  # the new experiment's requests are not the old one's
    stopped = httpx.post(url + "/draft/stop", headers=ADMIN)
    assert stopped.status_code == 200 and not stopped.json()["running"]
    after = post(ab_server, "/v1/correct", {"text": "i saw a apple.", "client": {"user_id": "d1"}}).json()
    assert after["arm"] == "accelerated" and "experiment" not in after
    draft = report(ab_server, "draft")
    assert draft["status"] == "stopped" and sum(arm["requests"] for arm in draft["arms"]) == 20
    again = httpx.post(url, json=EXPERIMENT, headers=ADMIN)  # nothing runs: no replace needed
    assert again.status_code == 201
    assert sum(requests for requests, _ in arm_numbers(report(ab_server, "ab")).values()) == 0  # afresh
    assert arm_numbers(report(ab_server, "draft")) == arm_numbers(draft)  # still readable


def arm_numbers(body: dict) -> dict[str, tuple[int, float | None]]:
    """Per arm of a report: requests, and the p50 latency."""
    return {arm["name"]: (arm["requests"], arm["latency_ms"]["p50"]["value"]) for arm in body["arms"]}


def test_a_bad_experiment_file_stops_start_up(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        yaml.safe_dump({**EXPERIMENT, "arms": [{"name": "accelerated", "weight": -5}, {"name": "beam", "weight": 1}]})
    )
    with pytest.raises(RuntimeError) as error:
        start_server(tmp_path, experiment=path)
    assert "exited with 2" in str(error.value) and "arms.0.weight" in str(error.value)


def test_weights_are_shares_and_the_arms_left_out_share_the_rest(ab_server) -> None:
    """Bodies sent as `curl -d` sends them (a form's Content-Type) are read as JSON; one arm named takes
    its share and the others share the rest; refusals name the arms; only the users the change needs move."""
    form = {**ADMIN, "content-type": "application/x-www-form-urlencoded"}
    arms = [
        {"name": "accelerated", "weight": 2},
        {"name": "autoregressive", "weight": 1},
        {"name": "d32", "backend": "accelerated", "params": {"max_draft": 32}, "weight": 1},
    ]
    started = httpx.post(
        ab_server.url + "/v1/experiments?replace=true",
        content=json.dumps({"name": "shares", "arms": arms}),
        headers=form,
    )
    assert started.status_code == 201
    assert started.json()["weights"] == {"accelerated": 50.0, "autoregressive": 25.0, "d32": 25.0}
    names = [arm["name"] for arm in arms]
    users = [f"s{i}" for i in range(60)]

    def served() -> dict[str, str]:
        return {
            u: post(ab_server, "/v1/correct", {"text": "a b.", "client": {"user_id": u}}).json()["arm"] for u in users
        }

    table = initial_table([50, 25, 25])
    before = served()
    assert before == {u: names[table[bucket_of("shares", u)]] for u in users}
    url = f"{ab_server.url}/v1/experiments/shares/weights"
    changed = httpx.put(url, content='{"weights": {"accelerated": 90}}', headers=form)
    assert changed.status_code == 200
    assert changed.json()["weights"] == {"accelerated": 90.0, "autoregressive": 5.0, "d32": 5.0}
    after = served()
    table = rebalance(table, [90, 5, 5])
    assert after == {u: names[table[bucket_of("shares", u)]] for u in users}
    assert {before[u] for u in users if after[u] != before[u]} <= {"autoregressive", "d32"}
    assert {after[u] for u in users if after[u] != before[u]} == {"accelerated"}

    for bad, words in (
        ({"accelerated": 90, "autoregressive": 20}, ["over 100", "accelerated 90, autoregressive 20"]),
        ({"accelerated": 50, "autoregressive": 30, "d32": 10}, ["every arm must add up to 100, not 90"]),
    ):
        refused = httpx.put(url, json={"weights": bad}, headers=ADMIN)
        assert refused.status_code == 400 and refused.json()["error"]["reason"] == "invalid_weights"
        assert all(word in refused.json()["error"]["message"] for word in words), refused.json()
    assert httpx.put(url, json={"weights": {"accelerated": 100}}, headers=ADMIN).json()["weights"] == {
        "accelerated": 100.0,
        "autoregressive": 0.0,
        "d32": 0.0,
    }
    nowhere = httpx.put(url, json={"weights": {"accelerated": 60}}, headers=ADMIN)
    assert nowhere.status_code == 400
    assert "left out (autoregressive, d32), but their weights are 0" in nowhere.json()["error"]["message"]
    not_json = httpx.put(url, content="weights[accelerated]=90", headers=form)
    assert not_json.status_code == 422 and not_json.json()["error"]["reason"] == "invalid"
    assert not_json.json()["error"]["message"].startswith("body: not JSON (Expecting value at character 0)")
    assert httpx.post(ab_server.url + "/v1/experiments/shares/stop", headers=ADMIN).status_code == 200
