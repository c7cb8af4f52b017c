"""Noun errors: the wrong number ("informations", "one of my friend", "many country")."""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, lower_at, recase
from models.gec.noise.errors.context import is_content
from models.gec.noise.tokens import replace, sentence_start


def noun_number(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Change a noun's number ("informations", "one of my friend", "many country", "childs")."""
    start = sentence_start(tokens)
    cands: list[tuple[int, float]] = []
    for i, t in enumerate(tokens):
        if t.edited or not t.text.isalpha() or len(t.text) < 3:
            continue
        low = t.text.lower()
        if not is_content(low) or (t.text[:1].isupper() and i != start):
            continue
        if not infl.is_noun(low) or "ADV" in infl.pos_tags(low):
            continue
        nxt = lower_at(tokens, i + 1)
        if is_content(nxt) and infl.is_noun(nxt) and not infl.is_verb(nxt):
            continue  # not the head: "city [centre]"
        prev = lower_at(tokens, i - 1)
        if prev in wl.SUBJECT_PRONOUNS or prev in wl.MODALS or prev in ("to", "not", "will"):
            continue
        np_context = (
            prev in wl.DETERMINERS
            or prev in wl.NUMBERS
            or prev.endswith("'s")
            or (prev in wl.PREPOSITIONS and prev != "to")
            or (prev.isalpha() and infl.is_adj(prev) and not infl.is_verb(prev))
        )
        if not np_context and infl.verb_tags(low):
            continue
        weight = 2.5 if low in wl.UNCOUNTABLE else 1.0
        cands.append((i, weight))
    if not cands:
        return None
    i = choose(rng, cands)
    low = tokens[i].text.lower()
    sing = infl.singularize(low)
    if sing is not None:
        # "childrens", "peoples"
        new = low + "s" if low in ("children", "people") and rng.random() < 0.3 else sing
    elif low in infl.OVERREGULAR_PLURALS and rng.random() < 0.3:
        new = infl.OVERREGULAR_PLURALS[low]
    else:
        new = infl.pluralize(low)
    if new == low:
        return None
    return replace(tokens, i, recase(tokens, i, new, start))
