"""The vocabulary of real English words: jargon, names' common words and neologisms are words; the misspellings web
text holds are not (``service.text.vocabulary``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.text.spelling import Speller
from service.text.vocabulary import Vocabulary, zipf
from tests.conftest import DEFAULT_MODEL


@pytest.fixture(scope="module")
def speller() -> Speller:
    return Speller.load(Path(DEFAULT_MODEL) / "vocabulary.txt")


JARGON = [
    # listed: technical, legal, business words beyond the spelling stage's dictionary
    "config", "onboarding", "geotag", "anonymise", "sublicense", "licensor", "kubernetes", "localhost", "indemnify",
    "metadata", "refactor", "dataset", "colour", "organise", "programme", "centre",
    # derived: a prefix, a suffix or two words
    "deduplicate", "subpath", "sublessee", "webhook", "tokenizer", "greenlist", "datetimes",
]  # fmt: skip
MISSPELLINGS = [
    # listed in web text, a common word one edit away
    "freind", "wich", "thier", "recieve", "untill", "definately", "becuase", "goverment", "realy", "beleive",
    "seperate", "wierd", "lenght", "truely", "arguement", "alot",
    # not listed, and not made of known parts
    "acsident", "consentrate", "facilitis",
]  # fmt: skip


@pytest.mark.parametrize("word", JARGON)
def test_jargon_and_neologisms_are_words(speller: Speller, word: str) -> None:
    assert speller.vocabulary.knows(word)
    assert speller.vocabulary.knows(word.capitalize())
    assert speller.corrections(f"We use the {word} here every day.") == []


@pytest.mark.parametrize("word", MISSPELLINGS)
def test_misspellings_are_not_words(speller: Speller, word: str) -> None:
    assert not speller.vocabulary.knows(word)


def test_a_word_of_the_spelling_stage_s_dictionary_is_known_and_digits_are_no_word(speller: Speller) -> None:
    assert speller.known("docs") and speller.vocabulary.knows("docs")  # though "does" is far more common
    assert not speller.vocabulary.knows("mp3") and not speller.vocabulary.knows("")


def test_a_misspelling_made_of_known_parts_is_still_one_where_a_common_word_is_one_edit_away() -> None:
    def listed(word: str) -> bool:
        return word in {"advice", "able", "friend"}

    vocabulary = Vocabulary(listed, lambda word: [("friend", 1)] if word == "freinds" else [])
    assert vocabulary.knows("adviceable")  # a known word and a suffix, nothing close
    assert not vocabulary.knows("freinds")  # "friend" + "s" with "friend" one edit away: no derivation


def test_zipf_reads_the_list_in_any_case() -> None:
    assert zipf("The") == zipf("the") > 7
    assert zipf("qxzvbn") == 0
