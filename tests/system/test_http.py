"""The HTTP API against a running server: shapes, offsets, arms, limits, one error shape everywhere."""

from __future__ import annotations

import http.client
import inspect
import time

import httpx
import pytest
import uvicorn

from service.config import Settings
from service.text.categories import CATEGORIES, OPERATIONS
from tests.system.clients import post, rebuild
from tests.system.server import start_server

pytestmark = pytest.mark.server

TEXTS = [
    "i saw a apple yesterday.  We visited a island last week",
    "Tom found an honest owl.\r\nMy friend my friend bought a umbrella",
    "😀 i saw a apple 中文 é\tThe cat likes teh old car.",
    "𝒜 i saw a apple. 👩‍👩‍👧 we visited a island",
]


@pytest.mark.parametrize("unit", ["codepoint", "utf16"])
def test_edits_rebuild_the_corrected_text(server, unit: str) -> None:
    """Offsets checked by an independent rebuild, for `text` and for `texts` (each paragraph its own)."""
    singles = [post(server, "/v1/correct", {"text": t, "offset_unit": unit}).json() for t in TEXTS]
    for text, body in zip(TEXTS, singles, strict=True):
        assert rebuild(text, body["edits"], unit) == body["text"]
    assert all(body["edits"] for body in singles), "the fixture model corrects these"
    many = post(server, "/v1/correct", {"texts": TEXTS, "offset_unit": unit}).json()["results"]
    for text, single, result in zip(TEXTS, singles, many, strict=True):
        assert rebuild(text, result["edits"], unit) == result["text"] == single["text"]
        assert result["edits"] == single["edits"]


def test_response_shape_and_correction(server) -> None:
    response = post(server, "/v1/correct", {"text": "i saw a apple yesterday."})
    assert response.status_code == 200
    body = response.json()
    assert body["text"] == "I saw an apple yesterday."
    assert body["arm"] == body["backend"] == "accelerated" == response.headers["x-gecserve-arm"]
    assert "experiment" not in body  # no experiment runs on this server
    assert body["model"] == {"name": "tiny-gec", "version": "1"}
    assert set(body["timings_ms"]) == {"preprocess", "cache", "queue", "inference", "review", "postprocess", "total"}
    first = body["edits"][0]
    assert first["original"] == "i" and first["replacement"] == "I" and first["type"] == "capitalisation"
    assert set(first) == {
        *("id", "offset", "length", "original", "replacement", "alternatives", "sentence", "type"),
        *("category", "message", "confidence"),
    }
    assert first["category"] == "R:ORTH" and first["message"] == "Check the capitalisation: 'i' → 'I'."
    article = body["edits"][1]
    assert (article["original"], article["category"]) == ("a", "R:DET")
    assert article["message"] == "Use 'an' before a vowel sound, as in 'an apple'."


def test_texts_form_keeps_order(server) -> None:
    body = post(server, "/v1/correct", {"texts": ["Tom found an honest owl.", "i saw a apple yesterday."]}).json()
    assert [r["text"] for r in body["results"]] == ["Tom found an honest owl.", "I saw an apple yesterday."]
    assert "text" not in body


def test_arms_agree_and_are_chosen_by_option_or_header(server) -> None:
    fast = post(server, "/v1/correct", {"texts": TEXTS, "options": {"backend": "accelerated"}})
    slow = post(server, "/v1/correct", {"texts": TEXTS}, headers={"X-Gecserve-Arm": "autoregressive"})
    assert fast.json()["arm"] == "accelerated" and slow.json()["arm"] == "autoregressive"
    assert slow.headers["x-gecserve-arm"] == "autoregressive"
    assert fast.json()["results"] == slow.json()["results"]


def test_alternatives_come_from_beam_search(server) -> None:
    body = post(server, "/v1/correct", {"text": "i saw a apple yesterday.", "options": {"alternatives": 3}}).json()
    assert body["arm"] == body["backend"] == "beam"  # an n-best list needs beam search
    assert body["text"] == "I saw an apple yesterday."
    assert all(len(e["alternatives"]) <= 3 for e in body["edits"])


