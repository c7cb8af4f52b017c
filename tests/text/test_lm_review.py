"""The language model's review on a toy model: it drops an edit that makes the sentence much less likely and keeps
the others, proposes the article or preposition the corpus makes much more likely, leaves sentences it has nothing
better for, and leaves a degenerate output to the guard."""

from __future__ import annotations

import pytest

from models.gec.language_model import count_ngrams
from service.text.lm_review import LanguageModelReview, proposals
from service.text.ngrams import tokens_of, tokens_with_spans

CORPUS = [
    "She went to the market on Monday.",
    "He went to the market on Friday.",
    "We went to the park on Sunday.",
    "They went to the shop on Monday.",
    "I looked at the sky.",
    "You looked at the sea.",
] * 20


@pytest.fixture(scope="module")
def review() -> LanguageModelReview:
    """The toy corpus counts a few hundred words: a proposal needs less of a margin than over the real data."""
    return LanguageModelReview(count_ngrams(CORPUS, order=4, min_count=2), propose_margin=2.0)


def test_an_edit_the_corpus_never_saw_is_vetoed_and_a_good_one_kept(review: LanguageModelReview) -> None:
    source = "She go to the market on Monday."
    # the model fixed "go" but also rewrote "market" as a word the corpus never saw
    assert review.veto(source, "She went to the marker on Monday.") == ("She went to the market on Monday.", 1)
    reviewed = review.review(source, "She went to the marker on Monday.")
    assert (reviewed.text, reviewed.vetoed, reviewed.proposed) == ("She went to the market on Monday.", 1, 0)


def test_the_parts_of_one_change_stand_or_fall_together(review: LanguageModelReview) -> None:
    source = "She go to the market on Monday."
    moved = "She went to market the on Monday."  # "market" moved: a deletion and an insertion
    assert review.veto(source, moved)[0] in (moved, "She went to the market on Monday.")


def test_the_likely_preposition_and_article_are_proposed(review: LanguageModelReview) -> None:
    assert review.propose("She went to the market in Monday.") == ("She went to the market on Monday.", 1)
    assert review.propose("I looked at sky.") == ("I looked at the sky.", 1)
    assert review.review("He go to the park on Sunday.", "He went to the park on Sunday.").text == (
        "He went to the park on Sunday."
    )
    both = review.review("I looked at in sky.", "I looked at in sky.")  # the preposition goes, the article comes
    assert (both.text, both.vetoed, both.proposed) == ("I looked at the sky.", 0, 2)


def test_nothing_better_means_no_edit(review: LanguageModelReview) -> None:
    for sentence in ("They went to the shop on Monday.", "Completely different words here."):
        assert review.review(sentence, sentence).text == sentence


def test_a_degenerate_output_is_left_for_the_guard(review: LanguageModelReview) -> None:
    source = "We went to the park on Sunday."
    looping = "We went to the the the the the the park on Sunday."
    assert review.review(source, looping).text == looping


def test_proposals_are_one_edit_each_on_the_text_and_its_tokens() -> None:
    text = "The cat sat on mat"
    tokens, spans = tokens_with_spans(text)
    candidates = proposals(text, tokens, spans)
    found = [c.applied(text) for c in candidates]
    for candidate, edited in zip(candidates, found, strict=True):  # the same edit on the tokens and on the text
        p, r = candidate.position, candidate.removed
        assert tokens_of(edited) == tokens[:p] + list(candidate.inserted) + tokens[p + r :]
    assert "A cat sat on mat" in found and "cat sat on mat" in found  # the article replaced, and gone
    assert "The cat sat in mat" in found and "The cat sat mat" in found  # the preposition replaced, and gone
    assert "The cat sat on the mat" in found  # an article before a lowercase word that follows none
    assert "The the cat sat on mat" not in found and "The cat a sat on mat" in found
