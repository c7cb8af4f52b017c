"""Input that broke the service once, on every path: lone surrogates, text the model cannot read,
bodies over the limit (declared or streamed), invalid UTF-8 and non-finite numbers over gRPC."""

from __future__ import annotations

import asyncio
import json

import grpc
import httpx
import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from tests.system.clients import grpc_call, grpc_error, post, rebuild

pytestmark = pytest.mark.server

# The model cannot read these: they must come back byte-identical with no edits, on every path.
UNREADABLE = [
    "😀",
    "😀😀😀 🎉🎉",
    "👩‍👩‍👧‍👦 👍🏽 🇬🇧",
    "我喜欢猫。",
    "我喜欢猫。今天天气很好，我们去公园吧。",
    "こんにちは、世界。",
    "안녕하세요 세계",
    "Привет, как дела? Я люблю читать книги.",
    "مرحبا بالعالم. كيف حالك؟",
    "שלום עולם",
    "\u0301\u0300\u0308",
    "가\u0301 나\u0300",
    "\u200b\u200c\u200d\u2060\ufeff",
    "\u200b猫\u200b 😀\u200d😀",
    "\u202e中文\u202c",
    "Σ αβγ δεζ",
    "12345 67 890",
    "\ufffd\ufffd",
]
# English text around characters the model cannot read: it may be corrected, those characters may not.
MIXED = [
    "Ze\u0301ro a\u0300 e\u0301te\u0301 i saw a apple",
    "Zero\u200bwidth\u200bspaces i saw a apple",
    "word\u2060joiner and\ufeffbom i saw a apple",
    "\u202eright to left\u202c i saw a apple",
]


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


@pytest.mark.parametrize("text", UNREADABLE)
def test_what_the_model_cannot_read_comes_back_untouched(server, text: str) -> None:
    for unit in ("codepoint", "utf16"):
        body = post(server, "/v1/correct", {"text": text, "offset_unit": unit}).json()
        assert body["text"] == text and body["edits"] == [], body
    reply, _ = grpc_call(server, "Correct", pb.CorrectRequest(text=text))
    assert reply.text == text and list(reply.edits) == []
    sequences = post(server, "/v1/generate", {"text": text, "num_return_sequences": 2}).json()["sequences"]
    assert [s["text"] for s in sequences] == [text, text]


def test_no_replacement_character_is_invented(server) -> None:
    """Mixed text: English parts are corrected, the rest is never rewritten into U+FFFD or anything else."""
    texts = [f"i saw a apple {u} yesterday. we visited a island {u}" for u in UNREADABLE] + MIXED
    results = post(server, "/v1/correct", {"texts": texts}).json()["results"]
    for text, result in zip(texts, results, strict=True):
        assert rebuild(text, result["edits"], "codepoint") == result["text"]
        assert result["text"].count("\ufffd") == text.count("\ufffd")
        for edit in result["edits"]:
            assert edit["original"].isascii() and edit["replacement"].isascii(), edit
        unreadable = [c for c in text if not c.isascii()]
        assert [c for c in result["text"] if not c.isascii()] == unreadable, "a character it cannot read changed"


@pytest.mark.parametrize("unit", ["codepoint", "utf16"])
def test_lone_surrogates_pass_through(server, unit: str) -> None:
    """JSON can carry a lone surrogate (an editor's half-typed emoji); it comes back as it came, and the
    offsets around it count it as JavaScript does."""
    texts = ["I has a apple \ud800 here.", "\udc00 i saw a apple", "we visited a island \ud83d"]

    def send(path: str, payload: dict) -> httpx.Response:
        # ensure_ascii writes a lone surrogate as JSON's \ud800 escape, as JSON.stringify does
        content = json.dumps(payload).encode("ascii")
        return httpx.post(server.url + path, content=content, headers={"content-type": "application/json"}, timeout=60)

    surrogates = [[c for c in text if 0xD800 <= ord(c) <= 0xDFFF] for text in texts]
    for text, kept in zip(texts, surrogates, strict=True):
        response = send("/v1/correct", {"text": text, "offset_unit": unit})
        assert response.status_code == 200, response.text
        body = response.json()
        assert rebuild(text, body["edits"], unit) == body["text"]
        assert [c for c in body["text"] if 0xD800 <= ord(c) <= 0xDFFF] == kept
    many = send("/v1/correct", {"texts": texts, "offset_unit": unit})
    assert many.status_code == 200
    for text, result in zip(texts, many.json()["results"], strict=True):
        assert rebuild(text, result["edits"], unit) == result["text"]
    generated = send("/v1/generate", {"text": texts[0]})
    assert generated.status_code == 200 and "\ud800" in generated.json()["sequences"][0]["text"]


def test_declared_body_over_the_limit_is_413_before_it_is_read(server) -> None:
    body = b'{"text": "' + b"a" * 8_000_000 + b'"}'
    response = httpx.post(
        server.url + "/v1/correct", content=body, timeout=30, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"]["reason"] == "too_large"
    assert post(server, "/v1/correct", {"text": "i saw a apple"}).status_code == 200


def test_streamed_body_is_cut_off_at_the_limit(server) -> None:
    """A chunked upload declares no length: bytes are counted as they arrive, and 200 MB never reach memory."""
    before = rss_kb(server.process.pid)

    def chunks():
        yield b'{"text": "'
        for _ in range(3200):
            yield b"a" * 65536
        yield b'"}'

    response = httpx.post(
        server.url + "/v1/correct", content=chunks(), timeout=60, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"]["reason"] == "too_large"
    assert rss_kb(server.process.pid) - before < 60_000, "the streamed body was buffered"
    assert post(server, "/v1/correct", {"text": "i saw a apple"}).status_code == 200


@pytest.mark.parametrize(
    ("request_message", "fragment"),
    [
        (pb.GenerateRequest(text="a b", strategy="sample", temperature=float("nan")), "temperature"),
        (pb.GenerateRequest(text="a b", strategy="sample", temperature=float("inf")), "temperature"),
        (pb.GenerateRequest(text="a b", strategy="sample", temperature=1e-30), "temperature"),
        (pb.GenerateRequest(text="a b", strategy="sample", top_p=float("nan")), "top_p"),
        (pb.GenerateRequest(text="a b", max_new_tokens=100_000), "max_new_tokens"),
        (pb.GenerateRequest(text="a b", num_return_sequences=4, num_beams=2), "num_beams"),
    ],
)
def test_grpc_refuses_what_http_refuses(server, request_message, fragment: str) -> None:
    error = grpc_error(server, "Generate", request_message)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in error.details()


def test_grpc_invalid_utf8_is_invalid_argument(server) -> None:
    """A string field holding bytes that are not UTF-8 (hand-encoded: field 1, length-delimited)."""

    async def raw_call():
        async with grpc.aio.insecure_channel(server.grpc_target) as channel:
            method = channel.unary_unary(
                "/gecserve.v1.Corrector/Correct",
                request_serializer=lambda data: data,
                response_deserializer=pb.CorrectResponse.FromString,
            )
            return await method(b"\x0a\x03\xff\xfe\x41", timeout=30)

    with pytest.raises(grpc.aio.AioRpcError) as error:
        asyncio.run(raw_call())
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "decodable" in error.value.details()
