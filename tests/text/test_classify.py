"""Coarse edit categories: one test per rule, plus totality on random edits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from service.text.classify import (
    CATEGORIES,
    classify,
    is_function_word,
    is_spelling_variant,
    osa_distance,
    plausible_distance,
    same_word_forms,
)
from service.text.edits import Edit, extract_edits
from tests.text.strategies import LEARNER_PAIRS, pairs


def category(original: str, replacement: str) -> str:
    return classify(Edit(0, len(original), original, replacement))


@pytest.mark.parametrize(
    ("original", "replacement", "expected"),
    [
        # whitespace
        ("  ", " ", "whitespace"),
        (" ", "", "whitespace"),
        ("every day", "everyday", "whitespace"),
        ("can not", "cannot", "whitespace"),
        (" ,", ", ", "whitespace"),
        ("cafe\u0301", "caf\u00e9", "whitespace"),
        # capitalisation
        ("i", "I", "capitalisation"),
        ("secondly", "Secondly", "capitalisation"),
        ("internet", "Internet", "capitalisation"),
        # punctuation
        ("", ",", "punctuation"),
        (",", ".", "punctuation"),
        (",,", '"', "punctuation"),
        ("dont", "don't", "punctuation"),
        ("its", "it\u2019s", "punctuation"),
        ("end the", "end. The", "punctuation"),
        # word order
        ("always I", "I always", "word_order"),
        ("better your shows", "your shows better", "word_order"),
        # grammar: function words
        ("a", "an", "grammar"),
        ("", "the ", "grammar"),
        ("the ", "", "grammar"),
        ("in", "on", "grammar"),
        ("were", "have", "grammar"),
        ("don't", "doesn't", "grammar"),
        # grammar: forms of one word
        ("go", "goes", "grammar"),
        ("go", "went", "grammar"),
        ("sit", "sat", "grammar"),
        ("cabins", "cabin", "grammar"),
        ("study", "studied", "grammar"),
        ("stop", "stopped", "grammar"),
        ("like", "liked", "grammar"),
        ("happy", "happily", "grammar"),
        ("childs", "children", "grammar"),
        ("internet", "the Internet", "grammar"),
        ("staying", "to stay", "grammar"),
        ("has went", "had gone", "grammar"),
        # spelling
        ("recieved", "received", "spelling"),
        ("shoping", "shopping", "spelling"),
        ("exagerate", "exaggerate", "spelling"),
        ("writting", "writing", "spelling"),
        ("teh", "the", "spelling"),
        ("form", "from", "spelling"),
        ("say", "stay", "spelling"),
        # word choice
        ("big", "huge", "word_choice"),
        ("restful", "intermission", "word_choice"),
        ("make", "do", "word_choice"),
        ("very ", "", "word_choice"),
        ("", " minutes", "word_choice"),
        ("past after", "late", "word_choice"),
    ],
)
def test_rules(original: str, replacement: str, expected: str) -> None:
    assert category(original, replacement) == expected


def test_function_words_and_contractions() -> None:
    for word in ("the", "a", "of", "they", "would", "don't", "can't", "won't", "it's", "i'm"):
        assert is_function_word(word), word
    for word in ("school", "let's", "happy", "o'clock"):
        assert not is_function_word(word), word


def test_word_forms_need_different_endings() -> None:
    assert same_word_forms("go", "going")
    assert same_word_forms("big", "bigger")
    assert not same_word_forms("writting", "writing")
    assert not same_word_forms("big", "huge")


def test_spelling_distance() -> None:
    assert osa_distance("teh", "the") == 1
    assert osa_distance("recieved", "received") == 1
    assert osa_distance("kitten", "sitting") == 3
    assert is_spelling_variant("begining", "beginning")
    assert not is_spelling_variant("cat", "dog")
    assert not is_spelling_variant("same", "same")


@pytest.mark.parametrize(
    ("longest", "distance", "plausible"),
    [(4, 1, True), (4, 2, False), (5, 2, True), (8, 2, True), (8, 3, False), (9, 3, True), (9, 4, False), (3, 2, False),
     (6, 0, False)],
)  # fmt: skip
def test_plausible_distances_grow_with_the_word(longest: int, distance: int, plausible: bool) -> None:
    """1 edit up to 4 letters, 2 up to 8, 3 beyond; never more than 40% of the letters, never none."""
    assert plausible_distance(longest, distance) is plausible


def test_learner_pair_categories() -> None:
    source, corrected = LEARNER_PAIRS[5]
    found = [(e.original, e.replacement, classify(e)) for e in extract_edits(source, corrected)]
    assert found == [
        ("have ", "", "grammar"),
        ("at", "when", "word_choice"),
        ("paying", "I paid", "grammar"),
        ("secondly", "Secondly", "capitalisation"),
        ("", "a ", "grammar"),
        (",", ".", "punctuation"),
    ]


@settings(max_examples=200, deadline=None)
@given(pairs)
def test_every_edit_gets_a_known_category(pair: tuple[str, str]) -> None:
    for edit in extract_edits(*pair):
        assert classify(edit) in CATEGORIES
