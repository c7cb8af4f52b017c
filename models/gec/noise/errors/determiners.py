"""Determiner errors: missing ("I have car"), extra ("the life is hard") and wrong ("a" for "the", "much")."""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, lower_at, next_word_index, recase
from models.gec.noise.errors.context import content_verb_tags, is_content
from models.gec.noise.tokens import delete, insert, is_word, replace, sentence_start


def det_missing(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Leave out an article ("I have car", "in morning")."""
    cands = []
    for i, t in enumerate(tokens):
        w = wl.DET_DROP_WEIGHTS.get(t.text.lower())
        if w and not t.edited and next_word_index(tokens, i) > 0:
            if w < 0.5 and i == sentence_start(tokens):
                continue  # "My friend's brother" -> "Friend's brother" is not learner-like
            cands.append((i, w))
    if not cands:
        return None
    return delete(tokens, choose(rng, cands))


def _inside_np(tokens: Tokens, i: int) -> bool:
    """True if a determiner precedes ``i`` with only modifiers in between ("the proposed [x]")."""
    j = i - 1
    while j >= 0 and i - j <= 3:
        low = tokens[j].text.lower()
        if low in wl.DETERMINERS or low in wl.NUMBERS or low.endswith("'s"):
            return True
        if not low.isalpha() or not is_content(low):
            return False
        j -= 1
    return False


def det_extra(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Add an unneeded article ("the life is hard", "an advice", "the most people")."""
    start = sentence_start(tokens)
    cands: list[tuple[int, float]] = []
    for i, t in enumerate(tokens):
        if t.edited or not t.text.isalpha():
            continue
        low = t.text.lower()
        prev = lower_at(tokens, i - 1)
        if prev in wl.DETERMINERS or prev in wl.NUMBERS or prev.endswith("'s"):
            continue
        if prev in wl.MODALS or prev in ("to", "not", "very", "so", "too", "how", "and", "or"):
            continue
        if prev in wl.PRONOUNS or prev in wl.RELATIVES or "'" in prev:
            continue  # "who [the] lives", "we'll [the] stay"
        if prev in wl.AUXILIARIES and infl.verb_tags(low):
            continue  # "will [the] stay"
        if i > 0 and not tokens[i - 1].text.isalpha() and is_word(tokens[i - 1].text):
            continue  # "18 [the] months", "non-voting [the] shares"
        if i - 1 > start and tokens[i - 1].text[:1].isupper():
            continue  # after a name: "Fiat [the] shares"
        if prev in wl.FREQ_ADVERBS:
            continue  # "always [a] remains"
        if prev.isalpha() and is_content(prev):
            ptags = infl.pos_tags(prev)
            pverb = infl.verb_tags(prev)
            if not ptags:
                continue  # unknown word before: "midfield [the] pairing"
            if "ADJ" in ptags:
                continue  # inside a noun phrase: "big [the] house", "detailed [the] study"
            if "NOUN" in ptags and not pverb & {"VBD", "VBZ", "VBG"}:
                continue  # compound: "police [a] station", "fat [a] consumption"
            if i - 1 == start and not pverb:
                continue
        if low == "most":
            cands.append((i, 2.0))
            continue
        if not is_content(low):
            continue
        if t.text[:1].isupper() and i != start:
            if (
                t.text.isalpha()
                and not t.text.isupper()
                and (prev in wl.PREPOSITIONS or content_verb_tags(prev) & {"VB", "VBD", "VBZ"})
            ):
                cands.append((i, 0.3))  # "in the London", "visit the Paris"
            continue
        if _inside_np(tokens, i):
            continue
        tags = infl.pos_tags(low)
        if "NOUN" not in tags or "ADV" in tags:
            continue
        if infl.verb_tags(low) and "NOUN" not in tags:
            continue
        if prev in wl.SUBJECT_PRONOUNS:  # "I work" is a verb
            continue
        weight = 1.0
        if infl.is_plural(low) or low in wl.UNCOUNTABLE:
            weight = 2.0
        cands.append((i, weight))
    if not cands:
        return None
    i = choose(rng, cands)
    low = tokens[i].text.lower()
    if low == "most" or (tokens[i].text[:1].isupper() and i != start) or infl.is_plural(low):
        art = "the" if rng.random() < 0.9 else "a"
    else:
        art = "the" if rng.random() < 0.6 else "a"
    if art == "a":
        art = wl.indefinite_article(tokens[i].text)
        if rng.random() < 0.1:
            art = "an" if art == "a" else "a"
    return insert(tokens, i, art)


def det_wrong(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Use the wrong determiner ("a" for "the", "an" for "a", "this" for "these", "much"...)."""
    start = sentence_start(tokens)
    cands: list[tuple[int, float]] = []
    for i, t in enumerate(tokens):
        low = t.text.lower()
        if t.edited or low not in wl.DET_CONFUSIONS:
            continue
        j = next_word_index(tokens, i)
        if j < 0:
            continue
        nxt = tokens[j].text.lower()
        if low in wl.ARTICLES:
            weight = 1.0
        else:
            # determiner use only: followed by a noun/adjective, not a verb or pronoun
            if not is_content(nxt) or not (infl.is_noun(nxt) or infl.is_adj(nxt)):
                continue
            if low in ("this", "that", "these", "those") and nxt in wl.CLOSED_CLASS:
                continue
            if low == "her" and not infl.is_noun(nxt):
                continue
            weight = 0.4
        cands.append((i, weight))
    if not cands:
        return None
    i = choose(rng, cands)
    low = tokens[i].text.lower()
    nxt_tok = tokens[i + 1].text
    options = wl.DET_CONFUSIONS[low]
    if low == "the" and infl.is_plural(nxt_tok.lower()):
        options = [("these", 0.3), ("this", 0.3), ("their", 0.2), ("a", 0.2)]
    new = choose(rng, options)
    if new in ("a", "an") and low not in ("a", "an") and rng.random() < 0.9:
        new = wl.indefinite_article(nxt_tok)
    if new == low:
        return None
    return replace(tokens, i, recase(tokens, i, new, start))
