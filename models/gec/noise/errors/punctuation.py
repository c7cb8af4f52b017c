"""Punctuation errors: missing (commas, apostrophes), extra ("I think, that") and wrong marks (comma splices)."""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, lower_at, pick
from models.gec.noise.errors.context import content_verb_tags, is_content, subject_before
from models.gec.noise.tokens import Token, capitalize_first, delete, is_word, replace, sentence_start

_CLITIC_S = ("'s", "’s")


def punct_missing(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Leave out punctuation: a comma (most often), the final full stop, a possessive
    apostrophe ("my friends house"), a hyphen ("well known")."""
    cands: list[tuple[tuple[str, int], float]] = []
    n = len(tokens)
    last = n - 1
    while last > 0 and tokens[last].text in ('"', "'", ")", "”", "’"):
        last -= 1
    for i, t in enumerate(tokens):
        if t.edited:
            continue
        text = t.text
        if text == "," and 0 < i < n - 1:
            cands.append((("del", i), 1.0))
        elif (text in (";", ":") and 0 < i < n - 1) or (i == last and text in (".", "!") and i):
            cands.append((("del", i), 0.3))
        elif (
            text.lower().endswith(_CLITIC_S)
            and text.lower() not in wl.NON_POSSESSIVE_S
            and len(text) > 3
            and text[:-2].isalpha()
        ):
            cands.append((("poss", i), 1.0))
        elif text in ("'", "’") and i > 0 and tokens[i - 1].text.lower().endswith("s") and not (tokens[i - 1].ws):
            cands.append((("del", i), 0.7))  # "students' books" -> "students books"
        elif "-" in text and text.replace("-", "").isalpha():
            cands.append((("hyphen", i), 0.3))
    picked = pick(rng, cands, 1.0) if cands else None
    if picked is None:
        return None
    kind, i = picked
    if kind == "del":
        return delete(tokens, i, mark_next=tokens[i].text != ".")
    text = tokens[i].text
    if kind == "poss":
        new = text[:-2] + "s" if rng.random() < 0.7 else text[:-2]
    else:
        new = text.replace("-", " ", 1)
    return replace(tokens, i, new)


def _insert_after(tokens: Tokens, j: int, punct: str) -> Tokens:
    """Insert a punctuation mark glued to the end of token ``j``."""
    out = list(tokens)
    prev = out[j]
    out[j] = Token(prev.text, "", prev.edited)
    out.insert(j + 1, Token(punct, prev.ws, True))
    return out


def punct_extra(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Add punctuation that should not be there: commas before "that", "because", ...;
    between a subject and its verb; a doubled full stop."""
    cands: list[tuple[tuple[str, int], float]] = []
    start = sentence_start(tokens)
    n = len(tokens)
    for i in range(max(start, 0) + 1, n):
        t = tokens[i]
        prev = tokens[i - 1]
        if not is_word(t.text) or not is_word(prev.text) or not prev.ws or prev.edited:
            continue
        low = t.text.lower()
        w = wl.COMMA_BEFORE_WEIGHTS.get(low)
        if w and not (low == "that" and is_content(lower_at(tokens, i + 1)) and infl.is_noun(lower_at(tokens, i + 1))):
            cands.append((("comma", i - 1), w))
        elif (
            i - start >= 3
            and t.text.islower()
            and lower_at(tokens, i - 1) not in wl.PRONOUNS
            and (low in wl.FINITE_AUXILIARIES or content_verb_tags(low) & {"VBD", "VBZ"})
            and subject_before(tokens, i, start)
        ):
            cands.append((("comma", i - 1), 0.3))  # "The people in my town, are friendly"
    if n > 1 and tokens[-1].text in (".", "!") and not tokens[-1].edited:
        cands.append((("double", n - 1), 0.1))
    picked = pick(rng, cands, 1.0) if cands else None
    if picked is None:
        return None
    kind, j = picked
    if kind == "double":
        return replace(tokens, j, ".." if tokens[j].text == "." else "!!")
    return _insert_after(tokens, j, ",")


def punct_wrong(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Use the wrong punctuation mark: comma splices (". It" -> ", it"), ";" and ":" for ",",
    a full stop instead of a question mark, a full stop that cuts off a clause."""
    cands: list[tuple[tuple[str, int], float]] = []
    n = len(tokens)
    for i, t in enumerate(tokens):
        if t.edited or i == 0:
            continue
        text = t.text
        nxt = tokens[i + 1] if i + 1 < n else None
        if (
            text == "."
            and nxt is not None
            and nxt.text[:1].isupper()
            and is_word(nxt.text)
            and (tokens[i - 1].text.lower() not in wl.ABBREVIATIONS and len(tokens[i - 1].text) > 1)
        ):
            cands.append((("splice", i), 2.0))
        elif (text in (";", ":") and nxt is not None) or (text == "?" and i >= n - 2):
            cands.append((("sub", i), 1.0))
        elif text in ("–", "—") and nxt is not None:
            cands.append((("sub", i), 0.5))
        elif text == "," and nxt is not None and is_word(nxt.text) and i > 2:
            cands.append((("stop", i), 0.15))
    picked = pick(rng, cands, 1.0) if cands else None
    if picked is None:
        return None
    kind, i = picked
    text = tokens[i].text
    out = list(tokens)
    if kind == "splice":
        out[i] = Token(",", tokens[i].ws, True)
        nxt = tokens[i + 1]
        lowered = nxt.text if nxt.text == "I" or nxt.text.startswith("I'") else (nxt.text[:1].lower() + nxt.text[1:])
        if nxt.text[1:2].isupper() or (nxt.text != lowered and not infl.is_known_word(nxt.text.lower())):
            lowered = nxt.text  # acronym or name
        out[i + 1] = Token(lowered, nxt.ws, True)
        return out
    if kind == "stop":
        out[i] = Token(".", tokens[i].ws, True)
        nxt = tokens[i + 1]
        out[i + 1] = Token(capitalize_first(nxt.text), nxt.ws, True)
        return out
    if text in (";", ":"):
        new = choose(rng, [(",", 0.8), (";" if text == ":" else ":", 0.2)])
        if text == ":" and new == ",":
            new = choose(rng, [(",", 0.5), ("", 0.5)])
    elif text == "?":
        new = "."
    else:
        new = ","
    if new == "":
        return delete(tokens, i)
    if text in ("–", "—"):
        # " – " becomes ", ": glue the comma to the word before
        out = delete(tokens, i, mark_next=True)
        return _insert_after(out, i - 1, new)
    out[i] = Token(new, tokens[i].ws, True)
    return out
