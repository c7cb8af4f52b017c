"""The README's HTTP example, and the HTTP page's (the same), is what the bundled model answers today: the request
in its ``curl`` line gets the corrected text and the edits its JSON shows, field for field (fields it leaves out,
and the timings, are not compared)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from tests.system.server import RunningServer

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]


def example(page: Path) -> tuple[dict, dict]:
    """The request body of the page's ``curl ... /v1/correct`` line and the answer in the JSON block after it."""
    text = page.read_text(encoding="utf-8")
    request = re.search(r"curl -s localhost:8000/v1/correct .*?-d '(\{.*?\})'", text, flags=re.DOTALL)
    assert request, f"{page.name} has no /v1/correct example"
    answer = re.search(r"```json\n(.*?)\n```", text[request.end() :], flags=re.DOTALL)
    assert answer, f"{page.name} shows no answer after its example"
    return json.loads(request.group(1)), json.loads(answer.group(1))


@pytest.mark.parametrize("page", ["README.md", "docs/http.md"])
def test_the_example_answer_is_true_today(bundled: RunningServer, page: str) -> None:
    body, shown = example(ROOT / page)
    answer = httpx.post(bundled.url + "/v1/correct", json=body, timeout=60).json()
    assert answer["text"] == shown["text"]
    assert len(answer["edits"]) == len(shown["edits"])
    edits = zip(answer["edits"], shown["edits"], strict=True)
    assert [{key: edit[key] for key in expected} for edit, expected in edits] == shown["edits"]
    for key in ("model", "arm", "backend"):
        assert answer[key] == shown[key], key
    assert shown["timings_ms"].keys() == answer["timings_ms"].keys()
