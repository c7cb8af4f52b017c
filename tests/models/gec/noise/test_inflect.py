"""Noun number, verb forms and word-class lookups."""

from __future__ import annotations

import pytest

from models.gec.noise import inflect


@pytest.mark.parametrize(
    ("singular", "plural"),
    [
        ("book", "books"),
        ("city", "cities"),
        ("box", "boxes"),
        ("church", "churches"),
        ("day", "days"),
        ("child", "children"),
        ("person", "people"),
        ("life", "lives"),
        ("woman", "women"),
        ("analysis", "analyses"),
    ],
)
def test_plural_and_back(singular: str, plural: str) -> None:
    assert inflect.pluralize(singular) == plural
    assert inflect.singularize(plural) == singular
    assert inflect.is_plural(plural)
    assert not inflect.is_plural(singular)


def test_uncountable_nouns_get_the_learner_plural() -> None:
    assert inflect.pluralize("information") == "informations"
    assert inflect.pluralize("advice") == "advices"


@pytest.mark.parametrize("word", ["news", "bus", "business", "this", "always", "physics"])
def test_words_in_s_are_not_plurals(word: str) -> None:
    assert inflect.singularize(word) is None


@pytest.mark.parametrize(
    ("lemma", "forms"),
    [
        ("go", ("go", "goes", "went", "gone", "going")),
        ("make", ("make", "makes", "made", "made", "making")),
        ("stop", ("stop", "stops", "stopped", "stopped", "stopping")),
        ("study", ("study", "studies", "studied", "studied", "studying")),
        ("visit", ("visit", "visits", "visited", "visited", "visiting")),
        ("be", ("be", "is", "was", "been", "being")),
        ("have", ("have", "has", "had", "had", "having")),
        ("write", ("write", "writes", "wrote", "written", "writing")),
        ("die", ("die", "dies", "died", "died", "dying")),
        ("prefer", ("prefer", "prefers", "preferred", "preferred", "preferring")),
    ],
)
def test_verb_forms(lemma: str, forms: tuple[str, ...]) -> None:
    assert tuple(inflect.inflect_verb(lemma, f) for f in inflect.VERB_FORMS) == forms
    for form in forms:
        assert inflect.verb_lemma(form) == lemma


def test_verb_tags() -> None:
    assert inflect.verb_tags("went") == {"VBD"}
    assert inflect.verb_tags("gone") == {"VBN"}
    assert inflect.verb_tags("goes") == {"VBZ"}
    assert inflect.verb_tags("going") == {"VBG"}
    assert inflect.verb_tags("read") >= {"VB", "VBD", "VBN"}
    assert inflect.verb_tags("because") == frozenset()


def test_helpers() -> None:
    assert inflect.third_person("watch") == "watches"
    assert inflect.past("buy") == "bought"
    assert inflect.participle("take") == "taken"
    assert inflect.gerund("run") == "running"


def test_adjective_degree() -> None:
    assert inflect.adj_degree("better") == ("good", "JJR")
    assert inflect.adj_degree("worst") == ("bad", "JJS")
    assert inflect.adj_degree("tall") is None
    if inflect.HAS_LEXICON:
        assert inflect.adj_degree("bigger") == ("big", "JJR")
        assert inflect.adj_degree("easiest") == ("easy", "JJS")


def test_known_words() -> None:
    for word in ("the", "because", "went", "children", "information"):
        assert inflect.is_known_word(word)
    for word in ("becuase", "enviroment", "xqzt"):
        assert not inflect.is_known_word(word)


@pytest.mark.skipif(not inflect.HAS_LEXICON, reason="needs the lemminflect lexicon")
def test_lexicon_parts_of_speech() -> None:
    assert inflect.is_noun("house")
    assert inflect.is_verb("decided")
    assert inflect.is_adj("beautiful")
    assert not inflect.is_noun("quickly")
