"""What the model can read, so that what it cannot is left alone.

The model is trained on English learner text. Two cheap checks keep it away from the rest:

* before batching, ``reads_as_english``: a sentence goes to the model only when at least half of
  its letters, and at least one, are Latin letters. Emoji-only, number-only, CJK, Cyrillic,
  Arabic, ... sentences pass through unchanged and cost no decoding.
* after decoding, ``editable``: an edit is kept only when its original span and its replacement
  consist of characters the model reads and writes: printable ASCII, blanks, precomposed Latin
  letters, and common typographic punctuation. An edit that touches an emoji, a CJK character, a
  combining mark, a zero-width or other invisible format character, a lone surrogate, or that
  would write U+FFFD (a byte-level decoder's broken UTF-8) is dropped, and that span comes back
  byte-identical.
* also after decoding, ``protected_spans``: text spelling a special token of the model (``</s>``,
  ``<s>``, ``<pad>``, ``<unk>``, ``<mask>``; ``<s>`` is also HTML's strike-through tag) is encoded as
  text, never as a control token, but the model was not trained on it and rewrites it (``</s>`` as
  ``_/s>``); an edit that touches such a spelling is dropped, so it comes back as it was written.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["SPECIAL_SPELLINGS", "editable", "is_latin_letter", "protected_spans", "reads_as_english"]

SPECIAL_SPELLINGS = ("</s>", "<s>", "<pad>", "<unk>", "<mask>")
_SPECIAL = re.compile("|".join(re.escape(spelling) for spelling in SPECIAL_SPELLINGS))

# Precomposed Latin letters: Latin-1 Supplement, Latin Extended-A and -B, IPA, Latin Extended Additional.
_LATIN_RANGES = ((0x00C0, 0x024F), (0x0250, 0x02AF), (0x1E00, 0x1EFF))
# Typographic punctuation an editor may legitimately write: dashes, quotes, ellipsis, primes, bullets.
_PUNCTUATION_RANGES = ((0x2010, 0x2027), (0x2030, 0x205E))
_LATIN1_SYMBOLS = frozenset("¡¢£¥§©«®°±²³´µ¶·¹º»¼½¾¿×÷€")


def is_latin_letter(char: str) -> bool:
    code = ord(char)
    if code < 0x80:
        return char.isalpha()
    return char.isalpha() and any(low <= code <= high for low, high in _LATIN_RANGES)


def reads_as_english(text: str) -> bool:
    """At least one letter, and at least half of the letters Latin."""
    letters = latin = 0
    for char in text:
        if char.isalpha():
            letters += 1
            latin += is_latin_letter(char)
    return latin > 0 and 2 * latin >= letters


@lru_cache(maxsize=4096)
def _editable_char(char: str) -> bool:
    code = ord(char)
    if 0x20 <= code < 0x7F or char == "\t":
        return True
    if is_latin_letter(char) or char in _LATIN1_SYMBOLS:
        return True
    if unicodedata.category(char) == "Zs":
        return True
    return any(low <= code <= high for low, high in _PUNCTUATION_RANGES)


def editable(text: str) -> bool:
    """Every character is one an edit may remove or write (see the module docstring)."""
    return all(_editable_char(char) for char in text)


def protected_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each special-token spelling in ``text`` (see the module docstring)."""
    return [match.span() for match in _SPECIAL.finditer(text)]
