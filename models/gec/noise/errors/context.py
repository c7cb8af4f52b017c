"""Reading the grammar around a token: content words, verb forms, the subject before a verb, "to", "like"."""

from __future__ import annotations

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, lower_at


def is_content(low: str) -> bool:
    """True for an alphabetic word outside the closed classes and number words ("house", "beautiful")."""
    return low.isalpha() and low not in wl.CLOSED_CLASS and low not in wl.NUMBERS


def content_verb_tags(low: str) -> frozenset[str]:
    """Verb forms of a content word, excluding adverbs that double as verbs ("still")."""
    if low in wl.FREQ_ADVERBS or not low.isalpha():
        return frozenset()
    tags = infl.verb_tags(low)
    if tags and "ADV" in infl.pos_tags(low):
        return frozenset()
    return tags


def subject_before(tokens: Tokens, i: int, start: int) -> str | None:
    """'sg' / 'pl' when the words before ``i`` look like the subject of a finite verb at ``i``.

    'pl' also covers "I" and "you" (they take the plain present form).
    """
    j = i - 1
    if j >= 0 and lower_at(tokens, j) in wl.FREQ_ADVERBS and lower_at(tokens, j) not in ("there", "here"):
        j -= 1
    if j < 0:
        return None
    t = tokens[j]
    low = t.text.lower()
    if low in ("he", "she", "it") or low in (
        "everyone",
        "everybody",
        "someone",
        "nobody",
        "something",
        "everything",
        "nothing",
    ):
        return "sg"
    if low in ("i", "you", "we", "they"):
        return "pl"
    if not is_content(low):
        return None
    if t.text[:1].isupper() and j != start:
        return "sg"  # a name: "Maria works"
    if not infl.is_noun(low) or infl.verb_tags(low) & {"VBD", "VBN", "VBG"}:
        return None
    before = lower_at(tokens, j - 1)
    if (
        j == start
        or before in wl.DETERMINERS
        or before in wl.NUMBERS
        or before.endswith("'s")
        or (before.isalpha() and infl.is_adj(before) and not infl.is_verb(before))
    ):
        if low in ("people", "children", "police"):
            return "pl"
        return "pl" if infl.is_plural(low) else "sg"
    return None


def like_is_prep(tokens: Tokens, i: int) -> bool:
    """True if "like" at ``i`` is the preposition ("looks like", "cities like Rome")."""
    prev = lower_at(tokens, i - 1)
    if prev in (",", "just", "much", "more", "exactly", "something", "things"):
        return True
    lemma = infl.verb_lemma(prev) if prev.isalpha() else None
    return lemma in wl.LIKE_PREP_VERBS


def to_kind(tokens: Tokens, i: int) -> str | None:
    """What "to" at ``i`` is: "inf" ("want to go"), "prep" ("to the park") or None (unclear)."""
    nxt = lower_at(tokens, i + 1)
    if not nxt.isalpha():
        return "prep"
    if nxt in wl.DETERMINERS or nxt in wl.OBJECT_PRONOUNS or nxt in wl.NUMBERS:
        return "prep"
    if tokens[i + 1].text[:1].isupper():
        return "prep"
    if "VB" not in infl.verb_tags(nxt):
        return "prep"
    if nxt == "be" or not infl.is_noun(nxt):
        return "inf"
    prev = lower_at(tokens, i - 1)
    lemma = infl.verb_lemma(prev) if prev.isalpha() else None
    if (lemma or prev) in wl.TO_INFINITIVE_VERBS or prev in (
        "order",
        "able",
        "going",
        "how",
        "what",
        "when",
        "where",
        "whether",
        "here",
        "there",
    ):
        return "inf"
    after = lower_at(tokens, i + 2)
    if after in wl.DETERMINERS or after in wl.OBJECT_PRONOUNS or after in ("up", "out", "to"):
        return "inf"
    if prev.isalpha() and infl.is_adj(prev) and not infl.is_verb(prev) and not infl.is_noun(prev):
        return "inf"
    return None


def is_infinitive_to(tokens: Tokens, i: int) -> bool:
    """True if tokens[i] is "to" introducing an infinitive ("want to go", "easy to learn")."""
    return lower_at(tokens, i) == "to" and to_kind(tokens, i) == "inf"
