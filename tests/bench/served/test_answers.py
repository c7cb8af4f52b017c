"""The load test's own checks of answers: right ones pass, wrong ones are caught, in both offset units."""

from __future__ import annotations

import pytest

from bench.served.answers import WrongAnswerError, check_correction, check_rewrites, rebuild

TEXT = "I 😀 has a apple."
# "has" starts at code point 4 and at UTF-16 unit 5 (the emoji is two units).
EDITS = {
    "codepoint": [{"offset": 4, "length": 3, "original": "has", "replacement": "have"}],
    "utf16": [{"offset": 5, "length": 3, "original": "has", "replacement": "have"}],
}


@pytest.mark.parametrize("unit", ["codepoint", "utf16"])
def test_edits_rebuild_the_corrected_text(unit) -> None:
    assert rebuild(TEXT, EDITS[unit], unit) == "I 😀 have a apple."
    check_correction(TEXT, "I 😀 have a apple.", EDITS[unit], unit)


@pytest.mark.parametrize(
    ("corrected", "edits", "unit"),
    [
        ("I 😀 have an apple.", EDITS["codepoint"], "codepoint"),  # the text says more than the edits
        ("I 😀 have a apple.", EDITS["codepoint"], "utf16"),  # offsets in the other unit
        ("I 😀 have a apple.", [{**EDITS["utf16"][0], "offset": 40}], "utf16"),  # outside the text
        ("I have a apple.", [*EDITS["codepoint"], {**EDITS["codepoint"][0], "offset": 5}], "codepoint"),  # overlap
    ],
)
def test_a_wrong_answer_is_caught(corrected, edits, unit) -> None:
    with pytest.raises(WrongAnswerError):
        check_correction(TEXT, corrected, edits, unit)


def test_rewrites_must_be_as_many_as_asked_and_best_first() -> None:
    check_rewrites([{"text": "a", "score": -0.1}, {"text": "b", "score": -0.5}], 2)
    with pytest.raises(WrongAnswerError):
        check_rewrites([{"text": "a", "score": -0.1}], 2)
    with pytest.raises(WrongAnswerError):
        check_rewrites([{"text": "a", "score": -0.5}, {"text": "b", "score": -0.1}], 2)
