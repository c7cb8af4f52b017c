"""Word-form errors: the wrong member of a word family, and the wrong form of an adjective.

"environment" for "environmental", "easy" for "easily", "I was boring", "more bigger", "more easy".
"""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, lower_at, plain_words, recase
from models.gec.noise.errors.context import is_content
from models.gec.noise.tokens import replace, sentence_start


def _ly_base(word: str) -> str | None:
    if not word.endswith("ly") or len(word) < 6:
        return None
    if word.endswith("ily"):
        base = word[:-3] + "y"
    elif word.endswith(("ably", "ibly")):
        base = word[:-1] + "e"
    elif word.endswith("ically"):
        base = word[:-4]
    else:
        base = word[:-2]
    return base if infl.is_adj(base) else None


def morph(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Use the wrong word of the family ("environment" for "environmental", "easy" for "easily")."""
    start = sentence_start(tokens)
    cands: list[tuple[tuple[int, str], float]] = []
    for i, low in plain_words(tokens, start):
        if low in wl.MORPH_CONFUSIONS:
            cands.append(((i, choose(rng, wl.MORPH_CONFUSIONS[low])), 1.0))
        elif "ADV" in infl.pos_tags(low) and low not in wl.FREQ_ADVERBS:
            base = _ly_base(low)
            if base:
                cands.append(((i, base), 1.0))
    if not cands:
        return None
    i, new = choose(rng, cands)
    return replace(tokens, i, recase(tokens, i, new, start))


def adj_form(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Wrong adjective form ("I was boring", "more bigger", "more easy", "the most biggest")."""
    start = sentence_start(tokens)
    cands: list[tuple[tuple[int, str], float]] = []
    for i, low in plain_words(tokens, start):
        if low in wl.PARTICIPLE_ADJS:
            if infl.verb_tags(low) and lower_at(tokens, i - 1) in wl.HAVE_FORMS:
                continue  # "has interested" is a verb
            cands.append(((i, wl.PARTICIPLE_ADJS[low]), 1.5))
            continue
        if low == "most" and is_content(lower_at(tokens, i + 1)) and infl.is_adj(lower_at(tokens, i + 1)):
            cands.append(((i, "more"), 0.5))
            continue
        deg = infl.adj_degree(low)
        if deg is None:
            continue
        if lower_at(tokens, i - 1) in ("a", "an") and infl.is_noun(low):
            continue  # "a stranger", "a [bigger]" is rare
        base, tag = deg
        more = "more" if tag == "JJR" else "most"
        if lower_at(tokens, i - 1) in ("more", "most"):
            continue
        options = [(f"{more} {base}", 0.55), (f"{more} {low}", 0.45)]
        cands.append(((i, choose(rng, options)), 1.0))
    if not cands:
        return None
    i, new = choose(rng, cands)
    return replace(tokens, i, recase(tokens, i, new, start))
