"""The n-gram language model on a tiny corpus: its counts, stupid backoff's scores computed by hand, batched scores
equal to one-by-one scores, and a save/load round trip; its fingerprint tables' look-ups against a dictionary."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.gec.language_model import count_ngrams
from service.text.ngrams import BACKOFF, FingerprintTables, NgramModel, token_keys, tokens_of, tokens_with_spans

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


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.one_of(st.sampled_from("aZ'0.,9 \n-İıſKß"), st.characters()), max_size=40))
def test_tokens_alone_are_the_tokens_with_spans(text: str) -> None:
    assert tokens_of(text) == tokens_with_spans(text)[0]


@pytest.mark.parametrize("text", ["", "   ", "İstanbul's ſ K 1,000.5", "a\nb", "x" * 500])
def test_tokens_alone_are_the_tokens_with_spans_at_the_edges(text: str) -> None:
    assert tokens_of(text) == tokens_with_spans(text)[0]


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
    assert len(pruned.tables.table(1)[0]) == len(count_ngrams(CORPUS, order=3, min_count=1).tables.table(1)[0])
    found = pruned.counts(tokens_of("the dog sat on the rug"))
    assert found[1, 2] == 0  # "the dog" was seen once: pruned
    assert found[2, 4] == 0 and found[1, 4] == 3  # "dog sat on" was seen once: pruned; "sat on" three times
    assert found[2, 5] == 3  # "sat on the"


def test_save_and_load_give_the_same_model(model: NgramModel, tmp_path: Path) -> None:
    model.save(tmp_path / "ngrams.npz")
    loaded = NgramModel.load(tmp_path / "ngrams.npz")
    assert (loaded.order, loaded.total, loaded.entries) == (model.order, model.total, model.entries)
    for n in range(1, model.order + 1):
        assert all(map(np.array_equal, model.tables.table(n), loaded.tables.table(n)))


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


FINGERPRINTS = st.integers(0, 2**32 - 1)


STORED = st.dictionaries(  # fingerprint -> count; crowded buckets at both ends too
    st.one_of(FINGERPRINTS, st.integers(0, 63), st.integers(2**32 - 64, 2**32 - 1)),
    st.integers(1, 2**32 - 1),
    max_size=300,
)


@settings(max_examples=200, deadline=None)
@given(orders=st.lists(STORED, min_size=1, max_size=4), others=st.lists(FINGERPRINTS, max_size=50))
def test_the_tables_find_each_order_s_counts_and_zero_for_the_rest(
    orders: list[dict[int, int]], others: list[int]
) -> None:
    tables = FingerprintTables(
        [(np.array(sorted(s), dtype=np.uint32), np.array([s[k] for k in sorted(s)], dtype=np.uint32)) for s in orders]
    )
    asked = [*(fingerprint for stored in orders for fingerprint in stored), *others, 0, 2**32 - 1]
    found = tables.look_up(np.array([asked] * len(orders), dtype=np.uint32))
    assert found.tolist() == [[stored.get(fingerprint, 0) for fingerprint in asked] for stored in orders]
