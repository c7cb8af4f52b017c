"""Whole-word errors: missing, extra and repeated words, and words in the wrong order.

"he very tall", "I am agree", "if it will rain", "the the", "also can", "where is the station".
"""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, lower_at, pick
from models.gec.noise.errors.context import content_verb_tags, is_content
from models.gec.noise.tokens import (
    Token,
    capitalize_first,
    delete,
    insert,
    is_word,
    lower_common,
    replace,
    sentence_start,
)


def missing_word(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Leave out a small word: a verb "to be" ("he very tall"), "it", "there", "and", "to"..."""
    cands = [
        (i, wl.DROPPABLE[t.text.lower()])
        for i, t in enumerate(tokens)
        if not t.edited and t.text.lower() in wl.DROPPABLE
    ]
    if not cands or sum(1 for t in tokens if is_word(t.text)) < 3:
        return None
    return delete(tokens, choose(rng, cands))


def extra_word(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Add a word that should not be there: "I am agree", "more bigger", "Although ..., but",
    "if it will rain", "I very like", or a stray small word."""
    start = sentence_start(tokens)
    cands: list[tuple[tuple[str, int, str], float]] = []
    first = lower_at(tokens, start)
    for i, t in enumerate(tokens):
        if t.edited or not is_word(t.text):
            continue
        low = t.text.lower()
        prev = lower_at(tokens, i - 1)
        tags = content_verb_tags(low)
        if prev in wl.SUBJECT_PRONOUNS and tags & {"VB", "VBZ"} and is_content(low) and ("VBD" not in tags):
            if "VBZ" in tags or prev in ("i", "you", "we", "they"):
                be = wl.BE_FOR_SUBJECT.get(prev, "are")
                w = 0.5 if "VBZ" in tags else 1.0
                cands.append((("insert", i, be), w))  # "I am agree", "it is depends"
            if low in ("like", "love", "enjoy", "want", "hope", "appreciate"):
                cands.append((("insert", i, "very"), 0.4))
        if low.isalpha() and infl.adj_degree(low) and prev not in ("more", "most"):
            deg = infl.adj_degree(low)
            assert deg is not None
            cands.append((("insert", i, "more" if deg[1] == "JJR" else "most"), 1.0))
        if prev in wl.PRESENT_FOR_FUTURE_CONJ and i + 1 < len(tokens):
            nxt = lower_at(tokens, i + 1)
            ntags = infl.verb_tags(nxt) if nxt.isalpha() else frozenset()
            if low in wl.SUBJECT_PRONOUNS and ntags & {"VB", "VBZ"} and not tokens[i + 1].edited:
                cands.append((("will", i + 1, "will"), 1.0))
        if (
            lower_at(tokens, i - 2) in ("that", "which")
            and prev in wl.SUBJECT_PRONOUNS
            and (tags & {"VBD", "VBZ", "VB"})
            and i + 1 < len(tokens)
            and not tokens[i + 1].edited
        ):
            nxt = lower_at(tokens, i + 1)
            if not is_word(nxt) or nxt in wl.PREPOSITIONS or nxt in ("yesterday", "today"):
                cands.append((("insert", i + 1, "it"), 1.0))  # "the film which I saw it"
    if first in wl.PAIRED_CONJ_OPENERS:
        for i, t in enumerate(tokens):
            if (
                t.text == ","
                and i + 1 < len(tokens)
                and is_word(tokens[i + 1].text)
                and not (tokens[i + 1].edited)
                and lower_at(tokens, i + 1) not in wl.COORD_CONJ
            ):
                cands.append((("insert", i + 1, "but" if first != "because" else "so"), 3.0))
                break
    picked = pick(rng, cands, 1.0) if cands else None
    if picked is None:
        return None
    kind, i, word = picked
    if kind == "will":
        lemma = infl.verb_lemma(tokens[i].text.lower())
        if lemma is None:
            return None
        out = replace(tokens, i, lemma)
        return insert(out, i, "will")
    return insert(tokens, i, word)


def repeated_word(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Write a word twice ("the the", "to to")."""
    cands = [
        (i, wl.REPEAT_WEIGHTS.get(t.text.lower(), 0.3))
        for i, t in enumerate(tokens)
        if not t.edited and t.text.isalpha() and t.ws == " "
    ]
    if not cands:
        return None
    i = choose(rng, cands)
    out = list(tokens)
    t = tokens[i]
    copy = t.text.lower() if i == sentence_start(tokens) else t.text
    copy = "I" if copy == "i" else copy
    out[i] = Token(t.text, t.ws, True)  # neither copy may be changed again
    out.insert(i + 1, Token(copy, " ", True))
    return out


def _swap(tokens: Tokens, i: int, start: int) -> Tokens:
    """Swap tokens i and i+1, keeping the whitespace slots and sentence-initial capital."""
    a, b = tokens[i], tokens[i + 1]
    a_text, b_text = b.text, a.text
    if i == start and a.text[:1].isupper():
        b_text = lower_common(a.text)
        a_text = capitalize_first(b.text)
    out = list(tokens)
    out[i] = Token(a_text, a.ws, True)
    out[i + 1] = Token(b_text, b.ws, True)
    return out


def word_order(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Put words in the wrong order: adverb placement ("also can", "I go always"), inversion in
    indirect questions ("where is the station" for "where the station is"), "enough good"."""
    start = sentence_start(tokens)
    cands: list[tuple[int, float]] = []
    n = len(tokens)
    for i in range(n - 1):
        a, b = tokens[i], tokens[i + 1]
        if a.edited or b.edited or not is_word(a.text) or not is_word(b.text) or a.ws != " ":
            continue
        la, lb = a.text.lower(), b.text.lower()
        if la in wl.FINITE_AUXILIARIES and lb in wl.MOVABLE_ADVERBS:
            cands.append((i, 2.0))  # "can also" -> "also can"
        elif (
            la in wl.MOVABLE_ADVERBS
            and lb.isalpha()
            and infl.verb_tags(lb)
            and is_content(lb)
            and (lower_at(tokens, i - 1) in wl.SUBJECT_PRONOUNS)
        ):
            cands.append((i, 1.5))  # "I always go" -> "I go always"
        elif (
            la in wl.SUBJECT_PRONOUNS
            and lb in wl.FINITE_AUXILIARIES
            and lower_at(tokens, i - 1) in wl.WH_WORDS
            and (i - 1 != start)
        ):
            cands.append((i, 2.0))  # "where he is" -> "where is he"
        elif lb == "enough" and la.isalpha() and infl.is_adj(la) and not infl.is_noun(la):
            cands.append((i, 1.5))  # "good enough" -> "enough good"
        elif la == "not" and lb == "to":
            cands.append((i, 1.0))
        elif (
            la in wl.ARTICLES
            and i + 2 < n
            and is_content(lb)
            and infl.is_adj(lb)
            and not (infl.is_noun(lb) or infl.is_verb(lb))
            and is_content(lower_at(tokens, i + 2))
            and infl.is_noun(lower_at(tokens, i + 2))
            and not (tokens[i + 2].edited)
            and b.ws == " "
        ):
            cands.append((i + 1, 0.3))  # "a big house" -> "a house big"
    i = pick(rng, cands, 1.0) if cands else None
    if i is None:
        return None
    return _swap(tokens, i, start)