def test_generate_beam_and_seeded_sampling(server) -> None:
    beam = post(server, "/v1/generate", {"text": "i saw a apple", "num_return_sequences": 3, "num_beams": 4}).json()
    scores = [s["score"] for s in beam["sequences"]]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)
    payload = {
        "text": "i saw a apple. The cat likes teh old car",
        "strategy": "sample",
        "num_return_sequences": 2,
        "seed": 11,
        "temperature": 3.0,
    }
    first, second = post(server, "/v1/generate", payload).json(), post(server, "/v1/generate", payload).json()
    assert first["sequences"] == second["sequences"]


def test_generate_diverse_beams_are_the_engine_s(server) -> None:
    """The options reach the decoder: the texts are the engine's diverse beam search outputs, best first."""
    from service.engine.engine import DecodeParams, Engine
    from tests.conftest import FIXTURE_MODEL

    text = "i saw a apple yesterday"
    payload = {"text": text, "num_return_sequences": 4, "num_beams": 4, "num_beam_groups": 2, "diversity_penalty": 2.0}
    response = post(server, "/v1/generate", payload)
    assert response.status_code == 200, response.text
    engine = Engine(FIXTURE_MODEL)
    params = DecodeParams(num_beams=4, num_return_sequences=4, num_beam_groups=2, diversity_penalty=2.0)
    (expected,) = engine.generate(engine.codec.encode_batch([text]), "beam", params)
    plain = engine.generate(engine.codec.encode_batch([text]), "beam", DecodeParams(num_return_sequences=4))[0]
    assert [h.tokens for h in expected.hypotheses] != [h.tokens for h in plain.hypotheses]
    texts = [s["text"] for s in response.json()["sequences"]]
    assert texts == [engine.codec.decode(h.tokens) for h in expected.hypotheses]


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"text": 1}, "text"),
        ({}, "exactly one"),
        ({"text": "a", "texts": ["b"]}, "exactly one"),
        ({"text": "a", "offset_unit": "bytes"}, "offset_unit"),
        ({"text": "a", "options": {"alternatives": 9}}, "alternatives"),
        ({"text": "a", "unknown": True}, "unknown"),
        ({"texts": []}, "texts"),
    ],
)
def test_bad_fields_are_422_with_a_reason(server, payload: dict, fragment: str) -> None:
    response = post(server, "/v1/correct", payload)
    assert response.status_code == 422
    assert response.json()["error"]["reason"] == "invalid"
    assert fragment in response.json()["error"]["message"]


def test_unknown_arm_is_400_naming_the_arms(server) -> None:
    for response in (
        post(server, "/v1/correct", {"text": "a", "options": {"backend": "quantum"}}),
        post(server, "/v1/correct", {"text": "a"}, headers={"X-Gecserve-Arm": "quantum"}),
    ):
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["reason"] == "unknown_arm"
        assert "quantum" in error["message"] and "accelerated" in error["message"]
    both = post(
        server, "/v1/correct", {"text": "a", "options": {"backend": "beam"}}, headers={"X-Gecserve-Arm": "relaxed"}
    )
    assert both.status_code == 422 and "disagree" in both.json()["error"]["message"]


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"text": "a", "num_return_sequences": 5, "num_beams": 2}, "num_beams"),
        ({"text": "a", "strategy": "magic"}, "strategy"),
        ({"text": "a", "top_p": 0}, "top_p"),
        ({"text": "a", "strategy": "sample", "temperature": 1e-320}, "temperature"),
        ({"text": "a", "strategy": "sample", "temperature": 0.001}, "temperature"),
        ({"text": "a", "max_new_tokens": 1025}, "max_new_tokens"),
        ({"text": "a", "num_beams": 4, "num_beam_groups": 3, "diversity_penalty": 1.0}, "num_beam_groups"),
        ({"text": "a", "num_beams": 4, "num_beam_groups": 0, "diversity_penalty": 1.0}, "num_beam_groups"),
        ({"text": "a", "num_beams": 4, "num_beam_groups": 2, "diversity_penalty": -1.0}, "diversity_penalty"),
        ({"text": "a", "num_beams": 4, "num_beam_groups": 2}, "diversity_penalty"),
        ({"text": "a", "num_beams": 4, "diversity_penalty": 1.0}, "diversity_penalty"),
        ({"text": "a", "strategy": "sample", "num_beam_groups": 2, "diversity_penalty": 1.0}, "num_beam_groups"),
    ],
)
def test_generate_bad_parameters_are_422(server, payload: dict, fragment: str) -> None:
    response = post(server, "/v1/generate", payload)
    assert response.status_code == 422
    assert fragment in response.json()["error"]["message"]


