"""What the model may read and write: the sentence check before batching, the edit check after decoding."""

from __future__ import annotations

import pytest

from service.text.script import editable, reads_as_english, unreadable_runs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I saw an apple.", True),
        ("Zürich and São Paulo are cities.", True),
        ("He said привет to me.", True),  # mostly Latin letters
        ("Привет, как дела?", False),
        ("我喜欢猫。", False),
        ("我喜欢猫 OK.", False),  # 2 Latin letters of 6
        ("😀😀😀", False),
        ("12 345", False),
        ("", False),
        ("مرحبا بالعالم", False),
    ],
)
def test_reads_as_english(text: str, expected: bool) -> None:
    assert reads_as_english(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("an apple", True),
        ("café – “quoted” …", True),
        ("\u00a0non-breaking", True),
        ("", True),
        ("猫", False),
        ("😀", False),
        ("e\u0301", False),  # a combining mark
        ("zero\u200bwidth", False),
        ("\ufffd", False),
        ("\ud800", False),
        ("\u202e", False),
        ("\x00", False),
    ],
)
def test_editable(text: str, expected: bool) -> None:
    assert editable(text) is expected


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("I saw an apple.", []),
        ("He have 😀😀 a cat", ["😀😀"]),
        ("a 😀 😀 b 猫", ["😀 😀", "猫"]),
        ("cafe\u0301 and zero\u200dwidth", ["\u0301", "\u200d"]),
        ("line\nbreak\ttab\u00a0nbsp", []),  # blanks are read
        ("zero\u200bwidth \ud800\x00\u202e", []),  # what normalisation removes: the model never sees it
    ],
)
def test_unreadable_runs(text: str, runs: list[str]) -> None:
    assert [text[a:b] for a, b in unreadable_runs(text)] == runs
