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

``model_view`` is what the model reads of a sentence with protected spans (``service.text.protect``): the
normalised text with hidden spans left out and each masked span read as ``protect.PLACEHOLDER``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from service.text.protect import PLACEHOLDER, Kind, Span
from service.text.script import INVISIBLE

_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
# Anything that may need work: non-ASCII, or ASCII control characters other than tab.
_MAYBE_SPECIAL = re.compile("[^\t\x20-\x7e]")


@dataclass(frozen=True)
class Normalized:
    """Model text and its map to the original: ``to_source[i]`` is the index in ``source`` of ``text[i]``.

    ``to_source`` is increasing (strictly, except over a placeholder, whose characters map into the span it stands
    for) and has one final entry, ``len(source)``.
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


def model_view(paragraph: str, start: int, end: int, spans: Sequence[Span]) -> Normalized:
    """What the model reads of ``paragraph[start:end]`` (its ``source``): normalised, hidden spans left out,
    masked spans replaced by the placeholder. ``spans`` are protected spans of the paragraph, sorted (those outside
    ``[start, end)`` are skipped: pass the few that overlap it)."""
    source = paragraph[start:end]
    chars: list[str] = []
    to_source: list[int] = []

    def plain(a: int, b: int) -> None:
        if a < b:
            part = normalize(source[a:b])
            chars.append(part.text)
            if len(part.text) == b - a:  # nothing removed: one for one
                to_source.extend(range(a, b))
            else:
                to_source.extend([a + i for i in part.to_source[:-1]])

    position = 0
    for span in spans:
        if span.end <= start or span.start >= end:
            continue
        a, b = max(span.start - start, 0), min(span.end - start, len(source))
        plain(position, a)
        if span.kind is Kind.MASK:
            chars.append(PLACEHOLDER)
            to_source.extend(a + min(i, b - a - 1) for i in range(len(PLACEHOLDER)))
        elif span.kind is Kind.KEEP:
            plain(a, b)
        elif chars and chars[-1][-1:] == " " and b < len(source) and normalize_char(source[b]) == " ":
            b += 1  # "I ❤️ you" reads "I you": a hidden span takes one of the blanks around it along
        position = b
    plain(position, len(source))
    to_source.append(len(source))
    return Normalized("".join(chars), to_source, source)


def normalize_char(char: str) -> str:
    """The replacement of one character: itself, another single character, or ``""`` (removed)."""
    if char == "\t" or "\x20" <= char <= "\x7e":
        return char
    if char in _LINE_BREAKS:
        return " "
    if char in INVISIBLE:
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
