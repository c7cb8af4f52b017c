"""Word-level edit extraction, application, and mapping back through normalisation."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.text.edits import Edit, apply_edits, extract_edits, map_edits, tokenize
from service.text.normalize import normalize
from tests.text.strategies import LEARNER_PAIRS, pairs, texts


def triples(source: str, corrected: str) -> list[tuple[str, str, int]]:
    return [(e.original, e.replacement, e.start) for e in extract_edits(source, corrected)]


def check_edits(source: str, corrected: str, edits: list[Edit]) -> None:
    assert apply_edits(source, edits) == corrected
    for edit in edits:
        assert edit.original == source[edit.start : edit.end]
        assert edit.original != edit.replacement
    for first, second in pairwise(edits):
        assert first.end < second.start  # sorted, and at least one unchanged token in between


def test_tokens_concatenate_back() -> None:
    text = "I don't like \U0001f468\u200d\U0001f469\u200d\U0001f467  cafe\u0301 \u65e5\u672c 3.50\r\n"
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert tokens == [
        "I",
        " ",
        "don't",
        " ",
        "like",
        " ",
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        "  ",
        "cafe\u0301",
        " ",
        "\u65e5",
        "\u672c",
        " ",
        "3",
        ".",
        "50",
        "\r\n",
    ]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from([chr(code) for code in range(128)] + list("ab'_ 9.\n")), max_size=40))
def test_ascii_text_is_tokenized_as_other_text_is(text: str) -> None:
    """ASCII text takes one regular expression, other text a walk over its characters: with a snowman after it (a
    symbol: a token of its own), the walk finds the same tokens."""
    assert tokenize(text + "\u2603") == [*tokenize(text), "\u2603"]


def test_word_replacement_and_inserted_word_before_next_word() -> None:
    assert triples("I go to school", "I went to the school") == [("go", "went", 2), ("", "the ", 8)]


def test_inserted_punctuation_attaches_after_previous_word() -> None:
    assert triples("However I think so", "However, I think so") == [("", ",", 7)]


def test_inserted_words_before_final_punctuation() -> None:
    assert triples("I like it.", "I like it very much.") == [("", " very much", 9)]


def test_insertion_is_placed_as_far_right_as_possible() -> None:
    assert triples("bread butter", "bread and butter") == [("", "and ", 6)]
    assert triples("the cat", "the the cat") == [("", "the ", 4)]


def test_deleted_word_goes_with_its_following_space() -> None:
    assert triples("I am very happy", "I am happy") == [("very ", "", 5)]
    assert triples("I went to to school", "I went to school") == [("to ", "", 10)]
    assert triples("I like it it.", "I like it.") == [(" it", "", 9)]


def test_whitespace_change_does_not_swallow_words() -> None:
    assert triples("I  like , it", "I like, it") == [("  ", " ", 1), (" ", "", 7)]


def test_moved_comma_is_one_edit() -> None:
    assert triples("the letter ,which", "the letter, which") == [(" ,", ", ", 10)]


def test_adjacent_word_changes_stay_separate() -> None:
    assert triples("I has go to", "I have gone to") == [("has", "have", 2), ("go", "gone", 6)]


def test_consecutive_changed_tokens_form_one_edit() -> None:
    assert triples("They can not leave.", "They cannot leave.") == [("can not", "cannot", 5)]


def test_empty_texts() -> None:
    assert extract_edits("", "") == []
    assert triples("", "Hi.") == [("", "Hi.", 0)]
    assert triples("Hi.", "") == [("Hi.", "", 0)]


def test_learner_pair() -> None:
    source, corrected = LEARNER_PAIRS[2]
    assert triples(source, corrected) == [("", ",", 28), ("were", "have", 86), ("", "been ", 98)]


def test_apply_edits_rejects_bad_edits() -> None:
    with pytest.raises(ValueError):
        apply_edits("abc", [Edit(1, 2, "b", "x"), Edit(0, 1, "a", "y")])
    with pytest.raises(ValueError):
        apply_edits("abc", [Edit(0, 1, "x", "y")])
    with pytest.raises(ValueError):
        apply_edits("abc", [Edit(2, 4, "c", "")])


def test_map_edits_to_paragraph_offsets() -> None:
    paragraph = "Hello. I\u00a0go to\u200b school\u200b."
    sentence_start = 7
    n = normalize(paragraph[sentence_start:])
    assert n.text == "I go to school."
    edits = extract_edits(n.text, "I went to the school.")
    mapped = map_edits(edits, n, sentence_start)
    assert mapped == [Edit(9, 11, "go", "went"), Edit(16, 16, "", "the ")]
    assert apply_edits(paragraph, mapped) == "Hello. I\u00a0went to\u200b the school\u200b."


@settings(max_examples=400, deadline=None)
@given(pairs)
def test_edits_reproduce_the_correction(pair: tuple[str, str]) -> None:
    source, corrected = pair
    check_edits(source, corrected, extract_edits(source, corrected))


@settings(max_examples=300, deadline=None)
@given(texts, pairs, texts)
def test_mapped_edits_apply_to_the_paragraph(prefix: str, pair: tuple[str, str], suffix: str) -> None:
    raw_source, raw_corrected = pair
    sentence = normalize(raw_source)
    corrected = normalize(raw_corrected).text  # model output is normalised text
    paragraph = prefix + raw_source + suffix
    mapped = map_edits(extract_edits(sentence.text, corrected), sentence, len(prefix))
    for edit in mapped:
        assert edit.original == paragraph[edit.start : edit.end]
    for first, second in pairwise(mapped):
        assert first.end < second.start
    result = apply_edits(paragraph, mapped)
    # Outside the edits the original characters survive, so the model's view of the result is the correction.
    assert normalize(result).text == normalize(prefix).text + corrected + normalize(suffix).text
    assert result.startswith(prefix) and result.endswith(suffix)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(LEARNER_PAIRS))
def test_learner_pairs_round_trip(pair: tuple[str, str]) -> None:
    source, corrected = pair
    check_edits(source, corrected, extract_edits(source, corrected))
