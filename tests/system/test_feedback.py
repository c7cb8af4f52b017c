"""Writers' feedback on suggestions, against real servers: the edit ids of answers accepted or dismissed over HTTP
and gRPC, counted once per id for the arm and edit type that made them, reported per arm with intervals; unknown
or expired ids refused by name with nothing counted; and two replicas sharing one Redis, so that feedback on an
answer one replica gave counts when another takes it."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from tests.conftest import REDIS_URL
from tests.system.clients import grpc_call, grpc_error, metric, post, wait_for
from tests.system.server import RunningServer, start_server

pytestmark = [pytest.mark.slow, pytest.mark.server]

ADMIN = {"Authorization": "Bearer feedback-admin"}
EXPERIMENT = {
    "name": "acceptance",
    "control": "autoregressive",
    "arms": [{"name": "autoregressive", "weight": 1}, {"name": "accelerated", "weight": 1}],
}
TEXTS = ["i saw a apple yesterday.", "The cat likes teh old car.", "tom found an owl ."]


@pytest.fixture
def replicas(tmp_path, redis_prefix: str) -> Iterator[list[RunningServer]]:
    shared = dict(redis_url=REDIS_URL, redis_prefix=redis_prefix, admin_key="feedback-admin", feedback_ttl_s=600)
    running = [start_server(tmp_path / f"replica-{i}", **shared) for i in range(2)]
    yield running
    for server in running:
        server.stop()


def corrected(server: RunningServer, user: str) -> tuple[str, list[dict]]:
    """The arm that served ``user`` and the edits of its answers to every text."""
    edits, arm = [], ""
    for text in TEXTS:
        answer = post(server, "/v1/correct", {"text": text, "client": {"user_id": user}}).json()
        arm = answer["arm"]
        edits += answer["edits"]
    return arm, edits


def feedback(server: RunningServer, ids: list[str], action: str) -> httpx.Response:
    return post(server, "/v1/feedback", {"edit_ids": ids, "action": action})


def acceptance(server: RunningServer) -> dict:
    return httpx.get(f"{server.url}/v1/experiments/acceptance").json()["acceptance"]


def test_feedback_counts_per_arm_once_and_is_shared_by_the_replicas(replicas: list[RunningServer]) -> None:
    first, second = replicas
    assert httpx.post(f"{first.url}/v1/experiments", json=EXPERIMENT, headers=ADMIN).status_code == 201
    wait_for(lambda: httpx.get(f"{second.url}/v1/experiments").json()["experiment"] is not None, 10)
    by_arm: dict[str, list[dict]] = {}
    for user in range(12):
        arm, edits = corrected(first, f"writer-{user}")
        by_arm.setdefault(arm, []).extend(edits)
    assert set(by_arm) == {"accelerated", "autoregressive"} and all(by_arm.values())
    control = list({edit["id"]: edit for edit in by_arm["autoregressive"]})
    treated = list({edit["id"]: edit for edit in by_arm["accelerated"]})

    taken = feedback(second, control, "accepted")  # the other replica takes the feedback on the first's answers
    assert taken.status_code == 200 and taken.json() == {"counted": len(control), "repeated": 0}
    again = feedback(first, control, "accepted")
    assert again.json() == {"counted": 0, "repeated": len(control)}  # the same id and action count once
    reply, _ = grpc_call(second, "Feedback", pb.FeedbackRequest(edit_ids=treated, action="dismissed"))
    assert (reply.counted, reply.repeated) == (len(treated), 0)
    changed = feedback(first, treated[:1], "accepted")  # a changed mind moves the id
    assert changed.json() == {"counted": 1, "repeated": 0}

    for server in replicas:
        report = acceptance(server)
        assert report["scope"] == "cluster"
        arms = report["arms"]
        assert (arms["autoregressive"]["accepted"], arms["autoregressive"]["dismissed"]) == (len(control), 0)
        assert (arms["accelerated"]["accepted"], arms["accelerated"]["dismissed"]) == (1, len(treated) - 1)
        assert arms["autoregressive"]["rate"] == 1.0 and arms["autoregressive"]["ci"][1] == 1.0
        types = {edit["type"] for edit in by_arm["autoregressive"]}
        assert set(arms["autoregressive"]["by_type"]) == types
        (comparison,) = report["comparisons"]
        assert comparison["arm"] == "accelerated" and comparison["control"] == "autoregressive"
        assert comparison["p_value"] is not None and comparison["difference"] < 0

    exposition = httpx.get(f"{second.url}/metrics").text
    labels = {"experiment": "acceptance", "arm": "accelerated", "action": "dismissed"}
    counted = metric(exposition, "gecserve_feedback_edits_total", **labels)
    assert counted == len(treated)  # counted on the replica that took it, by the arm that made the edits


def test_unknown_ids_are_named_and_nothing_is_counted(replicas: list[RunningServer]) -> None:
    server = replicas[0]
    _, edits = corrected(server, "writer-x")
    known = edits[0]["id"]
    refused = feedback(server, [known, "abcdef123456", "0123"], "accepted")
    assert refused.status_code == 404 and refused.json()["error"]["reason"] == "unknown_edits"
    message = refused.json()["error"]["message"]
    assert "abcdef123456" in message and "0123" in message and known not in message
    assert feedback(server, [known], "accepted").json() == {"counted": 1, "repeated": 0}  # nothing was counted
    error = grpc_error(server, "Feedback", pb.FeedbackRequest(edit_ids=["ffff"], action="accepted"))
    assert error.code() == grpc.StatusCode.NOT_FOUND and "ffff" in error.details()
    invalid = feedback(server, ["not hex!"], "accepted")
    assert invalid.status_code == 422
    assert feedback(server, [known], "loved").status_code == 422


def test_expired_ids_are_refused(tmp_path) -> None:
    server = start_server(tmp_path, feedback_ttl_s=1)
    try:
        edits = post(server, "/v1/correct", {"text": TEXTS[0]}).json()["edits"]
        ids = [edit["id"] for edit in edits]
        wait_for(lambda: feedback(server, ids, "dismissed").status_code == 404, 10, what="the ids expired")
    finally:
        server.stop()
