"""Shared pieces of the error functions: their types, weighted sampling and case-aware token access."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from models.gec.noise.tokens import Token, is_word, match_case

T = TypeVar("T")
Tokens = list[Token]
ErrorFn = Callable[..., "Tokens | None"]
"""An error function: ``(tokens, rng, **options) -> tokens | None``."""


def choose(rng: random.Random, options: Sequence[tuple[T, float]]) -> T:
    """Pick an item from ``[(item, weight), ...]`` proportionally to its weight."""
    total = 0.0
    for _, w in options:
        total += w
    r = rng.random() * total
    for item, w in options:
        r -= w
        if r < 0:
            return item
    return options[-1][0]


def pick(rng: random.Random, options: Sequence[tuple[T, float]], floor: float) -> T | None:
    """Like :func:`choose`, but when the candidates' total weight is below ``floor`` return
    None with probability ``1 - total / floor``: a sentence whose only openings for an error are
    unlikely ones (weight << 1) then rarely gets that error."""
    total = sum(w for _, w in options)
    if total < floor and rng.random() * floor >= total:
        return None
    return choose(rng, options)


def _natural(word: str) -> str:
    """The pronoun "i" (and "i'm", ...) written the standard way."""
    if word == "i" or word.startswith("i'") or word.startswith("i "):
        return "I" + word[1:]
    return word


def recase(tokens: Tokens, i: int, new: str, start: int) -> str:
    """``new`` cased like the token it replaces at ``i`` (``start``: index of the sentence's first word)."""
    old = tokens[i].text
    out = match_case(_natural(new), old, i == start)
    if old.startswith("I'") and out[:1] == "i":  # "I'm" -> "Im", not "im"
        out = "I" + out[1:]
    return out


def lower_at(tokens: Tokens, i: int) -> str:
    """The lower-cased text of token ``i``, or "" when ``i`` is outside the sentence."""
    if 0 <= i < len(tokens):
        return tokens[i].text.lower()
    return ""


def next_word_index(tokens: Tokens, i: int) -> int:
    """``i + 1`` when the token after ``i`` is a word, else -1."""
    return i + 1 if i + 1 < len(tokens) and is_word(tokens[i + 1].text) else -1


def plain_words(tokens: Tokens, start: int) -> Iterator[tuple[int, str]]:
    """Index and lower-cased text of each unedited all-letter token, except capitalised ones after the
    sentence start ``start`` (names)."""
    for i, t in enumerate(tokens):
        if t.edited or not t.text.isalpha() or (t.text[:1].isupper() and i != start):
            continue
        yield i, t.text.lower()
