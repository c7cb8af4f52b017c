"""Spelling errors: real learner misspellings from a dictionary, or plausible made-up ones ("seperate")."""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, recase
from models.gec.noise.tokens import replace, sentence_start

_CONSONANTS = "bcdfghjklmnpqrstvwxz"


def _op_double(w: str, rng: random.Random) -> str | None:
    doubles = [k for k in range(1, len(w) - 1) if w[k] == w[k + 1] and w[k] in _CONSONANTS]
    if doubles and rng.random() < 0.6:
        k = rng.choice(doubles)
        return w[:k] + w[k + 1 :]
    singles = [
        k
        for k in range(1, len(w))
        if w[k] in "lrtnmspcfd" and w[k - 1] != w[k] and (k + 1 >= len(w) or w[k + 1] != w[k])
    ]
    if not singles:
        return None
    k = rng.choice(singles)
    return w[: k + 1] + w[k] + w[k + 1 :]


def _op_vowel(w: str, rng: random.Random) -> str | None:
    ks = [k for k in range(1, len(w)) if w[k] in wl.VOWEL_SWAPS]
    if not ks:
        return None
    k = rng.choice(ks)
    return w[:k] + rng.choice(wl.VOWEL_SWAPS[w[k]]) + w[k + 1 :]


def _op_delete(w: str, rng: random.Random) -> str | None:
    if len(w) < 4:
        return None
    k = rng.randrange(1, len(w))
    return w[:k] + w[k + 1 :]


def _op_insert(w: str, rng: random.Random) -> str | None:
    k = rng.randrange(1, len(w) + 1)
    prev = w[k - 1]
    ch = rng.choice(["e", prev, wl.KEYBOARD_NEIGHBOURS.get(prev, "e")[0]])
    return w[:k] + ch + w[k:]


def _op_transpose(w: str, rng: random.Random) -> str | None:
    if len(w) < 4:
        return None
    k = rng.randrange(1, len(w) - 1)
    if w[k] == w[k + 1]:
        return None
    return w[:k] + w[k + 1] + w[k] + w[k + 2 :]


def _op_keyboard(w: str, rng: random.Random) -> str | None:
    k = rng.randrange(1, len(w))
    near = wl.KEYBOARD_NEIGHBOURS.get(w[k])
    if not near:
        return None
    return w[:k] + rng.choice(near) + w[k + 1 :]


def _op_suffix(w: str, rng: random.Random) -> str | None:
    found = [(a, b) for a, b in wl.SUFFIX_SWAPS if a in w[1:]]
    if not found:
        return None
    a, b = rng.choice(found)
    k = w.rindex(a)
    return w[:k] + b + w[k + len(a) :]


_SPELL_OPS = (
    (_op_double, 0.22),
    (_op_vowel, 0.18),
    (_op_delete, 0.2),
    (_op_insert, 0.1),
    (_op_transpose, 0.1),
    (_op_keyboard, 0.1),
    (_op_suffix, 0.1),
)


def misspell(word: str, rng: random.Random, tries: int = 6) -> str | None:
    """A plausible non-word misspelling of a lower-case word, or None."""
    for _ in range(tries):
        op = choose(rng, _SPELL_OPS)
        new = op(word, rng)
        if new and new != word and not infl.is_known_word(new):
            return new
    return None


def spelling(
    tokens: Tokens,
    rng: random.Random,
    misspellings: dict[str, list[str]] | None = None,
    p_dictionary: float = 0.8,
) -> Tokens | None:
    """Misspell a word: a real learner misspelling when ``misspellings`` knows the word
    (with probability ``p_dictionary``), otherwise a doubled/undoubled letter, vowel swap,
    dropped/added/swapped letter or typo. Longer words are chosen more often."""
    start = sentence_start(tokens)
    cands: list[tuple[int, float]] = []
    for i, t in enumerate(tokens):
        text = t.text
        if t.edited or len(text) < 3 or not text.isalpha():
            continue
        if text[:1].isupper() and (i != start or text.isupper()):
            continue  # names and acronyms
        known = misspellings is not None and text.lower() in misspellings
        if len(text) >= 4 or known:
            cands.append((i, float((len(text) - 2) ** 2) * (2.0 if known else 1.0)))
    while cands:
        i = choose(rng, cands)
        low = tokens[i].text.lower()
        if misspellings and low in misspellings and rng.random() < p_dictionary:
            new: str | None = rng.choice(misspellings[low])
        else:
            new = misspell(low, rng) if len(low) >= 4 else None
        if new:
            return replace(tokens, i, recase(tokens, i, new, start))
        cands = [c for c in cands if c[0] != i]
    return None
