"""Each error type: the specific change where it applies, None where it cannot."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.gec.noise import errors as ef
from models.gec.noise.tokens import Token, detokenize, tokenize

SEEDS = range(40)


def outputs(fn: ef.ErrorFn, text: str, **kw: object) -> set[str]:
    """All distinct results of ``fn`` on ``text`` over a range of seeds (None dropped)."""
    found = set()
    for seed in SEEDS:
        out = fn(tokenize(text), random.Random(seed), **kw)
        if out is not None:
            found.add(detokenize(out))
    return found


def never(fn: ef.ErrorFn, text: str) -> bool:
    return not outputs(fn, text)


# --- determiners ----------------------------------------------------------------------------


def test_det_missing() -> None:
    assert outputs(ef.det_missing, "I saw the cat in a tree.") == {
        "I saw cat in a tree.",
        "I saw the cat in tree.",
    }
    assert outputs(ef.det_missing, "The people are kind.") == {"People are kind."}
    assert never(ef.det_missing, "I saw cats in trees.")


def test_det_extra() -> None:
    assert "I like the music." in outputs(ef.det_extra, "I like music.")
    assert "The most people agree." in outputs(ef.det_extra, "Most people agree.")
    assert never(ef.det_extra, "It is.")


def test_det_wrong() -> None:
    got = outputs(ef.det_wrong, "She bought a car.")
    assert got <= {"She bought the car.", "She bought an car.", "She bought one car."}
    assert "She bought the car." in got
    assert "She bought a apple." in outputs(ef.det_wrong, "She bought an apple.")
    assert never(ef.det_wrong, "She runs fast.")


# --- prepositions ---------------------------------------------------------------------------


def test_prep_wrong() -> None:
    got = outputs(ef.prep_wrong, "We met in Paris.")
    assert got and all(g.startswith("We met ") and g.endswith(" Paris.") for g in got)
    assert "We met in Paris." not in got
    assert {"We met on Paris.", "We met at Paris."} & got
    assert "I came here for study." in outputs(ef.prep_wrong, "I came here to study.")
    assert never(ef.prep_wrong, "We met them.")


def test_prep_missing() -> None:
    assert outputs(ef.prep_missing, "I listen to music every day.") == {"I listen music every day."}
    assert never(ef.prep_missing, "I want to go.")  # infinitive "to" is not a preposition


def test_prep_extra() -> None:
    got = outputs(ef.prep_extra, "We discussed the problem.")
    assert got == {"We discussed about the problem."}
    assert outputs(ef.prep_extra, "Most people agree.") == {"Most of people agree."}
    assert "I went to home." in outputs(ef.prep_extra, "I went home.")
    assert never(ef.prep_extra, "He sleeps.")


# --- verbs ----------------------------------------------------------------------------------


def test_verb_sva() -> None:
    assert outputs(ef.verb_sva, "He goes to school.") == {"He go to school."}
    assert outputs(ef.verb_sva, "They were late.") == {"They was late."}
    assert "They likes it." in outputs(ef.verb_sva, "They like it.")
    assert never(ef.verb_sva, "Good morning.")


def test_verb_form() -> None:
    assert outputs(ef.verb_form, "She can swim.") <= {
        "She can swims.",
        "She can swimming.",
        "She can swam.",
        "She can to swim.",
    }
    assert outputs(ef.verb_form, "He has gone home.") == {"He has went home.", "He has go home."}
    assert outputs(ef.verb_form, "I enjoy reading.") == {"I enjoy to read.", "I enjoy read."}
    assert "Let me to go." in outputs(ef.verb_form, "Let me go.")
    assert never(ef.verb_form, "The red car.")


def test_verb_tense() -> None:
    assert outputs(ef.verb_tense, "I can help you.") == {"I could help you."}
    got = outputs(ef.verb_tense, "She walked home.")
    assert got <= {"She walks home.", "She has walked home."}
    assert "She walks home." in got
    assert "I seen it." in outputs(ef.verb_tense, "I have seen it.")
    assert never(ef.verb_tense, "Nice weather.")


def test_noun_number() -> None:
    assert outputs(ef.noun_number, "I need some information.") == {"I need some informations."}
    assert "One of my friend is here." in outputs(ef.noun_number, "One of my friends is here.")
    assert "Three child came." in outputs(ef.noun_number, "Three children came.")
    assert never(ef.noun_number, "It is.")


# --- pronouns -------------------------------------------------------------------------------


def test_pronoun_wrong() -> None:
    got = outputs(ef.pronoun_wrong, "The man who lives here.")
    assert got <= {
        "The man which lives here.",
        "The man that lives here.",
        "The man whom lives here.",
        "The man what lives here.",
    }
    assert got
    assert "My friend and me went." in outputs(ef.pronoun_wrong, "My friend and I went.")
    assert never(ef.pronoun_wrong, "The cat sat.")


def test_pronoun_missing() -> None:
    assert outputs(ef.pronoun_missing, "It is important to study.") == {"Is important to study."}
    assert never(ef.pronoun_missing, "The cat sat.")


# --- spelling -------------------------------------------------------------------------------


def test_spelling_synthetic_changes_one_long_word() -> None:
    text = "The environment is important."
    got = outputs(ef.spelling, text)
    assert len(got) > 5
    for g in got:
        diff = [(a, b) for a, b in zip(text.split(), g.split(), strict=True) if a != b]
        assert len(diff) == 1
        a, b = diff[0]
        assert a[0] == b[0] and abs(len(a) - len(b)) <= 1


def test_spelling_uses_dictionary() -> None:
    miss = {"because": ["becouse", "beacuse"]}
    got = outputs(ef.spelling, "It was because of him.", misspellings=miss, p_dictionary=1.0)
    assert got == {"It was becouse of him.", "It was beacuse of him."}


def test_spelling_keeps_case_and_skips_names() -> None:
    got = outputs(ef.spelling, "Beautiful London.", misspellings={"beautiful": ["beatiful"]}, p_dictionary=1.0)
    assert got == {"Beatiful London."}
    assert never(ef.spelling, "I am ok.")


def test_misspell_makes_a_non_word() -> None:
    rng = random.Random(0)
    for word in ("necessary", "different", "beautiful", "government", "believe"):
        for _ in range(10):
            new = ef.misspell(word, rng)
            assert new is not None and new != word and new[0] == word[0]


# --- confusions and word choice -------------------------------------------------------------


def test_confusion() -> None:
    assert outputs(ef.confusion, "Their house is big.") == {
        "There house is big.",
        "They're house is big.",
    }
    assert outputs(ef.confusion, "It's bigger than mine.") <= {
        "Its bigger than mine.",
        "It's bigger then mine.",
    }
    assert never(ef.confusion, "The cat sat.")


def test_word_choice() -> None:
    got = outputs(ef.word_choice, "They made a mistake.")
    assert got <= {"They did a mistake.", "They took a mistake."}
    assert "They did a mistake." in got
    assert "He said me the truth." in outputs(ef.word_choice, "He told me the truth.")
    assert never(ef.word_choice, "The cat sat.")


def test_morph() -> None:
    assert outputs(ef.morph, "He drives carefully.") == {"He drives careful."}
    assert outputs(ef.morph, "It is an environmental problem.") == {"It is an environment problem."}
    assert never(ef.morph, "The cat sat.")


def test_adj_form() -> None:
    assert outputs(ef.adj_form, "I was bored.") == {"I was boring."}
    assert outputs(ef.adj_form, "This is better.") == {"This is more good.", "This is more better."}
    assert never(ef.adj_form, "The cat sat.")


# --- punctuation ----------------------------------------------------------------------------


def test_punct_missing() -> None:
    got = outputs(ef.punct_missing, "Yes, I know.")
    assert "Yes I know." in got
    assert got <= {"Yes I know.", "Yes, I know"}
    got = outputs(ef.punct_missing, "My friend's car is red, but old.")
    assert {"My friends car is red, but old.", "My friend car is red, but old."} & got
    assert never(ef.punct_missing, "Hello there")


def test_punct_extra() -> None:
    assert "I think, that he is right." in outputs(ef.punct_extra, "I think that he is right.")
    assert never(ef.punct_extra, "Hi")


def test_punct_wrong() -> None:
    assert outputs(ef.punct_wrong, "He left; she stayed.") <= {
        "He left, she stayed.",
        "He left: she stayed.",
    }
    assert "He left, she stayed." in outputs(ef.punct_wrong, "He left; she stayed.")
    assert outputs(ef.punct_wrong, "Is it true?") == {"Is it true."}
    assert "He left, she stayed." in outputs(ef.punct_wrong, "He left. She stayed.")
    assert never(ef.punct_wrong, "The cat sat.")
    assert never(ef.punct_wrong, "Ask Dr. Smith now.")


# --- orthography ----------------------------------------------------------------------------


def test_capitalisation() -> None:
    text = "I think London is nice."
    got = outputs(ef.capitalisation, text)
    assert {"i think London is nice.", "I think london is nice."} <= got
    assert all(g.lower() == text.lower() for g in got)
    assert "the weather is nice." in outputs(ef.capitalisation, "The weather is nice.")
    assert never(ef.capitalisation, "123 456.")


def test_spacing() -> None:
    assert outputs(ef.spacing, "I have a lot of friends.") == {"I have alot of friends."}
    assert outputs(ef.spacing, "Everyone came.") == {"Every one came."}
    assert never(ef.spacing, "The cat sat.")


# --- missing, extra, repeated words; word order; contractions -------------------------------


def test_missing_word() -> None:
    assert "He very tall." in outputs(ef.missing_word, "He is very tall.")
    assert outputs(ef.missing_word, "He is very tall.") <= {"He very tall.", "He is tall."}
    assert never(ef.missing_word, "The cat sat.")


def test_extra_word() -> None:
    assert outputs(ef.extra_word, "I agree with you.") == {"I am agree with you."}
    assert "Although it rained, but we went out." in outputs(ef.extra_word, "Although it rained, we went out.")
    assert "If he will come, we stay." in outputs(ef.extra_word, "If he comes, we stay.")
    assert never(ef.extra_word, "The cat.")


def test_repeated_word() -> None:
    got = outputs(ef.repeated_word, "I like the book.")
    assert "I like the the book." in got
    assert all(len(g.split()) == 5 for g in got)
    assert never(ef.repeated_word, "Hi.")


def test_word_order() -> None:
    assert outputs(ef.word_order, "I can also swim.") == {"I also can swim."}
    assert "I go always there." in outputs(ef.word_order, "I always go there.")
    assert never(ef.word_order, "The cat sat.")


def test_contraction() -> None:
    got = outputs(ef.contraction, "I don't know.")
    assert got <= {"I dont know.", "I do'nt know.", "I do not know."}
    assert "I dont know." in got
    assert "Im late." in outputs(ef.contraction, "I'm late.")
    assert never(ef.contraction, "The cat sat.")


# --- properties shared by all error functions -----------------------------------------------

WORDS = [
    "I",
    "you",
    "he",
    "she",
    "it",
    "we",
    "they",
    "the",
    "a",
    "an",
    "this",
    "my",
    "in",
    "on",
    "at",
    "to",
    "for",
    "of",
    "with",
    "about",
    "is",
    "are",
    "was",
    "were",
    "has",
    "have",
    "had",
    "can",
    "will",
    "would",
    "go",
    "goes",
    "went",
    "gone",
    "going",
    "make",
    "made",
    "book",
    "books",
    "information",
    "people",
    "child",
    "children",
    "big",
    "bigger",
    "good",
    "better",
    "quickly",
    "and",
    "but",
    "because",
    "that",
    "which",
    "who",
    "London",
    "Paris",
    ",",
    ",",
    ",",
    ".",
    ";",
    "?",
    "don't",
    "it's",
    "their",
    "there",
    "than",
    "then",
    "very",
    "also",
    "always",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=15), st.integers(0, 2**16))
def test_all_functions_are_safe(words: list[str], seed: int) -> None:
    text = " ".join(words).replace(" ,", ",").replace(" .", ".").replace(" ;", ";")
    text = text.replace(" ?", "?")
    tokens = tokenize(text)
    before = list(tokens)
    for name, fn in ef.ERROR_FUNCTIONS.items():
        out = fn(tokens, random.Random(seed))
        assert tokens == before, name  # input untouched
        if out is None:
            continue
        result = detokenize(out)
        assert "  " not in result, (name, text, result)
        assert result == result.strip(), (name, text, result)
        assert all(t.text for t in out), name


def test_edited_tokens_are_left_alone() -> None:
    text = "Although it rained, I think that the people in London don't like it's music."
    tokens = [Token(t.text, t.ws, True) for t in tokenize(text)]
    for name, fn in ef.ERROR_FUNCTIONS.items():
        for seed in range(5):
            assert fn(tokens, random.Random(seed)) is None, name


@pytest.mark.parametrize("name", sorted(ef.ERROR_FUNCTIONS))
def test_every_type_applies_somewhere(name: str) -> None:
    text = (
        "Although it was raining, I can also say that their children went to the school "
        "because they enjoy reading books about the information, and it's better than a lot "
        "of things I'm bored with; my friend's dog is carefully watching every day."
    )
    assert outputs(ef.ERROR_FUNCTIONS[name], text), name
