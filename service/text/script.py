"""What the model can read, so that what it cannot is left alone.

The model is trained on English learner text. Cheap checks keep it away from the rest:

* before batching, ``reads_as_english``: a sentence goes to the model only when at least half of
  its letters, and at least one, are Latin letters. Emoji-only, number-only, CJK, Cyrillic,
  Arabic, ... sentences pass through unchanged and cost no decoding.
* ``unreadable_runs``: inside a sentence the model reads, the runs of characters it cannot read
  (emoji, other scripts, combining marks, joiners), which ``protect`` leaves out of what the model
  reads (invisible format and control characters, which normalisation removes, are not among them).
* after decoding, ``editable``: an edit is kept only when its original span and its replacement
  consist of characters the model reads and writes: printable ASCII, blanks, precomposed Latin
  letters, and common typographic punctuation. An edit that touches an emoji, a CJK character, a
  combining mark, a zero-width or other invisible format character, a lone surrogate, or that
  would write U+FFFD (a byte-level decoder's broken UTF-8) is dropped, and that span comes back
  byte-identical.

``SPECIAL_SPELLINGS`` are the texts that spell a special token of the model (``</s>``, ``<s>``,
``<pad>``, ``<unk>``, ``<mask>``; ``<s>`` is also HTML's strike-through tag): encoded as text, never
as a control token, and protected (``service.text.protect``), since the model was not trained on
them and rewrites them (``</s>`` as ``_/s>``).
"""

from __future__ import annotations

import re

__all__ = [
    "INVISIBLE",
    "SPECIAL_SPELLINGS",
    "count_letters",
    "editable",
    "is_latin_letter",
    "reads_as_english",
    "unreadable_runs",
]

SPECIAL_SPELLINGS = ("</s>", "<s>", "<pad>", "<unk>", "<mask>")

# Precomposed Latin letters: Latin-1 Supplement, Latin Extended-A and -B, IPA, Latin Extended Additional.
_LATIN_RANGES = ((0x00C0, 0x024F), (0x0250, 0x02AF), (0x1E00, 0x1EFF))
# What an edit may remove or write: printable ASCII and tab, the precomposed Latin letters, the Latin-1 symbols below,
# the space separators (Unicode's Zs) and typographic punctuation (dashes, quotes, ellipsis, primes, bullets).
_LATIN1_SYMBOLS = "¡¢£¥§©«®°±²³´µ¶·¹º»¼½¾¿×÷€"
_EDITABLE = (
    "\t\x20-\x7e\u00c0-\u02af\u1e00-\u1eff\u2010-\u2027\u2030-\u205e"
    "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000" + _LATIN1_SYMBOLS
)
_NOT_EDITABLE = re.compile(f"[^{_EDITABLE}]")
_LATIN_LETTER = re.compile("[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u1e00-\u1eff]")
# Invisible format characters: normalisation removes them (``service.text.normalize``), as it removes control
# characters and lone surrogates
INVISIBLE = frozenset("\u00ad\u180e\u200b\u200e\u200f\u061c\u2060\u2061\u2062\u2063\u2064\ufeff") | frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
# Runs of characters the model cannot read (what normalisation removes aside), with the blanks between them
_UNREAD = f"[^{_EDITABLE}{''.join(sorted(INVISIBLE))}\\x00-\\x1f\\x7f-\\x9f\\ud800-\\udfff\\s]"
_UNREADABLE_RUN = re.compile(f"{_UNREAD}+(?:\\s+{_UNREAD}+)*")


def is_latin_letter(char: str) -> bool:
    code = ord(char)
    if code < 0x80:
        return char.isalpha()
    return char.isalpha() and any(low <= code <= high for low, high in _LATIN_RANGES)


def count_letters(text: str) -> int:
    """How many letters ``text`` holds (Unicode's, of any script)."""
    return sum(map(str.isalpha, text))


def reads_as_english(text: str) -> bool:
    """At least one letter, and at least half of the letters Latin."""
    latin = len(_LATIN_LETTER.findall(text))
    return latin > 0 and 2 * latin >= count_letters(text)


def editable(text: str) -> bool:
    """Every character is one an edit may remove or write (see the module docstring)."""
    return _NOT_EDITABLE.search(text) is None


def unreadable_runs(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of characters the model cannot read in ``text[start:end]`` (blanks between
    such characters join a run)."""
    return [match.span() for match in _UNREADABLE_RUN.finditer(text, start, len(text) if end is None else end)]
