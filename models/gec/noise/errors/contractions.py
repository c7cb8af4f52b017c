"""Contraction errors: a missing or misplaced apostrophe ("dont", "does'nt") and full/short form switches."""

from __future__ import annotations

import random

from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, lower_at, pick, recase
from models.gec.noise.tokens import Token, replace, sentence_start


def contraction(tokens: Tokens, rng: random.Random, p_expand: float = 0.05) -> Tokens | None:
    """Contraction errors: a missing or misplaced apostrophe ("dont", "does'nt", "Im"); rarely a
    switch between the full and the contracted form ("do not" <-> "don't")."""
    start = sentence_start(tokens)
    cands: list[tuple[tuple[str, int], float]] = []
    for i, t in enumerate(tokens):
        if t.edited:
            continue
        low = t.text.lower().replace("’", "'")
        if low in wl.CONTRACTIONS:
            cands.append((("bad", i), 1.0))
            cands.append((("expand", i), p_expand))
        elif (
            i + 1 < len(tokens)
            and (low, lower_at(tokens, i + 1)) in wl.EXPANSIONS
            and (t.ws == " " and not tokens[i + 1].edited)
        ):
            cands.append((("contract", i), p_expand))
    picked = pick(rng, cands, 1.0) if cands else None
    if picked is None:
        return None
    kind, i = picked
    low = tokens[i].text.lower().replace("’", "'")
    if kind == "bad":
        new = rng.choice(wl.CONTRACTIONS[low][1])
        return replace(tokens, i, recase(tokens, i, new, start))
    if kind == "expand":
        new = wl.CONTRACTIONS[low][0]
        return replace(tokens, i, recase(tokens, i, new, start))
    short = wl.EXPANSIONS[(low, lower_at(tokens, i + 1))]
    out = replace(tokens, i, recase(tokens, i, short, start))
    out[i] = Token(out[i].text, tokens[i + 1].ws, True)
    del out[i + 1]
    return out
