"""``options.alternatives`` with the bundled model: the count means what it says, an arm that cannot give
alternatives is refused rather than served without them, and implausible alternatives are left out."""

from __future__ import annotations

import grpc
import httpx
import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from service.text.classify import plausible_alternative
from tests.system.clients import grpc_error, post
from tests.system.server import RunningServer

pytestmark = [pytest.mark.slow, pytest.mark.server]

TEXTS = [
    "She go to school every days.",
    "I has a apple and a orange.",
    "He don't like the cats who lives here.",
    "Yesterday I go to the market and buy some vegetable.",
    "We was very happy to see you in the party.",
]


def edits(server: RunningServer, text: str, count: int) -> list[dict]:
    response = post(server, "/v1/correct", {"text": text, "options": {"alternatives": count}})
    assert response.status_code == 200, response.text
    assert response.json()["arm"] == "beam"
    return response.json()["edits"]


@pytest.mark.parametrize("text", TEXTS)
def test_a_count_gives_at_most_that_many_and_never_fewer_than_a_smaller_count_would(
    bundled: RunningServer, text: str
) -> None:
    """The alternatives of a count are the first of a larger count's: 3 never gives none where 5 gives two."""
    by_count = {count: edits(bundled, text, count) for count in (1, 2, 3, 5)}
    spans = [(e["offset"], e["length"], e["replacement"]) for e in by_count[5]]
    for count, found in by_count.items():
        assert [(e["offset"], e["length"], e["replacement"]) for e in found] == spans
        for edit, widest in zip(found, by_count[5], strict=True):
            assert edit["alternatives"] == widest["alternatives"][:count]


@pytest.mark.parametrize("text", TEXTS)
def test_every_alternative_is_a_plausible_second_choice(bundled: RunningServer, text: str) -> None:
    for edit in edits(bundled, text, 5):
        assert edit["replacement"] not in edit["alternatives"]
        for alternative in edit["alternatives"]:
            assert plausible_alternative(edit["original"], edit["replacement"], alternative), edit


def test_i_has_gets_have_and_had_but_not_am(bundled: RunningServer) -> None:
    (has,) = [e for e in edits(bundled, "I has a apple and a orange.", 5) if e["original"] == "has"]
    assert has["replacement"] == "have" and "am" not in has["alternatives"]


@pytest.mark.parametrize("arm", ["accelerated", "autoregressive", "relaxed"])
def test_an_arm_without_an_n_best_list_is_refused_not_served_without_alternatives(
    bundled: RunningServer, arm: str
) -> None:
    payload = {"text": TEXTS[0], "options": {"alternatives": 2, "backend": arm}}
    response = post(bundled, "/v1/correct", payload)
    assert response.status_code == 422 and response.json()["error"]["reason"] == "invalid"
    assert "n-best" in response.json()["error"]["message"]
    header = httpx.post(
        f"{bundled.url}/v1/correct",
        json={"text": TEXTS[0], "options": {"alternatives": 2}},
        headers={"X-Gecserve-Arm": arm},
        timeout=30,
    )
    assert header.status_code == 422
    request = pb.CorrectRequest(texts=[TEXTS[0]], options=pb.CorrectOptions(alternatives=2, backend=arm))
    assert grpc_error(bundled, "Correct", request).code() == grpc.StatusCode.INVALID_ARGUMENT
    check = httpx.post(
        f"{bundled.url}/v2/check",
        data={"text": TEXTS[0], "language": "en-US", "alternatives": "2"},
        headers={"X-Gecserve-Arm": arm},
        timeout=30,
    )
    assert check.status_code == 422 and check.text.startswith("Error:")


def test_the_diverse_arm_serves_plausible_alternatives(bundled: RunningServer) -> None:
    for text in TEXTS:
        response = post(bundled, "/v1/correct", {"text": text, "options": {"alternatives": 5, "backend": "diverse"}})
        assert response.status_code == 200 and response.json()["arm"] == response.json()["backend"] == "diverse"
        for edit in response.json()["edits"]:
            assert edit["replacement"] not in edit["alternatives"]
            assert all(plausible_alternative(edit["original"], edit["replacement"], a) for a in edit["alternatives"])


def test_the_beam_arm_named_serves_alternatives(bundled: RunningServer) -> None:
    response = post(bundled, "/v1/correct", {"text": TEXTS[0], "options": {"alternatives": 2, "backend": "beam"}})
    assert response.status_code == 200 and response.json()["arm"] == "beam"
