"""The lexical policy: how much confidence an edit needs, by what it does to the writer's words.

An edit is shown (and applied to the corrected text) when its confidence (``service.text.confidence``) reaches the
request's threshold times its category's multiplier (``required``). The threshold is the level's (``LEVELS``) or
the request's own ``min_confidence``. The multiplier is ``MULTIPLIERS``' entry for the edit's lexical class
(``lexical_class``), read from its ERRANT code and the words it changes:

- an open-class word (noun, verb, adjective, adverb) replaced by a word of another lemma that is neither a spelling
  neighbour of it nor in a confusion set (``CONFUSION_SETS``), a content word deleted, or one inserted, needs far
  more confidence than
- a morphological edit (the same lemma: ``R:NOUN:NUM``, ``R:VERB:FORM``...), a closed-class edit (determiners,
  prepositions, pronouns, auxiliaries, conjunctions, particles), or a punctuation or case edit.

The multipliers weigh what a wrong edit of each class costs a writer (a changed content word changes the meaning; a
wrong article is undone in a keystroke); ``python -m models.gec.precision`` measures, for each class and each ERRANT
category, the share of its edits on the dev sets that are right at each confidence, kept and held back at each level
(``docs/benchmarks/precision.json``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from service.text.classify import osa_distance, plausible_distance

LEVELS = {"safe": 0.5, "default": 0.35, "picky": 0.2}
"""The confidence threshold of each level: ``safe`` keeps only edits a careful writer would accept blindly."""

MULTIPLIERS = {
    "spelling": 1.0,  # the spelling stage's replacement of an unknown word
    "punctuation": 1.0,  # punctuation, case, whitespace, contractions
    "morphology": 0.9,  # another form of the same word
    "closed": 1.0,  # determiners, prepositions, pronouns, auxiliaries, conjunctions, particles
    "order": 1.2,  # the same words in another order
    "related": 1.2,  # an open-class word for a spelling neighbour or a word of its confusion set
    "replaced": 1.7,  # an open-class word for one of another lemma, neither close in spelling nor confusable
    "deleted": 1.7,  # a content word deleted
    "inserted": 1.6,  # a content word inserted
}
"""The threshold multiplier of each lexical class (``lexical_class``)."""

LEXICAL_CLASSES = tuple(MULTIPLIERS)

_MORPHOLOGY = frozenset(
    ("NOUN:NUM", "NOUN:INFL", "NOUN:POSS", "VERB:FORM", "VERB:SVA", "VERB:INFL", "VERB:TENSE", "ADJ:FORM")
)
_CLOSED = frozenset(("DET", "PREP", "PRON", "CONJ", "PART"))
_PUNCTUATION = frozenset(("PUNCT", "ORTH", "CONTR"))
_OPEN = frozenset(("NOUN", "VERB", "ADJ", "ADV", "OTHER", "MORPH"))  # MORPH: another lemma of the same stem

CONFUSION_SETS = (
    ("affect", "effect"), ("accept", "except"), ("advice", "advise"), ("borrow", "lend"), ("bring", "take"),
    ("economic", "economical"), ("historic", "historical"), ("hear", "listen"), ("job", "work"),
    ("journey", "travel", "trip"), ("learn", "teach"), ("lie", "lay"), ("lose", "loose", "miss"),
    ("make", "do"), ("quiet", "quite"), ("raise", "rise"), ("remember", "remind"), ("rob", "steal"),
    ("say", "tell"), ("see", "look", "watch"), ("sensible", "sensitive"), ("speak", "talk"), ("win", "earn"),
    ("fun", "funny"), ("then", "than"), ("principal", "principle"), ("complement", "compliment"),
    ("stationary", "stationery"), ("personal", "personnel"), ("everyday", "every day"), ("maybe", "may be"),
)  # fmt: skip
"""Words learners confuse, which the model may swap for each other as readily as a misspelling."""

_CONFUSABLE = {word: frozenset(group) for group in CONFUSION_SETS for word in group}


_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_INITIAL = re.compile(r"^[\W_]*")  # what may stand before a sentence's first word (quotes, brackets, a list marker)
PRONOUN_I = frozenset(("I", "Im", "Ive", "Ill", "Id"))  # "I" and its contractions without the apostrophe: no names
Span = tuple[int, int]


def fixed_words(text: str, known: Callable[[str], bool], spelled: Sequence[Span] = ()) -> list[Span]:
    """The spans of ``text`` (one sentence as the model reads it) holding words the model may not rewrite, as they
    are names, products or jargon: capitalised after the sentence's first word (or all capitals), written in
    CamelCase, with a digit, or unknown to ``known`` (the spelling stage's real words and the misspellings it has a
    close candidate for) where the stage did not replace it (``spelled``: the spans it replaced). "I" is no name."""
    first = _INITIAL.match(text).end()  # type: ignore[union-attr]
    found = []
    for match in _WORD.finditer(text):
        word = match.group()
        letters = word.replace("'", "").replace("’", "")
        fixed = (
            any(char.isdigit() for char in word)
            or (letters[0].isupper() and match.start() > first and letters not in PRONOUN_I)
            or any(char.isupper() for char in letters[1:])
            or (
                letters.isascii()
                and letters.isalpha()
                and len(letters) >= 3
                and not known(letters.lower())
                and not any(a < match.end() and b > match.start() for a, b in spelled)
            )
        )
        if fixed:
            found.append((match.start(), match.end()))
    return found


def rewrites_fixed(start: int, end: int, original: str, replacement: str, fixed: Sequence[Span]) -> bool:
    """Whether an edit of ``[start, end)`` changes one of the ``fixed`` words (``fixed_words``) other than in letter
    case: replaces or deletes part of it, or inserts into it (an insertion at either end leaves it whole)."""
    if original.lower() == replacement.lower():
        return False
    return any((start < b and end > a) if start < end else a < start < b for a, b in fixed)


def confusable(original: str, replacement: str) -> bool:
    """Whether the two (lowercase) words are in one confusion set."""
    return replacement in _CONFUSABLE.get(original, ())


def related(original: str, replacement: str) -> bool:
    """Whether ``replacement`` is a spelling neighbour of ``original`` or in its confusion set (case aside)."""
    a, b = original.lower().strip(), replacement.lower().strip()
    return confusable(a, b) or plausible_distance(max(len(a), len(b)), osa_distance(a, b))


def lexical_class(code: str, original: str, replacement: str, spelled: bool = False) -> str:
    """The lexical class (``MULTIPLIERS``' keys) of an edit with ERRANT ``code`` replacing ``original`` by
    ``replacement``; ``spelled``: the spelling stage made it."""
    operation, _, category = code.partition(":")
    if spelled or category == "SPELL":
        return "spelling"
    if category in _PUNCTUATION:
        return "punctuation"
    if category in _MORPHOLOGY:
        return "morphology"
    if category in _CLOSED:
        return "closed"
    if category == "WO":
        return "order"
    if category not in _OPEN:
        return "closed"
    if operation == "U":
        return "deleted"
    if operation == "M":
        return "inserted"
    return "related" if related(original, replacement) else "replaced"


def required(lexical: str, threshold: float) -> float:
    """The confidence an edit of class ``lexical`` needs at ``threshold`` (at most 1: a threshold of 0 keeps all)."""
    return min(1.0, threshold * MULTIPLIERS[lexical])


def threshold_of(level: str, min_confidence: float | None = None) -> float:
    """The request's threshold: its own ``min_confidence``, else its level's."""
    return LEVELS[level] if min_confidence is None else min_confidence
