"""Lexical confusions: homophones ("their" -> "there") and near-synonyms ("make" for "do")."""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, lower_at, pick, plain_words, recase
from models.gec.noise.errors.context import is_content
from models.gec.noise.tokens import replace, sentence_start


def confusion(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Confuse homophones and look-alikes ("their" -> "there", "it's" -> "its",
    "than" -> "then")."""
    start = sentence_start(tokens)
    cands: list[tuple[int, float]] = []
    for i, t in enumerate(tokens):
        low = t.text.lower()
        opts = wl.CONFUSIONS.get(low)
        if t.edited or not opts:
            continue
        if low == "well" and (lower_at(tokens, i - 1) in wl.DETERMINERS or lower_at(tokens, i - 1) == "as"):
            continue
        cands.append((i, sum(w for _, w in opts)))
    i = pick(rng, cands, 0.6) if cands else None
    if i is None:
        return None
    new = choose(rng, wl.CONFUSIONS[tokens[i].text.lower()])
    return replace(tokens, i, recase(tokens, i, new, start))


def word_choice(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Pick a near-synonym learners confuse ("make" for "do", "say" for "tell",
    "job" for "work")."""
    start = sentence_start(tokens)
    cands: list[tuple[tuple[int, str], float]] = []
    for i, low in plain_words(tokens, start):
        if low in wl.OTHER_CHOICE:
            nxt = lower_at(tokens, i + 1)
            if low in ("so", "very", "too") and not (
                nxt.isalpha() and infl.pos_tags(nxt) & {"ADJ", "ADV"} and not infl.is_noun(nxt)
            ):
                continue
            if low in wl.COORD_CONJ:
                weight = 0.1
            elif low in wl.CLOSED_CLASS:
                weight = 0.5
            else:
                weight = 1.0
            cands.append(((i, "other"), weight))
            continue
        lemma = infl.verb_lemma(low)
        if lemma is None or lemma not in wl.VERB_CHOICE:
            continue
        if lemma in wl.AUX_LIKE_LEMMAS:
            nxt = lower_at(tokens, i + 1)
            if nxt in ("not", "n't") or nxt in wl.SUBJECT_PRONOUNS or infl.verb_tags(nxt) - {"VB"}:
                continue
            if not (nxt in wl.DETERMINERS or nxt in wl.OBJECT_PRONOUNS or is_content(nxt)):
                continue
        cands.append(((i, "verb"), 1.0))
    if not cands:
        return None
    i, kind = choose(rng, cands)
    low = tokens[i].text.lower()
    if kind == "other":
        new = choose(rng, wl.OTHER_CHOICE[low])
    else:
        lemma = infl.verb_lemma(low)
        assert lemma is not None
        alt = choose(rng, wl.VERB_CHOICE[lemma])
        tags = infl.verb_tags(low)
        prev = lower_at(tokens, i - 1)
        if "VBN" in tags and (prev in wl.HAVE_FORMS or prev in wl.BE_FORMS):
            form = "VBN"
        else:
            form = next((f for f in ("VBD", "VBZ", "VBG", "VB") if f in tags), "VB")
        new = infl.inflect_verb(alt, form)
    if new == low:
        return None
    return replace(tokens, i, recase(tokens, i, new, start))