def test_one_generation_limit_stated_once(server) -> None:
    """The OpenAPI schema states the model's own limit, and the server refuses exactly above it."""
    spec = httpx.get(server.url + "/openapi.json").json()
    limit = int(spec["components"]["schemas"]["GenerateBody"]["properties"]["max_new_tokens"]["anyOf"][0]["maximum"])
    assert post(server, "/v1/generate", {"text": "a b", "max_new_tokens": limit}).status_code == 200
    refused = post(server, "/v1/generate", {"text": "a b", "max_new_tokens": limit + 1})
    assert refused.status_code == 422 and str(limit) in refused.json()["error"]["message"]


def test_invalid_json_and_invalid_utf8_are_422_in_the_error_shape(server) -> None:
    for content in (b"{not json", b'{"text": "\xff\xfe"}'):
        response = httpx.post(
            server.url + "/v1/correct", content=content, timeout=10, headers={"content-type": "application/json"}
        )
        assert response.status_code == 422
        assert response.json()["error"]["reason"] == "invalid"


def test_every_error_has_one_shape(server) -> None:
    for response, status, reason in (
        (httpx.get(server.url + "/nowhere"), 404, "not_found"),
        (httpx.get(server.url + "/v1/correct"), 405, "method_not_allowed"),
        (httpx.put(server.url + "/v1/experiments/x/weights", json={"weights": {"a": 1}}), 403, "forbidden"),
        (httpx.get(server.url + "/v1/experiments/none-such"), 404, "not_found"),
    ):
        assert response.status_code == status
        error = response.json()["error"]
        assert response.json() == {
            "error": {"reason": reason, "message": error["message"], "request_id": error["request_id"]}
        }
        assert error["request_id"] == response.headers["x-request-id"]


def test_request_ids_are_taken_or_made_and_echoed(server) -> None:
    given = post(server, "/v1/correct", {"text": "a"}, headers={"X-Request-Id": "editor-1:42"})
    assert given.status_code == 200 and given.headers["x-request-id"] == "editor-1:42"
    made = [post(server, "/v1/correct", {"text": "a"}).headers["x-request-id"] for _ in range(2)]
    assert made[0] != made[1] and all(len(m) == 32 for m in made)
    for bad in ("x" * 129, "two words", "a/b"):
        replaced = post(server, "/v1/correct", {"text": 5}, headers={"X-Request-Id": bad})
        assert replaced.status_code == 422
        assert replaced.headers["x-request-id"] != bad and len(replaced.headers["x-request-id"]) == 32
        assert replaced.json()["error"]["request_id"] == replaced.headers["x-request-id"]
    assert httpx.get(server.url + "/healthz", headers={"X-Request-Id": "probe-1"}).headers["x-request-id"] == "probe-1"


