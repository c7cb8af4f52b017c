"""The keep bias per request with the bundled model: ``options.level`` and ``options.keep_bias`` over HTTP, gRPC and
LanguageTool's ``level``, more edits below the model's default and fewer above it, refused where the arm's decoding
takes none."""

from __future__ import annotations

import grpc
import httpx
import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from service.engine.manifest import ModelManifest
from service.text.policy import LEVELS
from tests.conftest import DEFAULT_MODEL
from tests.system.clients import grpc_call, grpc_error, post
from tests.system.server import RunningServer

pytestmark = [pytest.mark.slow, pytest.mark.server]

TEXT = (
    "I am agree with you that the people should to be more carefull about there health. "
    "In my opinion , the tecnology have change our lifes in many way . "
    "We visited the old town without guide."  # "without a guide": picky's, not default's
)


def corrected(server: RunningServer, **options: object) -> dict:
    """The correction and its edits (without the timings, which differ from call to call)."""
    response = post(server, "/v1/correct", {"text": TEXT, "options": options})
    assert response.status_code == 200, response.text
    return {key: value for key, value in response.json().items() if key != "timings_ms"}


def test_picky_edits_more_and_a_high_keep_bias_less(bundled: RunningServer) -> None:
    default = corrected(bundled)
    picky = corrected(bundled, level="picky")
    cautious = corrected(bundled, keep_bias=5.0, spelling=False)
    assert len(cautious["edits"]) < len(default["edits"]) < len(picky["edits"])
    levels = ModelManifest.load(DEFAULT_MODEL).keep_bias
    # picky is the model's measured recall end and its own confidence threshold
    assert corrected(bundled, keep_bias=levels["picky"], min_confidence=LEVELS["picky"]) == picky
    assert corrected(bundled, keep_bias=levels["default"]) == default
    assert corrected(bundled, level="default") == default


def test_grpc_and_languagetool_take_the_same_knob(bundled: RunningServer) -> None:
    picky = corrected(bundled, level="picky")
    reply, _ = grpc_call(bundled, "Correct", pb.CorrectRequest(text=TEXT, options=pb.CorrectOptions(level="picky")))
    assert reply.text == picky["text"]
    levels = ModelManifest.load(DEFAULT_MODEL).keep_bias
    biased = pb.CorrectOptions(keep_bias=levels["picky"], min_confidence=LEVELS["picky"])
    assert grpc_call(bundled, "Correct", pb.CorrectRequest(text=TEXT, options=biased))[0].text == picky["text"]
    check = httpx.post(bundled.url + "/v2/check", data={"text": TEXT, "language": "en-US", "level": "picky"})
    assert check.status_code == 200, check.text
    replaced = [(m["offset"], m["length"], m["replacements"][0]["value"]) for m in check.json()["matches"]]
    assert replaced == [(e["offset"], e["length"], e["replacement"]) for e in picky["edits"]]


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"keep_bias": 9.0}, "keep_bias"),
        ({"keep_bias": "high"}, "keep_bias"),
        ({"level": "eager"}, "level"),
        ({"keep_bias": 1.0, "backend": "beam"}, "beam"),
        ({"keep_bias": 1.0, "alternatives": 2}, "beam"),
    ],
)
def test_a_keep_bias_that_cannot_be_served_is_422(bundled: RunningServer, options: dict, needle: str) -> None:
    response = post(bundled, "/v1/correct", {"text": TEXT, "options": options})
    assert response.status_code == 422, response.text
    assert needle in response.json()["error"]["message"]


def test_grpc_refuses_a_keep_bias_out_of_range(bundled: RunningServer) -> None:
    error = grpc_error(bundled, "Correct", pb.CorrectRequest(text=TEXT, options=pb.CorrectOptions(keep_bias=-7.5)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "keep_bias" in error.details()
