"""The lexical policy: which class of edit needs how much confidence, and which words the model never rewrites
(``service.text.policy``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.text.categories import CATEGORIES, OPERATIONS
from service.text.policy import (
    LEVELS,
    LEXICAL_CLASSES,
    MULTIPLIERS,
    fixed_words,
    lexical_class,
    required,
    rewrites_fixed,
    threshold_of,
)


@pytest.mark.parametrize(
    ("code", "original", "replacement", "expected"),
    [
        ("R:NOUN", "module", "documentary", "replaced"),
        ("R:NOUN", "docs", "document", "replaced"),
        ("R:VERB", "say", "tell", "related"),  # a confusion set
        ("R:NOUN", "advise", "advice", "related"),
        ("R:ADJ", "quite", "quiet", "related"),  # a spelling neighbour
        ("U:NOUN", "football ", "", "deleted"),
        ("M:VERB", "", "is ", "inserted"),
        ("R:NOUN:NUM", "days", "day", "morphology"),
        ("R:MORPH", "licensee", "license", "related"),  # another lemma of the stem: not the same word
        ("R:MORPH", "quick", "quickness", "replaced"),
        ("R:VERB:SVA", "go", "goes", "morphology"),
        ("M:DET", "", "the ", "closed"),
        ("R:PREP", "in", "on", "closed"),
        ("M:PUNCT", "", ",", "punctuation"),
        ("R:ORTH", "i", "I", "punctuation"),
        ("R:WO", "always I", "I always", "order"),
        ("R:SPELL", "recieve", "receive", "spelling"),
        ("R:OTHER", "becuase", "because", "spelling"),  # made by the spelling stage
    ],
)
def test_lexical_class_of_an_edit(code: str, original: str, replacement: str, expected: str) -> None:
    spelled = original == "becuase"
    assert lexical_class(code, original, replacement, spelled) == expected


def test_every_errant_code_has_a_class_and_a_multiplier() -> None:
    for operation in OPERATIONS:
        for category in CATEGORIES:
            assert lexical_class(f"{operation}:{category}", "word", "other") in LEXICAL_CLASSES
    assert set(MULTIPLIERS) == set(LEXICAL_CLASSES)


def test_open_class_edits_need_more_confidence_than_morphology_closed_class_and_punctuation() -> None:
    for risky in ("replaced", "deleted", "inserted"):
        for safe in ("morphology", "closed", "punctuation"):
            assert required(risky, LEVELS["default"]) > required(safe, LEVELS["default"])
    assert required("replaced", 0.0) == 0.0 and required("replaced", 1.0) == 1.0


def test_levels_order_and_a_request_threshold_wins() -> None:
    assert LEVELS["safe"] > LEVELS["default"] > LEVELS["picky"]
    assert threshold_of("safe") == LEVELS["safe"]
    assert threshold_of("picky", 0.9) == 0.9


def _known(word: str) -> bool:
    return word not in {"dtype", "psutil", "urllib"}


@pytest.mark.parametrize(
    ("sentence", "fixed"),
    [
        ("He bought an IBM computer.", ["IBM"]),
        ("We met Anna and Tom in Paris.", ["Anna", "Tom", "Paris"]),
        ("Call getValue on the JavaScript object.", ["getValue", "JavaScript"]),
        ("Save it as mp3 or as a 2nd copy.", ["mp3", "2nd"]),
        ("Cast the dtype with psutil and urllib.", ["dtype", "psutil", "urllib"]),
        ("I think I'm right and so am I.", []),
        ("Names start sentences: Bob is here.", ["Bob"]),  # after the first word, a capital is a name
        ('"Quoted" first words are not names.', []),
    ],
)
def test_fixed_words(sentence: str, fixed: list[str]) -> None:
    assert [sentence[a:b] for a, b in fixed_words(sentence, _known)] == fixed


def test_an_unknown_word_the_spelling_stage_replaced_is_not_fixed() -> None:
    sentence = "Cast the dtype now."
    start = sentence.index("dtype")
    assert fixed_words(sentence, _known, [(start, start + 5)]) == []


@given(st.integers(0, 12), st.integers(0, 12), st.sampled_from(["", "x", "IBM", "ibm", "a b"]))
def test_an_edit_rewrites_a_fixed_word_when_it_changes_its_letters_or_splits_it(a: int, b: int, new: str) -> None:
    text = "an IBM box"  # IBM at 3..6
    start, end = min(a, b, len(text)), min(max(a, b), len(text))
    original = text[start:end]
    rewrites = rewrites_fixed(start, end, original, new, [(3, 6)])
    if original.lower() == new.lower():
        assert not rewrites  # letter case alone
    elif start < end:
        assert rewrites == (start < 6 and end > 3)
    else:
        assert rewrites == (3 < start < 6)  # an insertion at either end leaves it whole