def test_cors_is_closed_by_default_and_no_key_is_needed(server) -> None:
    preflight = httpx.options(
        server.url + "/v1/correct",
        headers={"Origin": "https://editor.example", "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status_code == 405 and "access-control-allow-origin" not in preflight.headers
    answer = post(server, "/v1/correct", {"text": "a"}, headers={"Origin": "https://editor.example"})
    assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers


def test_text_over_the_limit_is_413(server) -> None:
    response = post(server, "/v1/correct", {"text": "a" * 20_001})
    assert response.status_code == 413
    assert "20000" in response.json()["error"]["message"]


def test_empty_and_whitespace_text(server) -> None:
    for text in ("", "   \n\t "):
        body = post(server, "/v1/correct", {"text": text}).json()
        assert body["text"] == text and body["edits"] == []


def test_health_readiness_docs_and_metrics(server) -> None:
    assert httpx.get(server.url + "/healthz").json() == {"status": "ok"}
    assert httpx.get(server.url + "/readyz").status_code == 200
    spec = httpx.get(server.url + "/openapi.json").json()
    assert "/v1/correct" in spec["paths"] and "/v1/generate" in spec["paths"]
    assert "examples" in spec["components"]["schemas"]["CorrectBody"]
    assert httpx.get(server.url + "/docs").status_code == 200
    post(server, "/v1/correct", {"text": "Tom found an owl."})
    metrics = httpx.get(server.url + "/metrics").text
    for name in (
        "gecserve_request_duration_seconds_bucket",
        "gecserve_stage_duration_seconds_bucket",
        "gecserve_batch_size_bucket",
        "gecserve_decoder_passes",
        "gecserve_cache_lookups_total",
    ):
        assert name in metrics, name
    stats = httpx.get(server.url + "/v1/stats").json()
    assert stats["series"]["accelerated"]["1m"]["outcomes"]["ok"] >= 1


def test_stats_count_refused_requests_by_outcome(server) -> None:
    def outcomes() -> dict[str, int]:
        series = httpx.get(server.url + "/v1/stats").json()["series"]
        return series.get("none", {}).get("1m", {}).get("outcomes", {})

    before = outcomes()
    post(server, "/v1/correct", {"text": "a" * 20_001})
    post(server, "/v1/correct", {"text": 5})
    after = outcomes()
    assert after.get("too_large", 0) == before.get("too_large", 0) + 1
    assert after.get("invalid", 0) == before.get("invalid", 0) + 1


def test_a_request_can_shorten_its_own_deadline(server) -> None:
    """`X-Gecserve-Timeout-Ms` shortens the server's deadline: 1 ms cannot be met (504, or 503 at once
    when admission sees it coming); a generous one is served; a malformed one is 422."""
    long_text = " ".join(["i saw a apple yesterday and we visited a island."] * 40)
    for path, payload in (("/v1/correct", {"text": long_text}), ("/v1/generate", {"text": long_text[:2000]})):
        short = post(server, path, payload, headers={"X-Gecserve-Timeout-Ms": "1"})
        assert short.status_code in (503, 504), short.text
        assert short.json()["error"]["reason"] in ("deadline", "overloaded")
    served = post(server, "/v1/correct", {"text": "i saw a apple."}, headers={"X-Gecserve-Timeout-Ms": "30000"})
    assert served.status_code == 200
    for bad in ("0", "soon", "-5"):
        refused = post(server, "/v1/correct", {"text": "i saw a apple."}, headers={"X-Gecserve-Timeout-Ms": bad})
        assert refused.status_code == 422 and "timeout" in refused.json()["error"]["message"].lower()


def test_an_idle_keep_alive_connection_outlives_a_client_pool(tmp_path) -> None:
    """A connection idle for longer than common client pools keep theirs (httpx: 5 s) is still open: the server
    must not close it first, or a request sent on it just then is lost (a read error). The server keeps an idle
    connection for ``GECSERVE_KEEP_ALIVE_S``, by default longer than the pool; rather than idling past 5 s on the
    default, a server of its own with 1 s shows that it keeps the connection that long and then closes it, before
    uvicorn's own default would have (so the setting is what the server runs with)."""
    assert Settings.model_fields["keep_alive_s"].default > httpx.Limits().keepalive_expiry
    keep_alive_s = 1
    uvicorn_default_s = inspect.signature(uvicorn.Config).parameters["timeout_keep_alive"].default
    assert keep_alive_s < uvicorn_default_s
    server = start_server(tmp_path, keep_alive_s=keep_alive_s, until="/healthz")
    connection = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    try:
        ports = []
        for _ in range(2):
            sent = time.monotonic()
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            assert response.status == 200 and response.read()
            ports.append(connection.sock.getsockname()[1])
        assert ports[0] == ports[1], "the second request needed a new connection: the first was not kept alive"
        idle = time.monotonic()
        connection.sock.settimeout(uvicorn_default_s)  # blocks until the server closes it: no sleep
        try:
            assert connection.sock.recv(1) == b""
        except TimeoutError:
            pytest.fail(f"the connection was still open {uvicorn_default_s} s after the last answer")
        closed = time.monotonic()
    finally:
        connection.close()
        server.stop()
    # Lower bound from before the last request was sent, upper bound from after its answer was read: both hold
    # however late this process runs.
    assert closed - sent >= keep_alive_s, "closed before its keep-alive was over"
    assert closed - idle < uvicorn_default_s, "closed at uvicorn's default: GECSERVE_KEEP_ALIVE_S was not applied"


def test_every_edit_says_its_category_and_why(server) -> None:
    texts = ["She go to school every days.", "i saw a apple yesterday.", "Tom found a honest owl, he go home."]
    body = post(server, "/v1/correct", {"texts": texts}).json()
    edits = [edit for result in body["results"] for edit in result["edits"]]
    assert edits
    for edit in edits:
        operation, _, category = edit["category"].partition(":")
        assert operation in OPERATIONS and category in CATEGORIES, edit
        assert (
            edit["message"].endswith(".")
            and (edit["original"].strip() or edit["replacement"].strip()) in edit["message"]
        )


def dialect_edits(server, text: str, language: str | None) -> list[tuple[str, str]]:
    """The dialect suggestions of an answer (the fixture model leaves "colour" and "Color" as written: the
    suggestions are the dialect stage's alone)."""
    options = {"language": language} if language else {}
    body = post(server, "/v1/correct", {"text": text, "options": options}).json()
    return [(e["original"], e["replacement"]) for e in body["edits"] if e["category"] == "R:SPELL:DIALECT"]


@pytest.mark.parametrize(
    ("language", "american", "british"),
    [
        (None, [], []),  # the default: both spellings stand
        ("en-US", [("colour", "color")], []),
        ("en-GB", [], [("Color", "Colour")]),
        ("EN-ca", [], [("Color", "Colour")]),
        ("en-au", [], [("Color", "Colour")]),
    ],
)
def test_a_named_dialect_suggests_its_spellings(server, language: str | None, american: list, british: list) -> None:
    assert dialect_edits(server, "I saw a colour.", language) == american
    assert dialect_edits(server, "Color", language) == british


def test_a_dialect_suggestion_is_applied_with_its_message_and_confidence(server) -> None:
    body = post(server, "/v1/correct", {"text": "Color", "options": {"language": "en-GB"}}).json()
    (edit,) = body["edits"]
    assert body["text"] == "Colour" and edit["type"] == "spelling" and 0.5 <= edit["confidence"] <= 1
    assert edit["message"] == "'Color' → 'Colour': the British English spelling."


@pytest.mark.parametrize("language", ["de-DE", "en", "en-NZ", "auto", ""])
def test_an_unknown_language_is_400_naming_the_codes_served(server, language: str) -> None:
    response = post(server, "/v1/correct", {"text": "The color.", "options": {"language": language}})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["reason"] == "unknown_language"
    assert f"'{language}'" in error["message"] and "en-US, en-GB, en-CA, en-AU" in error["message"]
