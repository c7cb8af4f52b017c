"""Preposition errors: wrong ("interested on"), missing ("listen music") and extra ("discuss about")."""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, lower_at, next_word_index, recase
from models.gec.noise.errors.context import is_content, is_infinitive_to, like_is_prep, to_kind
from models.gec.noise.tokens import delete, insert, is_word, replace, sentence_start


def prep_wrong(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Use the wrong preposition ("interested on", "at the morning", "for study" for "to study")."""
    start = sentence_start(tokens)
    cands: list[tuple[int, float]] = []
    for i, t in enumerate(tokens):
        low = t.text.lower()
        if t.edited or low not in wl.PREP_CONFUSIONS:
            continue
        if next_word_index(tokens, i) < 0 and lower_at(tokens, i + 1) not in ('"', "'", "("):
            continue
        if low == "like" and not like_is_prep(tokens, i):
            continue
        if low == "to":
            kind = to_kind(tokens, i)
            if kind == "inf":
                cands.append((i, 0.8))  # "I came here for study"
            if kind != "prep":
                continue
        cands.append((i, wl.PREP_SWAP_WEIGHTS.get(low, 1.0)))
    if not cands:
        return None
    i = choose(rng, cands)
    low = tokens[i].text.lower()
    if low == "to" and is_infinitive_to(tokens, i):
        new = "for"
    else:
        new = choose(rng, wl.PREP_CONFUSIONS[low])
    return replace(tokens, i, recase(tokens, i, new, start))


def prep_missing(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Leave out a preposition ("listen music", "arrive London", "depends the weather")."""
    start = sentence_start(tokens)
    cands: list[tuple[int, float]] = []
    for i, t in enumerate(tokens):
        low = t.text.lower()
        w = wl.PREP_DROP_WEIGHTS.get(low)
        if not w or t.edited or i == start:
            continue
        if low == "to" and to_kind(tokens, i) != "prep":
            continue
        if low == "like" and not like_is_prep(tokens, i):
            continue
        if next_word_index(tokens, i) < 0:
            w *= 0.3  # stranded: "the hotel which I stayed (in)."
        cands.append((i, w))
    if not cands:
        return None
    return delete(tokens, choose(rng, cands))


def prep_extra(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Add an unneeded preposition ("discuss about", "go to home", "most of people",
    "on last week")."""
    cands: list[tuple[tuple[int, str], float]] = []
    for i, t in enumerate(tokens[:-1]):
        if t.edited:
            continue
        low = t.text.lower()
        nxt_t = tokens[i + 1]
        nxt = nxt_t.text.lower()
        if not is_word(nxt_t.text) or nxt_t.edited or nxt in wl.PREPOSITIONS or nxt == "to":
            continue
        lemma = infl.verb_lemma(low) if low.isalpha() else None
        if lemma in wl.VERB_EXTRA_PREP and (nxt in wl.DETERMINERS or nxt in wl.OBJECT_PRONOUNS or is_content(nxt)):
            if nxt in wl.PLACE_ADVERBS or nxt in ("that", "how", "what", "whether"):
                continue
            cands.append(((i + 1, rng.choice(wl.VERB_EXTRA_PREP[lemma])), 2.0))
        elif lemma in wl.MOTION_VERBS and nxt in wl.PLACE_ADVERBS and nxt not in ("here", "there"):
            cands.append(((i + 1, "at" if lemma == "arrive" else "to"), 2.0))
        elif (
            low in wl.OF_QUANTIFIERS
            and is_content(nxt)
            and infl.is_noun(nxt)
            and (infl.is_plural(nxt) or nxt in wl.UNCOUNTABLE)
            and lower_at(tokens, i - 1) not in wl.ARTICLES
        ):
            cands.append(((i + 1, "of"), 1.5))
        elif (
            low in ("this", "last", "next", "every")
            and nxt in wl.TIME_NOUNS
            and (lower_at(tokens, i - 1) not in wl.PREPOSITIONS)
        ):
            cands.append(((i, choose(rng, [("in", 0.5), ("on", 0.3), ("at", 0.2)])), 1.5))
    if not cands:
        return None
    i, prep = choose(rng, cands)
    return insert(tokens, i, prep)
