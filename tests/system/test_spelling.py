"""The spelling stage through the real server: typed edits on the right offsets in both units, off per request
(HTTP, gRPC, LanguageTool's TYPOS category), and a model without a vocabulary served without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from tests.system.clients import grpc_call, post, rebuild
from tests.system.server import RunningServer, start_server

pytestmark = pytest.mark.server

# NBSP, a zero-width space and an astral emoji before the misspelling: code points and UTF-16 units differ.
TEXT = "😀 Tom found an honset owl.\u00a0\u200bTom found an honset owl."


@pytest.fixture(scope="module")
def speller_server(tmp_path_factory, spelling_model_dir: Path) -> RunningServer:
    running = start_server(tmp_path_factory.mktemp("spelling-server"), model=spelling_model_dir)
    yield running
    running.stop()


def _correct(server: RunningServer, text: str, unit: str = "codepoint", **options: object) -> dict:
    response = post(server, "/v1/correct", {"text": text, "offset_unit": unit, "options": options})
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("unit", ["codepoint", "utf16"])
def test_spelling_edits_are_typed_and_rebuild_in_both_units(speller_server: RunningServer, unit: str) -> None:
    body = _correct(speller_server, TEXT, unit)
    assert body["text"] == "😀 Tom found an honest owl.\u00a0\u200bTom found an honest owl."
    assert rebuild(TEXT, body["edits"], unit) == body["text"]
    spelled = [(e["original"], e["replacement"], e["type"], e["sentence"]) for e in body["edits"]]
    assert spelled == [("honset", "honest", "spelling", 0), ("honset", "honest", "spelling", 1)]
    emoji = 2 if unit == "utf16" else 1
    assert [e["offset"] for e in body["edits"]] == [emoji + 14, emoji + 14 + 26]


def test_spelling_off_per_request_is_the_model_alone(speller_server: RunningServer, server: RunningServer) -> None:
    """`options.spelling: false` answers what the same model without a vocabulary answers (the `server` fixture's)."""
    off = _correct(speller_server, TEXT, spelling=False)
    plain = _correct(server, TEXT)
    assert (off["text"], off["edits"]) == (plain["text"], plain["edits"])
    assert "honest" not in off["text"]
    assert _correct(server, TEXT, spelling=True)["edits"] == plain["edits"]  # no vocabulary: nothing to turn on


def test_grpc_spelling_option(speller_server: RunningServer) -> None:
    on, _ = grpc_call(speller_server, "Correct", pb.CorrectRequest(text=TEXT))
    off, _ = grpc_call(
        speller_server, "Correct", pb.CorrectRequest(text=TEXT, options=pb.CorrectOptions(spelling=False))
    )
    assert on.text == _correct(speller_server, TEXT)["text"]
    assert off.text == _correct(speller_server, TEXT, spelling=False)["text"] != on.text
    assert [e.type for e in on.edits] == ["spelling", "spelling"]


def test_languagetool_typos_category_off_turns_the_stage_off(speller_server: RunningServer) -> None:
    def check(**params: str) -> list[dict]:
        response = post(speller_server, "/v2/check", None, data={"text": TEXT, "language": "en-US", **params})
        assert response.status_code == 200, response.text
        return response.json()["matches"]

    assert [m["rule"]["id"] for m in check()] == ["GEC_SPELL", "GEC_SPELL"]
    off = _correct(speller_server, TEXT, spelling=False)
    typos_off = check(disabledCategories="TYPOS")
    assert [m["replacements"][0]["value"] for m in typos_off] == [
        e["replacement"] for e in off["edits"] if e["type"] != "spelling"
    ]
