"""Learners' letter edits: one optimal alignment of the typed and the intended word, keyed with the letter before, and
the channel probability they give."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.text.classify import osa_distance
from service.text.letter_edits import LetterEdits, context, contexts_of, edit_operations


@pytest.mark.parametrize(
    ("typed", "intended", "edits"),
    [
        ("teh", "the", ["swap:he"]),
        ("definately", "definitely", ["sub:ia"]),
        ("totaly", "totally", ["del:ll"]),  # a dropped doubled letter is keyed on the letter
        ("untill", "until", ["ins:ll"]),  # and so is an added one
        ("realy", "relay", ["swap:la"]),
        ("pple", "apple", ["del:#a"]),  # '#': the start of the word
        ("thew", "the", ["ins:ew"]),
        ("the", "the", []),
    ],
)
def test_edits_are_keyed_with_the_letter_before(typed: str, intended: str, edits: list[str]) -> None:
    assert edit_operations(typed, intended) == edits


@given(st.text("abcde", max_size=7), st.text("abcde", max_size=7))
def test_there_are_as_many_edits_as_the_distance(typed: str, intended: str) -> None:
    assert len(edit_operations(typed, intended)) == osa_distance(typed, intended)


def test_contexts_count_letters_and_pairs_as_often_as_their_words() -> None:
    assert contexts_of({"all": 2, "la": 1}) == {"#": 3, "a": 3, "l": 5, "#a": 2, "al": 2, "ll": 2, "#l": 1, "la": 1}
    assert [context("del:ll"), context("swap:he"), context("ins:ew"), context("sub:ia")] == ["ll", "he", "e", "i"]


def test_the_edits_learners_make_are_the_likely_ones() -> None:
    """ "totaly" is "totally" with a doubled letter dropped, or "total" with a "y" added: what learners did decides."""
    contexts = contexts_of({"totally": 10, "total": 10})
    dropped = LetterEdits({"del:ll": 8}, contexts)
    added = LetterEdits({"ins:ly": 8}, contexts)
    assert dropped.log_prob("totaly", "totally") > dropped.log_prob("totaly", "total")
    assert added.log_prob("totaly", "total") > added.log_prob("totaly", "totally")
    assert dropped.log_prob("totaly", "totally") == pytest.approx(math.log(8.5 / 11))  # 10 chances ("ll"), +1
    assert dropped.log_prob("total", "total") == 0.0
