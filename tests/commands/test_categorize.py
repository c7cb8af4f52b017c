"""``gecserve categorize``: source<TAB>corrected lines in, one JSON line of categorized edits out, in order."""

from __future__ import annotations

import io
import json

import pytest

from service.commands import categorize


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, list[dict]]:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    status = categorize.main([])
    return status, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_each_pair_gets_its_edits_with_categories_and_messages(monkeypatch, capsys) -> None:
    status, answers = run(
        monkeypatch,
        capsys,
        "She go to school every days.\tShe goes to school every day.\nI ate a apple.\tI ate an apple.\nSame.\tSame.\n",
    )
    assert status == 0 and [answer["source"] for answer in answers] == [
        "She go to school every days.",
        "I ate a apple.",
        "Same.",
    ]
    first = answers[0]["edits"]
    assert [(e["original"], e["replacement"], e["category"]) for e in first] == [
        ("go", "goes", "R:VERB:SVA"),
        ("days", "day", "R:NOUN:NUM"),
    ]
    assert first[0]["offset"] == 4 and first[0]["length"] == 2
    assert first[0]["message"] == "'go' → 'goes': the verb agrees with its subject 'She'."
    assert answers[1]["edits"][0]["category"] == "R:DET" and answers[2]["edits"] == []


def test_a_line_without_a_tab_is_answered_with_an_error(monkeypatch, capsys) -> None:
    status, answers = run(monkeypatch, capsys, "no tab here\nI go.\tI went.\n")
    assert status == 1 and answers[0] == {"line": 1, "error": "expected source<TAB>corrected"}
    assert answers[1]["edits"][0]["category"] == "R:VERB:TENSE"
