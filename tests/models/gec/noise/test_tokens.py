"""Lossless tokenization and the whitespace-aware edit helpers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.gec.noise.tokens import (
    Token,
    delete,
    detokenize,
    insert,
    match_case,
    replace,
    sentence_start,
    tokenize,
)

EXAMPLES = [
    "She has lived in London since 2010.",
    "  Leading and trailing spaces  ",
    'He said, "I don\'t know!" and left…',
    "Prices rose 3.5% to $1,000.50 in the U.S. (e.g. here) at 10:30 p.m.",
    "Tabs\tand\nnewlines\r\n",
    "well-known o'clock students' books -- dashes — and ... dots",
    "Ünïcödé café naïve señor 東京 😀 __under_score__",
    "",
    " ",
]


@pytest.mark.parametrize("text", EXAMPLES)
def test_round_trip_examples(text: str) -> None:
    assert detokenize(tokenize(text)) == text


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_round_trip_any_text(text: str) -> None:
    assert detokenize(tokenize(text)) == text


def test_token_boundaries() -> None:
    text = "I don't live in the U.S., it's 3.5 km from John's well-known home."
    texts = [t.text for t in tokenize(text)]
    assert texts == [
        "I",
        "don't",
        "live",
        "in",
        "the",
        "U.S.",
        ",",
        "it's",
        "3.5",
        "km",
        "from",
        "John's",
        "well-known",
        "home",
        ".",
    ]


def test_whitespace_is_kept_per_token() -> None:
    toks = tokenize("Hi,  there !")
    assert toks == [Token("Hi", ""), Token(",", "  "), Token("there", " "), Token("!", "")]


def test_sentence_start_skips_opening_quote() -> None:
    assert sentence_start(tokenize('"Hello," she said.')) == 1
    assert sentence_start(tokenize("... ...")) == -1


def test_delete_word_before_full_stop() -> None:
    toks = tokenize("I like the park.")
    assert detokenize(delete(toks, 3)) == "I like the."


def test_delete_comma_keeps_one_space() -> None:
    toks = tokenize("Yes, I know.")
    assert detokenize(delete(toks, 1)) == "Yes I know."


def test_delete_after_opening_bracket() -> None:
    toks = tokenize("It (the old one) broke.")
    assert detokenize(delete(toks, 2)) == "It (old one) broke."


def test_delete_first_word_moves_capital() -> None:
    toks = tokenize("The people are kind.")
    out = delete(toks, 0)
    assert detokenize(out) == "People are kind."
    assert out[0].edited


def test_insert_before_final_punctuation() -> None:
    toks = tokenize("I like it.")
    assert detokenize(insert(toks, 3, "too")) == "I like it too."


def test_insert_in_middle_and_after_bracket() -> None:
    assert detokenize(insert(tokenize("a cat sat"), 1, "big")) == "a big cat sat"
    assert detokenize(insert(tokenize("(cat)"), 1, "the")) == "(the cat)"


def test_insert_at_start_moves_capital() -> None:
    assert detokenize(insert(tokenize("People are kind."), 0, "the")) == "The people are kind."
    # names keep their capital
    assert detokenize(insert(tokenize("London is big."), 0, "the")) == "The London is big."


def test_replace_marks_edited_and_keeps_space() -> None:
    toks = tokenize("a cat sat")
    out = replace(toks, 1, "dog")
    assert detokenize(out) == "a dog sat"
    assert out[1].edited and not toks[1].edited


@pytest.mark.parametrize(
    ("new", "old", "at_start", "expected"),
    [
        ("a", "The", True, "A"),
        ("a", "the", False, "a"),
        ("an", "THE", False, "AN"),
        ("me", "I", False, "me"),
        ("I", "me", False, "I"),
    ],
)
def test_match_case(new: str, old: str, at_start: bool, expected: str) -> None:
    assert match_case(new, old, at_start) == expected
