"""What the model sees for a sentence: a lightly cleaned copy that maps back, character by character, to the original.

Only one-for-one replacements and deletions, decided per character (so normalising a concatenation is the
concatenation of the normalised parts):

* space separators other than U+0020 (NBSP, thin and narrow spaces, ideographic space, ...), line and paragraph
  separators and the control line breaks (LF, CR, VT, FF, NEL, FS/GS/RS) become U+0020;
* removed: other control characters (tab is kept), lone surrogates, soft hyphen (U+00AD), and invisible format
  characters: zero-width space, word joiner, BOM, invisible math operators, Mongolian vowel separator, and the bidi
  marks, embeddings and isolates. Zero-width joiner and non-joiner are kept (emoji sequences, Indic and Persian
  scripts need them), as are variation selectors;
* a character whose NFC form is a single other character (U+212B ANGSTROM SIGN -> Å, U+2126 OHM SIGN -> Ω, CJK
  compatibility ideographs) is replaced by it. NFC compositions (``e`` + U+0301 -> ``é``) would change lengths,
  so they are left alone; so is canonical reordering of combining marks.

Everything else, curly quotes and dashes included, is passed through unchanged.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_INVISIBLE = frozenset("\u00ad\u180e\u200b\u200e\u200f\u061c\u2060\u2061\u2062\u2063\u2064\ufeff") | frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
# Anything that may need work: non-ASCII, or ASCII control characters other than tab.
_MAYBE_SPECIAL = re.compile("[^\t\x20-\x7e]")


@dataclass(frozen=True)
class Normalized:
    """Model text and its map to the original: ``to_source[i]`` is the index in ``source`` of ``text[i]``.

    ``to_source`` is strictly increasing and has one final entry, ``len(source)``.
    """

    text: str
    to_source: list[int]
    source: str


def normalize(text: str) -> Normalized:
    """The model's view of ``text`` (see the module docstring for the exact rules)."""
    if not _MAYBE_SPECIAL.search(text):
        return Normalized(text, list(range(len(text) + 1)), text)
    chars: list[str] = []
    to_source: list[int] = []
    for i, char in enumerate(text):
        replacement = normalize_char(char)
        if replacement:
            chars.append(replacement)
            to_source.append(i)
    to_source.append(len(text))
    return Normalized("".join(chars), to_source, text)


def normalize_char(char: str) -> str:
    """The replacement of one character: itself, another single character, or ``""`` (removed)."""
    if char == "\t" or "\x20" <= char <= "\x7e":
        return char
    if char in _LINE_BREAKS:
        return " "
    if char in _INVISIBLE:
        return ""
    category = unicodedata.category(char)
    if category == "Zs":
        return " "
    if category in ("Cc", "Cs"):
        return ""
    composed = unicodedata.normalize("NFC", char)
    return composed if len(composed) == 1 else char


def source_span(normalized: Normalized, start: int, end: int) -> tuple[int, int]:
    """The original span of model-text span ``[start, end)``.

    A non-empty span maps tightly: from the first to the last of its characters (removed characters at its edges stay
    outside). An empty span (an insertion point) maps to just before the original of model character ``start``.
    """
    if start == end:
        position = normalized.to_source[start]
        return position, position
    return normalized.to_source[start], normalized.to_source[end - 1] + 1
