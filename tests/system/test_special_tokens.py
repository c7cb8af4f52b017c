"""Text spelling a special token (``</s>``, ``<s>``, ``<pad>``, ``<unk>``, ``<mask>``) is text on every
path: ``/v1/correct`` (both decodings, both offset units), gRPC ``Correct``, ``/v1/generate``, gRPC
``Generate``, LanguageTool's ``/v2/check`` and ``gecserve correct``. The spelling comes back as it was
written, and the words after it are still corrected (as an end-of-sequence token, ``</s>`` would end
the draft that accelerated decoding verifies, and the decoder would drop it).

On the bundled model, which corrects these sentences (the test model writes nonsense); how each
tokenizer encodes them is checked in tests/pipeline/test_special_tokens.py.
"""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from service.config import DEFAULT_MODEL
from service.text.protect import find_protected
from service.text.script import SPECIAL_SPELLINGS
from tests.system.clients import grpc_call, post, rebuild
from tests.system.server import ROOT, RunningServer

# The bundled model's corrections: "is" -> "are" on both sides of the spelling.
CASES = {f"We is happy {s} and we is sad.": f"We are happy {s} and we are sad." for s in SPECIAL_SPELLINGS}
CASES["</s> We is happy and we is sad."] = "</s> We are happy and we are sad."
CASES["We is happy and we is sad </s>"] = "We are happy and we are sad </s>"
TEXTS, EXPECTED = list(CASES), list(CASES.values())


def check_edits(text: str, edits: list[dict], unit: str, expected: str) -> None:
    assert rebuild(text, edits, unit) == expected
    for span in find_protected(text).spans:  # ASCII text: code points and UTF-16 units agree
        assert not [e for e in edits if e["offset"] < span.end and e["offset"] + e["length"] > span.start], edits


@pytest.mark.parametrize("backend", ["accelerated", "autoregressive"])
@pytest.mark.parametrize("unit", ["codepoint", "utf16"])
@pytest.mark.server
def test_http_correct(bundled: RunningServer, backend: str, unit: str) -> None:
    payload = {"texts": TEXTS, "offset_unit": unit, "options": {"backend": backend}}
    results = post(bundled, "/v1/correct", payload).json()["results"]
    assert [r["text"] for r in results] == EXPECTED
    for text, result, expected in zip(TEXTS, results, EXPECTED, strict=True):
        check_edits(text, result["edits"], unit, expected)


@pytest.mark.server
def test_grpc_correct(bundled: RunningServer) -> None:
    reply, _ = grpc_call(bundled, "Correct", pb.CorrectRequest(texts=TEXTS))
    assert [r.text for r in reply.results] == EXPECTED
    for text, result, expected in zip(TEXTS, reply.results, EXPECTED, strict=True):
        edits = [
            {"offset": e.offset, "length": e.length, "original": e.original, "replacement": e.replacement}
            for e in result.edits
        ]
        check_edits(text, edits, "codepoint", expected)


@pytest.mark.server
def test_http_and_grpc_generate(bundled: RunningServer) -> None:
    """One beam is greedy decoding: the correction; four beams' n-best keep the spelling in each rewrite."""
    for text, expected in CASES.items():
        greedy = post(bundled, "/v1/generate", {"text": text, "num_beams": 1}).json()
        assert [s["text"] for s in greedy["sequences"]] == [expected]
        reply, _ = grpc_call(bundled, "Generate", pb.GenerateRequest(text=text, num_beams=1))
        assert [s.text for s in reply.sequences] == [expected]
        body = post(bundled, "/v1/generate", {"text": text, "num_beams": 4, "num_return_sequences": 3}).json()
        for sequence in body["sequences"]:
            assert [sequence["text"].count(s) for s in SPECIAL_SPELLINGS] == [text.count(s) for s in SPECIAL_SPELLINGS]
        request = pb.GenerateRequest(text=text, num_beams=4, num_return_sequences=3)
        reply, _ = grpc_call(bundled, "Generate", request)
        assert [s.text for s in reply.sequences] == [s["text"] for s in body["sequences"]]


@pytest.mark.server
def test_languagetool_check(bundled: RunningServer) -> None:
    for text, expected in CASES.items():
        response = httpx.post(bundled.url + "/v2/check", data={"text": text, "language": "en-US"}, timeout=60)
        matches = response.json()["matches"]
        edits = [
            {
                "offset": m["offset"],
                "length": m["length"],
                "original": text[m["offset"] : m["offset"] + m["length"]],
                "replacement": m["replacements"][0]["value"],
            }
            for m in matches
        ]
        check_edits(text, edits, "utf16", expected)


def test_gecserve_correct() -> None:
    lines = subprocess.run(
        [sys.executable, "-m", "service.cli", "correct", "--model", str(DEFAULT_MODEL)],
        input="\n".join(TEXTS) + "\n",
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.splitlines()
    assert lines == EXPECTED
