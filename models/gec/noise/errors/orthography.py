"""Orthography errors: capitalisation ("i", "london", "the University") and spacing ("alot", "every one")."""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, lower_at, recase
from models.gec.noise.errors.context import is_content
from models.gec.noise.tokens import Token, capitalize_first, is_word, replace, sentence_start


def capitalisation(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Capitalisation errors: "i", a lower-case sentence start, a lower-case name ("london",
    "english"), a capital on a common noun ("the University")."""
    start = sentence_start(tokens)
    cands: list[tuple[tuple[str, int], float]] = []
    for i, t in enumerate(tokens):
        text = t.text
        if t.edited or not is_word(text) or not text[:1].isalpha():
            continue
        if text == "I" or text.startswith(("I'", "I’")):
            cands.append((("lower", i), 2.0))
        elif i == start:
            if text[:1].isupper() and not text[1:2].isupper() and infl.is_known_word(text.lower()):
                cands.append((("lower", i), 1.5))
        elif text[:1].isupper():
            if text.isupper() and len(text) > 1:
                cands.append((("lower", i), 0.3))  # "tv", "uk"
            elif text.isalpha() and lower_at(tokens, i - 1) not in (".", "!", "?", '"', ":"):
                w = 2.0 if text.lower() in wl.ALWAYS_CAPITALISED else 1.0
                cands.append((("lower", i), w))
        elif (
            text.isalpha() and len(text) > 3 and infl.is_noun(text) and is_content(text) and (not infl.verb_tags(text))
        ):
            cands.append((("upper", i), 0.15))
    if not cands:
        return None
    kind, i = choose(rng, cands)
    text = tokens[i].text
    new = text.lower() if kind == "lower" else capitalize_first(text)
    return replace(tokens, i, new)


def spacing(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Join or split words wrongly ("alot", "every one", "infront", "some times", "can not")."""
    start = sentence_start(tokens)
    cands: list[tuple[tuple[str, int], float]] = []
    for i, t in enumerate(tokens):
        if t.edited:
            continue
        low = t.text.lower()
        if low in wl.SPLITS:
            cands.append((("split", i), 1.0))
        if (
            i + 1 < len(tokens)
            and t.ws == " "
            and not tokens[i + 1].edited
            and ((low, tokens[i + 1].text.lower()) in wl.MERGES)
        ):
            cands.append((("merge", i), 1.5))
    if not cands:
        return None
    kind, i = choose(rng, cands)
    low = tokens[i].text.lower()
    if kind == "split":
        return replace(tokens, i, recase(tokens, i, wl.SPLITS[low], start))
    merged = wl.MERGES[(low, tokens[i + 1].text.lower())]
    out = replace(tokens, i, recase(tokens, i, merged, start))
    out[i] = Token(out[i].text, tokens[i + 1].ws, True)
    del out[i + 1]
    return out
