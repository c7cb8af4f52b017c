"""The spelling stage: what it corrects, what each guard keeps, case, and that it only ever replaces whole OOV words."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.text.edits import apply_edits
from service.text.inflections import _table, irregular_forms
from service.text.spelling import Speller, guarded_chunk, has_digit, is_code, is_email, is_tag, is_url
from tests.text.toy_ranker import PAIRS, toy_ranker

VOCABULARY = {"zorbling": 12, "gecserve": 40}


@pytest.fixture(scope="module")
def speller() -> Speller:
    return Speller(VOCABULARY)


@pytest.fixture(scope="module")
def ranked() -> Speller:
    """With a ranking: learners drop doubled letters."""
    return Speller(VOCABULARY, toy_ranker({"del:ll": 50}))


def spelled(speller: Speller, text: str) -> str:
    return apply_edits(text, speller.corrections(text))


def test_misspellings_are_corrected_on_their_offsets(speller: Speller) -> None:
    text = "I have recieved teh letter becuase of you."
    edits = speller.corrections(text)
    assert [(e.original, e.replacement) for e in edits] == [
        ("recieved", "received"),
        ("teh", "the"),
        ("becuase", "because"),
    ]
    assert all(text[e.start : e.end] == e.original for e in edits)
    assert spelled(speller, text) == "I have received the letter because of you."


def test_the_closest_candidate_wins_then_the_most_frequent(speller: Speller) -> None:
    assert speller.suggest("freind") == "friend"  # distance 1 (a transposition)
    assert speller.suggest("tommorow") == "tomorrow"  # distance 2: nothing closer exists


@pytest.mark.parametrize(
    ("text", "guard"),
    [
        ("see https://recieved.example/teh for it", is_url),
        ("visit www.recieved.com today", is_url),
        ("write to jhon.smiht@recieved.org soon", is_email),
        ("the #recieved tag", is_tag),
        ("ask @jhon now", is_tag),
        ("set recieved_flag now", is_code),
        ("call teh() now", is_code),
        ("open config.recieved now", is_code),
        ("a <teh> tag", is_code),
        ("the recieved2 value", has_digit),
    ],
)
def test_guarded_chunks_are_left_alone(speller: Speller, text: str, guard) -> None:
    """Each case would be changed without its guard (its words are misspellings SymSpell would correct)."""
    chunks = [chunk for chunk in text.split() if guarded_chunk(chunk)]
    assert chunks, "the case has a guarded chunk"
    assert all(guard(chunk) for chunk in chunks)
    for chunk in chunks:
        assert chunk in spelled(speller, text).split()
        word = re.sub(r"[^A-Za-z]+", " ", chunk).split()
        assert any(speller.suggest(w.lower()) for w in word if not speller.known(w.lower())), "a guard matters here"


def test_digits_guard_numbers_and_words_with_digits(speller: Speller) -> None:
    assert spelled(speller, "in 2nd plce at 10am") == "in 2nd place at 10am"


def test_proper_nouns_and_acronyms_are_left_alone(speller: Speller) -> None:
    assert speller.suggest("jhon") is not None and speller.suggest("wrkers") is not None
    assert spelled(speller, "I met Jhon and the WRKERS of NASAA.") == "I met Jhon and the WRKERS of NASAA."


def test_capitalised_first_words_of_short_sentences_are_names(speller: Speller) -> None:
    """A capitalised first word is corrected, keeping its capital, in a sentence of at least 4 words; in a shorter
    one it is left (learner letters open and sign off with names), and never with ``initial_min_words=None``."""
    assert spelled(speller, "Vasiliy.") == "Vasiliy."
    assert spelled(speller, "Jhon Smiht") == "Jhon Smiht"
    assert spelled(speller, "Recieved your letter today.") == "Received your letter today."
    assert spelled(speller, '"Teh end," she said.') == '"The end," she said.'
    assert spelled(speller, "Recieved your letter.") == "Recieved your letter."  # 3 words
    never = Speller(VOCABULARY, initial_min_words=None)
    assert spelled(never, "Recieved your letter today.") == "Recieved your letter today."


def test_words_joined_by_apostrophes_or_hyphens_go_to_the_model(speller: Speller) -> None:
    assert spelled(speller, "He did'nt send the e-mial.") == "He did'nt send the e-mial."


def test_known_words_short_words_and_real_word_errors_stay(speller: Speller) -> None:
    """The vocabulary counts as known; 1-2 letter words and real-word errors are never changed."""
    assert speller.suggest("zorbling") is None or speller.known("zorbling")
    assert speller.suggest("ok") == "oak"  # what the length guard prevents
    assert spelled(speller, "the zorbling gecserve u r ok. Their going too.") == (
        "the zorbling gecserve u r ok. Their going too."
    )


def test_without_the_vocabulary_its_words_are_corrected() -> None:
    """The vocabulary is what keeps its words: the bundled dictionary alone does not know them."""
    bare = Speller({})
    assert not bare.known("zorbling") and bare.suggest("zorbling") is not None


def test_the_ranking_reads_the_words_around(ranked: Speller) -> None:
    """ "wich" is "which" or "with" (both 1 edit away): the neighbours decide, where the frequency alone says "with"."""
    assert spelled(ranked, "I like the house wich is red.") == "I like the house which is red."
    assert spelled(ranked, "I went wich her.") == "I went with her."
    speller = Speller(VOCABULARY)
    assert spelled(speller, "I like the house wich is red.") == "I like the house with is red."


def test_the_ranking_knows_learners_edits(ranked: Speller) -> None:
    """ "totaly" is "totally" with a doubled letter dropped, or the more frequent "total" with a "y" added."""
    assert ranked.suggest("totaly") == "totally"
    assert Speller(VOCABULARY, toy_ranker({"ins:ly": 50})).suggest("totaly") == "total"


def test_run_together_words_are_split_where_they_go_together(ranked: Speller) -> None:
    assert spelled(ranked, "There are alot of people.") == "There are a lot of people."
    assert spelled(ranked, "Alot of people came today.") == "A lot of people came today."
    assert ranked.suggest("ofthe") == "of the"
    unseen = Speller(VOCABULARY, toy_ranker(pairs=Counter({p: n for p, n in PAIRS.items() if p != ("of", "the")})))
    assert unseen.suggest("ofthe") != "of the"  # both words frequent, but never seen together
    assert Speller(VOCABULARY).suggest("alot") == "lot"  # without a ranking, no splits


def test_a_long_word_with_no_candidate_splits_with_its_rest_corrected(ranked: Speller) -> None:
    assert not ranked.closest("weatherrealted", 2)
    assert spelled(ranked, "It is a weatherrealted problem.") == "It is a weather related problem."


def test_a_long_word_with_nothing_within_2_edits_takes_a_word_3_edits_away_with_its_first_letter(
    ranked: Speller,
) -> None:
    assert not ranked.closest("errounuosly", 2) and ranked.suggest("errounuosly") == "erroneously"
    assert spelled(ranked, "It was errounuosly sent.") == "It was erroneously sent."
    assert not ranked.closest("nonfluoridated", 2)
    assert ranked.suggest("nonfluoridated") is None  # "fluoridated" is 3 edits away, but not its first letter
    assert Speller(VOCABULARY).suggest("errounuosly") is None  # without a ranking: 2 edits at most


def _touches_a_word(text: str, start: int, end: int) -> bool:
    """A letter or digit right beside the span, or a letter beyond an apostrophe or hyphen beside it."""
    before, after = text[max(start - 2, 0) : start].rjust(2), text[end : end + 2].ljust(2)
    joined = (before[1] in "'-\u2019" and before[0].isalpha()) or (after[0] in "'-\u2019" and after[1].isalpha())
    return before[1].isalnum() or after[0].isalnum() or joined


WORDS = ["recieved", "teh", "the", "Recieved", "Jhon", "NASAA", "u", "zorbling", "plce", "becuase", "apple", "alot"]
WORDS += ["Alot", "wich", "totaly", "weatherrealted", "errounuosly"]
CHUNKS = ["#teh", "@jhon", "www.teh.com", "teh_x", "2nd", "did'nt", "a.teh", "(teh)", "teh,", "héllo", "😀"]
SPACES = [" ", "  ", "\t", " \u00a0"]


@pytest.mark.parametrize("with_ranking", [False, True])
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(WORDS + CHUNKS), st.sampled_from(SPACES)), max_size=12))
def test_only_whole_unknown_words_change(
    speller: Speller, ranked: Speller, with_ranking: bool, parts: list[tuple[str, str]]
) -> None:
    """Each edit replaces one whole ASCII-letter word (no letter, digit or joiner around it) that the stage does not
    know, by known words of the same case pattern; everything else is untouched, and the edits rebuild the text."""
    speller = ranked if with_ranking else speller
    text = "".join(word + space for word, space in parts)
    edits = speller.corrections(text)
    result = apply_edits(text, edits)
    kept = 0
    for edit in edits:
        assert text[edit.start : edit.end] == edit.original and edit.original.isascii() and edit.original.isalpha()
        assert not _touches_a_word(text, edit.start, edit.end)
        assert not speller.known(edit.original.lower())
        assert all(speller.known(word) for word in edit.replacement.lower().split())
        assert edit.original.islower() or edit.replacement[0].isupper()
        assert result[edit.start + kept : edit.start + kept + len(edit.replacement)] == edit.replacement
        kept += len(edit.replacement) - len(edit.original)
    assert len(result) == len(text) + kept


@pytest.mark.parametrize("form", sorted(_table()))
def test_an_irregular_verb_written_as_regular_is_its_past_or_participle_and_nothing_else(
    speller: Speller, form: str
) -> None:
    verb = irregular_forms(form)
    assert verb is not None
    if speller.known(form):  # an English word ("bored", "founded", "singed"): never changed
        assert speller.corrections(f"He {form} it.") == []
        return
    assert spelled(speller, f"He {form} it.") == f"He {verb.past} it."
    assert spelled(speller, f"It was {form} here.") == f"It was {verb.participle} here."
    assert spelled(speller, f"{form.capitalize()} he did, once more.") == f"{verb.past.capitalize()} he did, once more."


@pytest.mark.parametrize("word", ["lol", "omg", "btw", "imo", "idk", "thx", "pls", "tbh", "sooo", "yesss", "pleeease"])
def test_chat_words_and_drawn_out_words_are_left_as_typed(speller: Speller, word: str) -> None:
    """SymSpell read them as other words ("lol": "lot", "omg": "mg", "sooo": "soon"); a misspelling beside them is
    still corrected."""
    assert spelled(speller, f"this is {word} good and i recieved it") == f"this is {word} good and i received it"


@pytest.mark.parametrize(
    "sentence", ["Dun ako nagtrabaho noong isang taon.", "Saya pergi ke pasar kemarin dan membeli buah."]
)
def test_a_sentence_mostly_of_unknown_words_is_another_language_and_left(speller: Speller, sentence: str) -> None:
    """SymSpell made "Dun aka nagtrabaho noon sang ton." of the first."""
    assert speller.corrections(sentence) == []


def test_a_learners_sentence_with_half_its_words_misspelt_is_still_corrected(speller: Speller) -> None:
    assert spelled(speller, "I felt abosolutly disapointed.") == "I felt absolutely disappointed."
