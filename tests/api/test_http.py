"""The HTTP API against a running server: shapes, offsets, backends, errors."""

from __future__ import annotations

import httpx
import pytest

from service.text.edits import Edit, apply_edits

TEXTS = [
    "i saw a apple yesterday.  We visited a island last week",
    "Tom found an honest owl.\r\nMy friend my friend bought a umbrella",
    "😀 i saw a apple 中文 é\tThe cat likes teh old car.",
]


def post(server, path: str, payload: dict) -> httpx.Response:
    return httpx.post(server.url + path, json=payload, timeout=30)


def apply_utf16(text: str, edits: list[dict]) -> str:
    units = text.encode("utf-16-le")
    out, last = [], 0
    for e in sorted(edits, key=lambda e: e["offset"]):
        out.append(units[2 * last : 2 * e["offset"]])
        out.append(e["replacement"].encode("utf-16-le"))
        last = e["offset"] + e["length"]
    out.append(units[2 * last :])
    return b"".join(out).decode("utf-16-le")


@pytest.mark.parametrize("text", TEXTS)
def test_edits_applied_to_the_original_give_the_corrected_text(server, text: str) -> None:
    body = post(server, "/v1/correct", {"text": text}).json()
    edits = [Edit(e["offset"], e["offset"] + e["length"], e["original"], e["replacement"]) for e in body["edits"]]
    assert apply_edits(text, edits) == body["text"]
    assert body["edits"], "the fixture model corrects these"
    utf16 = post(server, "/v1/correct", {"text": text, "offset_unit": "utf16"}).json()
    assert apply_utf16(text, utf16["edits"]) == utf16["text"] == body["text"]


def test_response_shape_and_correction(server) -> None:
    response = post(server, "/v1/correct", {"text": "i saw a apple yesterday."})
    assert response.status_code == 200
    body = response.json()
    assert body["text"] == "I saw an apple yesterday."
    assert body["backend"] == "accelerated"
    assert body["model"] == {"name": "tiny-gec", "version": "1"}
    assert set(body["timings_ms"]) == {"queue", "preprocess", "inference", "total"}
    first = body["edits"][0]
    assert first["original"] == "i" and first["replacement"] == "I" and first["type"] == "capitalisation"
    assert set(first) == {"id", "offset", "length", "original", "replacement", "alternatives", "sentence", "type"}


def test_texts_form_keeps_order(server) -> None:
    body = post(server, "/v1/correct", {"texts": ["Tom found an honest owl.", "i saw a apple yesterday."]}).json()
    assert [r["text"] for r in body["results"]] == ["Tom found an honest owl.", "I saw an apple yesterday."]
    assert "text" not in body


def test_backends_agree(server) -> None:
    texts = TEXTS
    fast = post(server, "/v1/correct", {"texts": texts, "options": {"backend": "accelerated"}}).json()
    slow = post(server, "/v1/correct", {"texts": texts, "options": {"backend": "autoregressive"}}).json()
    assert fast["backend"] == "accelerated" and slow["backend"] == "autoregressive"
    assert fast["results"] == slow["results"]


def test_alternatives_come_from_beam_search(server) -> None:
    body = post(server, "/v1/correct", {"text": "i saw a apple yesterday.", "options": {"alternatives": 3}}).json()
    assert body["backend"] == "accelerated"  # the arm's backend label is the routed backend
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


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"text": 1}, "text"),
        ({}, "exactly one"),
        ({"text": "a", "texts": ["b"]}, "exactly one"),
        ({"text": "a", "offset_unit": "bytes"}, "offset_unit"),
        ({"text": "a", "options": {"backend": "quantum"}}, "backend"),
        ({"text": "a", "options": {"alternatives": 9}}, "alternatives"),
        ({"text": "a", "unknown": True}, "unknown"),
        ({"texts": []}, "texts"),
    ],
)
def test_bad_fields_are_422_with_a_reason(server, payload: dict, fragment: str) -> None:
    response = post(server, "/v1/correct", payload)
    assert response.status_code == 422
    assert fragment in response.json()["error"]["message"]


def test_invalid_json_is_422(server) -> None:
    response = httpx.post(
        server.url + "/v1/correct", content=b"{not json", timeout=10, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["reason"] == "invalid"


def test_text_over_the_limit_is_413(server) -> None:
    response = post(server, "/v1/correct", {"text": "a" * 20_001})
    assert response.status_code == 413
    assert "20000" in response.json()["error"]["message"]


def test_generate_bad_parameters_are_422(server) -> None:
    assert post(server, "/v1/generate", {"text": "a", "num_return_sequences": 5, "num_beams": 2}).status_code == 422
    assert post(server, "/v1/generate", {"text": "a", "strategy": "magic"}).status_code == 422
    assert post(server, "/v1/generate", {"text": "a", "top_p": 0}).status_code == 422


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
        "gecserve_cache_hits_total",
    ):
        assert name in metrics, name
    stats = httpx.get(server.url + "/v1/stats").json()
    assert "accelerated" in stats["backends"]


def test_body_over_the_limit_is_413_before_it_is_read(server) -> None:
    """The body limit (``service/api/limits.py``) answers from the declared length alone."""
    body = b'{"text": "' + b"a" * 8_000_000 + b'"}'
    response = httpx.post(
        server.url + "/v1/correct", content=body, timeout=30, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["reason"] == "too_large" and str(len(body)) in error["message"]
    assert post(server, "/v1/correct", {"text": "i saw a apple"}).status_code == 200
