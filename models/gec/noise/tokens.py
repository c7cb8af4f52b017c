"""Lossless word/punctuation tokens for natural text, plus the edit helpers the error functions use.

Each token keeps the whitespace that follows it, so ``detokenize(tokenize(s)) == s`` for any
string. Edits (insert, delete, replace) repair whitespace and sentence-initial capitals so that a
corrupted sentence still looks like something a person typed.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Token(NamedTuple):
    """One word or punctuation mark, the whitespace after it, and whether an edit produced it."""

    text: str
    ws: str = ""
    edited: bool = False


# Order matters: abbreviations (U.S., e.g.) before words; numbers with separators; words with
# inner apostrophes/hyphens (don't, o'clock, well-known); runs of dots/dashes; any other char.
_TOKEN_RE = re.compile(
    r"""
    (?:[^\W\d_]\.){2,}                       # U.S.  e.g.  p.m.
  | \d+(?:[.,:/]\d+)*(?:[^\W\d_]+)?          # 2010  3.5  1,000  10:30  1990s  5th
  | [^\W_]+(?:['’\-][^\W_]+)*                # words, contractions, hyphenated compounds
  | \.{2,} | -{2,}                           # ...  --
  | \S                                       # anything else, one char at a time
    """,
    re.VERBOSE,
)
_WS_RE = re.compile(r"\s*")
# One token and the whitespace after it; since the last alternative matches any non-space
# character, consecutive matches cover the whole text.
_PAIR_RE = re.compile(r"(" + _TOKEN_RE.pattern + r")(\s*)", re.VERBOSE)

# Punctuation that attaches to the word on its right ("(", opening quotes).
OPENING = frozenset({"(", "[", "{", "“", "‘", "¿", "¡", "$", "£", "€"})


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens that remember their trailing whitespace.

    Leading whitespace, if any, is kept in a first token with empty text.
    """
    lead = _WS_RE.match(text).end()  # type: ignore[union-attr]
    tokens = [Token(tok, ws) for tok, ws in _PAIR_RE.findall(text, lead)]
    if lead:
        tokens.insert(0, Token("", text[:lead]))
    return tokens


def detokenize(tokens: list[Token]) -> str:
    """Join tokens back into text (exact inverse of :func:`tokenize`)."""
    return "".join([t.text + t.ws for t in tokens])


def is_word(text: str) -> bool:
    """True for tokens that start with a letter or digit."""
    return bool(text) and text[0].isalnum()


def sentence_start(tokens: list[Token]) -> int:
    """Index of the first word token (skipping opening quotes/brackets), or -1."""
    for i, t in enumerate(tokens):
        if is_word(t.text):
            return i
        if i > 3:
            break
    return -1


def match_case(new: str, old: str, at_start: bool) -> str:
    """Give ``new`` the capitalisation pattern of the ``old`` word it replaces.

    ``new`` is expected in its natural case ("the", "I"). All-caps words stay all-caps; an
    initial capital is carried over (except the one of the pronoun "I" in mid-sentence);
    otherwise ``new`` is returned as is.
    """
    if len(old) > 1 and old.isupper() and old.isalpha():
        return new.upper()
    if old[:1].isupper() and (at_start or not (old == "I" or old.startswith(("I'", "I’")))):
        # sentence start, or a capital for another reason ("You" after an opening quote)
        return new[:1].upper() + new[1:]
    return new


def capitalize_first(word: str) -> str:
    """Upper-case the first character only ("iPhone" stays "IPhone")."""
    return word[:1].upper() + word[1:]


def replace(tokens: list[Token], i: int, text: str) -> list[Token]:
    """Return a copy with token ``i``'s text replaced (whitespace kept) and marked edited."""
    out = list(tokens)
    out[i] = Token(text, tokens[i].ws, True)
    return out


def delete(tokens: list[Token], i: int, *, mark_next: bool = True) -> list[Token]:
    """Return a copy without token ``i``, with whitespace and a sentence-initial capital repaired.

    The token after the gap is marked edited (when ``mark_next``), so a later edit does not
    undo this one by re-inserting a word into the same gap.
    """
    out = list(tokens)
    gone = out.pop(i)
    if i > 0:
        prev = out[i - 1]
        if is_word(gone.text):
            # "the cat sat" -> "the sat"; "the park." -> "the."; "(the cat" -> "(cat"
            gap = "" if (not prev.ws or not gone.ws) else prev.ws
        else:
            # "word, next" -> "word next"; "end.\"" -> "end\""
            gap = prev.ws or gone.ws
        if gap != prev.ws:
            out[i - 1] = Token(prev.text, gap, prev.edited)
    if i < len(out):
        nxt = out[i]
        text = nxt.text
        if gone.text[:1].isupper() and i == sentence_start(out) and text[:1].islower():
            text = capitalize_first(text)
        if mark_next or text != nxt.text:
            out[i] = Token(text, nxt.ws, mark_next or nxt.edited)
    return out


def insert(tokens: list[Token], i: int, word: str) -> list[Token]:
    """Return a copy with ``word`` inserted before token ``i`` (``i == len`` appends).

    Whitespace is arranged so that the new word is separated from words on both sides but stays
    glued to punctuation that was glued there (``it.`` -> ``it too.``, ``(the`` -> ``(a the``).
    At the sentence start the capital moves to the new word.
    """
    out = list(tokens)
    start = sentence_start(tokens)
    if i == start and start >= 0:
        first = out[i]
        if first.text[:1].isupper() and not first.edited:
            word = capitalize_first(word)
            lowered = lower_common(first.text)
            if lowered != first.text:
                out[i] = Token(lowered, first.ws, first.edited)
    if i == 0:
        out.insert(0, Token(word, " ", True))
        return out
    prev = out[i - 1]
    if i == len(out):
        out[i - 1] = Token(prev.text, " ", prev.edited)
        out.append(Token(word, prev.ws, True))
    elif not prev.ws and prev.text not in OPENING and not is_word(out[i].text):
        # "it." -> "it too."
        out[i - 1] = Token(prev.text, " ", prev.edited)
        out.insert(i, Token(word, "", True))
    else:
        # "cat sat" -> "cat big sat";  "(the" -> "(a the"
        out.insert(i, Token(word, " ", True))
    return out


# Words that are capitalised at a sentence start only because of their position. Filled in by
# ``words`` (closed-class words) and ``inflect`` (lexicon) lazily to avoid an import cycle.
_common_checker: list = []


def lower_common(word: str) -> str:
    """Lower-case a sentence-initial word unless it looks like a name, "I" or an acronym."""
    if word == "I" or word.startswith("I'") or (len(word) > 1 and word.isupper()):
        return word
    low = word.lower()
    if low == word:
        return word
    if not _common_checker:
        from models.gec.noise.inflect import is_known_word  # local import: no cycle at load

        _common_checker.append(is_known_word)
    return low if _common_checker[0](low) else word
