"""Pronoun errors: the wrong pronoun ("it" for "them", "which" for "who") and a missing one ("Is important")."""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, lower_at, pick, recase
from models.gec.noise.errors.context import content_verb_tags
from models.gec.noise.tokens import delete, replace, sentence_start


def pronoun_wrong(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Use the wrong pronoun ("it" for "them", "which" for "who", "me" for "I", "hisself")."""
    start = sentence_start(tokens)
    cands: list[tuple[int, float]] = []
    for i, t in enumerate(tokens):
        low = t.text.lower()
        if t.edited or low not in wl.PRONOUN_CONFUSIONS:
            continue
        nxt = lower_at(tokens, i + 1)
        if low == "this" and not infl.verb_tags(nxt) and nxt not in ("is", "was", "will", "can"):
            continue  # determiner "this book" is handled by det_wrong
        if low in ("who", "which") and i == start:
            continue  # questions
        prev = lower_at(tokens, i - 1)
        if low == "i" and prev != "and":
            continue  # "My friend and me went" is learner-like, "Me think" is not
        if low in ("he", "she", "we", "they") and prev in wl.COORD_CONJ:
            continue
        cands.append((i, wl.PRONOUN_SWAP_WEIGHTS.get(low, 1.0)))
    if not cands:
        return None
    i = pick(rng, cands, 0.5)
    if i is None:
        return None
    options = wl.PRONOUN_CONFUSIONS[tokens[i].text.lower()]
    nxt = lower_at(tokens, i + 1)
    prev = lower_at(tokens, i - 1)
    if nxt in wl.AUXILIARIES or nxt in wl.FREQ_ADVERBS or content_verb_tags(nxt) & {"VBD", "VBZ"}:
        # subject position: "them went" is not what learners write, "it" for "they" is
        options = [(w, p) for w, p in options if w not in wl.OBJECT_ONLY_PRONOUNS] or options
    elif prev in wl.PREPOSITIONS or content_verb_tags(prev):
        options = [(w, p) for w, p in options if w not in wl.SUBJECT_ONLY_PRONOUNS] or options
    new = choose(rng, options)
    return replace(tokens, i, recase(tokens, i, new, start))


def pronoun_missing(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Leave out a pronoun, mostly "it" ("Is important to...", "I like very much")."""
    start = sentence_start(tokens)
    cands = [
        (i, wl.PRONOUN_DROP_WEIGHTS[t.text.lower()])
        for i, t in enumerate(tokens)
        if not t.edited and t.text.lower() in wl.PRONOUN_DROP_WEIGHTS and not (i == start and t.text.lower() == "who")
    ]
    i = pick(rng, cands, 1.0) if cands else None
    if i is None:
        return None
    return delete(tokens, i)
