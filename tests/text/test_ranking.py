"""The noisy channel's score: the context and the learners' edits decide, a split pays for its space, and the
ranking saved is the ranking loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.text.ranking import CHANNEL_WEIGHT, SPLIT_COST, Ranker
from tests.text.toy_ranker import toy_ranker


def test_the_words_around_decide() -> None:
    ranker = toy_ranker()
    assert ranker.score(("wich",), ("which",), "house", "is") > ranker.score(("wich",), ("with",), "house", "is")
    assert ranker.score(("wich",), ("with",), "went", "her") > ranker.score(("wich",), ("which",), "went", "her")


def test_the_learners_edits_decide_between_equal_contexts() -> None:
    dropped, added = toy_ranker({"del:ll": 50}), toy_ranker({"ins:ly": 50})
    assert dropped.score(("totaly",), ("totally",), "is", "the") > dropped.score(("totaly",), ("total",), "is", "the")
    assert added.score(("totaly",), ("total",), "is", "the") > added.score(("totaly",), ("totally",), "is", "the")


def test_a_split_pays_for_its_missing_space_and_its_second_word() -> None:
    ranker = toy_ranker()
    split = ranker.score(("a", "lot"), ("a", "lot"), "the", "of")
    pairs = ranker.pairs
    context = pairs.log_prob("a", "the") + pairs.log_prob("lot", "a") + pairs.log_prob("of", "lot")
    assert split == pytest.approx(CHANNEL_WEIGHT * SPLIT_COST + context)


def test_the_ranking_saved_is_the_ranking_loaded(tmp_path: Path) -> None:
    ranker = toy_ranker({"del:ll": 50, "swap:he": 3})
    ranker.save(tmp_path / "spelling.npz")
    loaded = Ranker.load(tmp_path / "spelling.npz")
    assert loaded.edits.errors == ranker.edits.errors and loaded.edits.contexts == ranker.edits.contexts
    assert loaded.pairs.total == ranker.pairs.total
    cases = [(("totaly",), ("totally",), "is", "different"), (("a", "lot"), ("a", "lot"), "the", "of")]
    for typed, intended, before, after in cases:
        assert loaded.score(typed, intended, before, after) == ranker.score(typed, intended, before, after)
