"""The n-gram language model on a tiny corpus: its counts, stupid backoff's scores computed by hand, batched scores
equal to one-by-one scores, and a save/load round trip."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.gec.language_model import count_ngrams
from service.text.ngrams import BACKOFF, NgramModel, token_keys, tokens_of

CORPUS = ["The cat sat on the mat.", "The cat sat on the mat.", "The dog sat on the rug.", "A cat ate 3 fish."]


@pytest.fixture(scope="module")
def model() -> NgramModel:
    return count_ngrams(CORPUS, order=3, min_count=1)


def test_tokens_are_lowercased_words_numbers_and_marks() -> None:
    assert tokens_of("Don't eat 3.5 apples, Bob!") == [
        "<s>",
        "don't",
        "eat",
        "<num>",
        "apples",
        ",",
        "bob",
        "!",
        "</s>",
    ]


def test_counts_are_the_corpus_counts(model: NgramModel) -> None:
    found = model.counts(tokens_of("the cat sat on the rug."))
    the, cat, sat, on, rug = 1, 2, 3, 4, 6
    assert found[0, the] == 6 and found[0, cat] == 3 and found[0, rug] == 1  # "the" 6 times, "cat" 3
    assert found[1, cat] == 2  # "the cat"
    assert found[2, sat] == 2 and found[2, on] == 2  # "the cat sat", "cat sat on": twice each
    assert found[2, on + 1] == 3  # "sat on the": three times
    assert found[2, rug] == 1  # "on the rug"
    assert model.total == sum(len(tokens_of(line)) for line in CORPUS)


def test_stupid_backoff_by_hand(model: NgramModel) -> None:
    tokens = tokens_of("the cat ate fish")
    scores = model.token_scores(tokens)
    # "<s> the": bigram seen (3 of 4 sentences start with "the"), no trigram ends there: backed off once
    assert scores[0] == pytest.approx(math.log10(3 / 4) + BACKOFF)
    # "<s> the cat": trigram seen twice... of "<s> the" 3 times
    assert scores[1] == pytest.approx(math.log10(2 / 3))
    # "cat ate": bigram seen once of "cat" 3 times; "the cat ate" never: one backoff
    assert scores[2] == pytest.approx(math.log10(1 / 3) + BACKOFF)
    # "ate fish": no, "fish" follows "<num>": unigram, two backoffs
    assert scores[3] == pytest.approx(math.log10((1 + 0.5) / model.total) + 2 * BACKOFF)
    unseen = model.token_scores(tokens_of("zebra"))[0]
    assert unseen == pytest.approx(math.log10(0.5 / model.total) + 2 * BACKOFF)


def test_a_seen_sentence_scores_above_its_garbled_words(model: NgramModel) -> None:
    assert model.score("The cat sat on the mat.") > model.score("The cat sat the on mat.")
    assert model.score("The cat sat on the mat.") > model.score("The cat sat in the mat.")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet="the cat sat on mat dog rug.,3ZQ ", max_size=40), min_size=1, max_size=8))
def test_batched_scores_equal_one_by_one(texts: list[str]) -> None:
    model = count_ngrams(CORPUS, order=3, min_count=1)
    assert model.scores(texts) == pytest.approx([model.score(text) for text in texts])


def test_pruning_keeps_every_word_and_the_frequent_ngrams() -> None:
    pruned = count_ngrams(CORPUS, order=3, min_count=2)
    assert len(pruned.tables[0][0]) == len(count_ngrams(CORPUS, order=3, min_count=1).tables[0][0])
    found = pruned.counts(tokens_of("the dog sat on the rug"))
    assert found[1, 2] == 0  # "the dog" was seen once: pruned
    assert found[2, 4] == 0 and found[1, 4] == 3  # "dog sat on" was seen once: pruned; "sat on" three times
    assert found[2, 5] == 3  # "sat on the"


def test_save_and_load_give_the_same_model(model: NgramModel, tmp_path: Path) -> None:
    model.save(tmp_path / "ngrams.npz")
    loaded = NgramModel.load(tmp_path / "ngrams.npz")
    assert (loaded.order, loaded.total, loaded.entries) == (model.order, model.total, model.entries)
    for (keys, counts), (keys2, counts2) in zip(model.tables, loaded.tables, strict=True):
        assert np.array_equal(keys, keys2) and np.array_equal(counts, counts2)


WORDS = ["the", "cat", "sat", "on", "mat", "dog", "rug", "a", ".", "fish", "zebra"]


@settings(max_examples=100, deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=0, max_size=10),
    data=st.data(),
)
def test_an_edit_s_delta_is_the_change_of_the_whole_sentence_s_score(words: list[str], data) -> None:
    model = count_ngrams(CORPUS, order=3, min_count=1)
    tokens = ["<s>", *words, "</s>"]
    edits = []
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(1, len(tokens) - 1))
        removed = data.draw(st.integers(0, min(2, len(tokens) - 1 - position)))
        inserted = data.draw(st.lists(st.sampled_from(WORDS), max_size=2))
        edits.append((position, removed, inserted))
    whole = model.token_scores(tokens).sum()
    expected = [model.token_scores(tokens[:p] + ins + tokens[p + r :]).sum() - whole for p, r, ins in edits]
    keys = token_keys(tokens)
    assert model.deltas(keys, [(p, r, token_keys(ins)) for p, r, ins in edits]) == pytest.approx(expected)
