"""Word and pair counts under 64-bit keys, and the smoothed bigram probability."""

from __future__ import annotations

import math
from collections import Counter
from itertools import pairwise

import numpy as np
import pytest

from service.text.word_pairs import END, SMOOTHING, START, WordPairs, pair_key, words_of

CORPUS = ["The cat sat.", "The cat ran!", "A dog sat, and the dog didn't run."]


def toy() -> tuple[WordPairs, Counter[str]]:
    words: Counter[str] = Counter()
    keys = Counter()
    for line in CORPUS:
        sentence = words_of(line)
        words.update(sentence)
        keys.update(pair_key(w) for w in sentence)
        keys.update(pair_key(a, b) for a, b in pairwise(sentence))
    pairs = WordPairs(np.array(list(keys), dtype=np.uint64), np.array(list(keys.values())), sum(words.values()))
    return pairs, words


def test_words_are_lowercase_letters_with_their_apostrophes_between_sentence_markers() -> None:
    assert words_of("Don't stop, Bob2!") == [START, "don't", "stop", "bob", END]


def test_keys_tell_pairs_from_their_reverse_and_from_words() -> None:
    assert len({pair_key("the", "cat"), pair_key("cat", "the"), pair_key("the"), pair_key("cat")}) == 4


def test_counts_are_found_by_key() -> None:
    pairs, _ = toy()
    assert (pairs.count("the"), pairs.count("the", "cat"), pairs.count(START, "the")) == (3, 2, 2)
    assert (pairs.count("cat", "the"), pairs.count("zebra")) == (0, 0)


def test_the_pair_seen_is_the_likely_one() -> None:
    pairs, _ = toy()
    assert pairs.log_prob("cat", "the") > pairs.log_prob("dog", "the") > pairs.log_prob("sat", "the")


def test_the_probabilities_after_a_word_sum_to_one_but_for_the_smoothing() -> None:
    """Dirichlet smoothing: sum_w (c(b, w) + mu P(w)) / (c(b) + mu) = 1, P(w) being add-a-half smoothed."""
    pairs, words = toy()
    for before in ("the", "cat", START):
        total = sum(math.exp(pairs.log_prob(w, before)) for w in words)
        assert total == pytest.approx(
            1 + 0.5 * len(words) / pairs.total * (SMOOTHING / (pairs.count(before) + SMOOTHING))
        )
