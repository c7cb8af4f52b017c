"""A writer's own words, against a real server: a word added to a writer's dictionary (``/v1/words`` or
LanguageTool's ``/v2/words``) is never changed in that writer's answers, over ``/v1/correct``, gRPC and
``/v2/check``, while other writers' answers still change it; removed, it is corrected again."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from tests.system.clients import grpc_call, post
from tests.system.server import RunningServer, start_server

pytestmark = [pytest.mark.slow, pytest.mark.server]

TEXT = "i saw a apple yesterday."  # the tiny model: "I saw an apple yesterday."


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[RunningServer]:
    running = start_server(tmp_path_factory.mktemp("words"), cache_size=0)
    yield running
    running.stop()


def corrected(server: RunningServer, user: str | None) -> dict:
    body = {"text": TEXT, **({"client": {"user_id": user}} if user else {})}
    return post(server, "/v1/correct", body).json()


def test_a_writer_s_own_word_is_never_changed_in_their_answers(server: RunningServer) -> None:
    assert corrected(server, "ana")["text"] == "I saw an apple yesterday."
    added = post(server, "/v1/words", {"user": "ana", "word": "a"})
    assert added.status_code == 201 and added.json() == {"added": True}
    mine = corrected(server, "ana")
    assert mine["text"] == "I saw a apple yesterday."  # the other edit stays
    assert [edit["original"] for edit in mine["edits"]] == ["i"]
    assert corrected(server, "ben")["text"] == "I saw an apple yesterday."  # another writer's dictionary is theirs
    reply, _ = grpc_call(server, "Correct", pb.CorrectRequest(text=TEXT, client=pb.ClientInfo(user_id="ana")))
    assert reply.text == "I saw a apple yesterday."
    (edit,) = reply.edits  # gRPC's edits say what they are too
    assert (edit.category, edit.message) == ("R:ORTH", "Check the capitalisation: 'i' → 'I'.")
    listed = httpx.get(f"{server.url}/v1/words", params={"user": "ana"}).json()
    assert listed["words"] == ["a"]
    removed = httpx.delete(f"{server.url}/v1/words/a", params={"user": "ana"})
    assert removed.json() == {"deleted": True}
    assert corrected(server, "ana")["text"] == "I saw an apple yesterday."


def test_languagetool_clients_keep_their_words_in_check_too(server: RunningServer) -> None:
    form = {"text": TEXT, "language": "en-US", "username": "carla"}
    before = httpx.post(f"{server.url}/v2/check", data=form).json()["matches"]
    assert any(match["replacements"][0]["value"] == "an" for match in before)
    added = httpx.post(f"{server.url}/v2/words/add", data={"word": "a", "username": "carla"})
    assert added.json() == {"added": True}
    assert httpx.get(f"{server.url}/v2/words", params={"username": "carla"}).json()["words"] == ["a"]
    after = httpx.post(f"{server.url}/v2/check", data=form).json()["matches"]
    assert not any(match["replacements"][0]["value"] == "an" for match in after) and after
    for match in after:  # every match explains itself, and names its rule by category
        assert match["message"] and match["rule"]["id"].startswith("GEC_") and match["shortMessage"]


def test_a_dialect_never_suggests_a_writer_s_own_word(server: RunningServer) -> None:
    body = {"text": "Color", "options": {"language": "en-GB"}, "client": {"user_id": "dora"}}
    assert post(server, "/v1/correct", body).json()["text"] == "Colour"
    assert post(server, "/v1/words", {"user": "dora", "word": "Color"}).status_code == 201
    answer = post(server, "/v1/correct", body).json()
    assert answer["text"] == "Color" and answer["edits"] == []
