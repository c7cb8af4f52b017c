"""Word-level edits between a text and its correction, their application, and their mapping to paragraph offsets.

Both texts are cut into tokens: whitespace runs, words (letters, digits, ``_``, with inner apostrophes as in
"don't", combining marks and joiners attached), single CJK ideographs or kana, and single other characters
(punctuation, symbols, emoji with their modifiers). The token sequences are aligned with ``difflib``; every run of
consecutive changed tokens becomes one ``Edit``, trimmed of unchanged tokens at its edges; two edits without any
word characters that only one unchanged whitespace token separates are joined (``" ,which"`` -> ``", which"`` is
one punctuation edit ``" ,"`` -> ``", "``). Edits are sorted and separated by at least one unchanged token, so a
whitespace change never swallows the words next to it.

Insertion and deletion attachment rule: when the same pure insertion or deletion could be placed at several token
positions (the text around it repeats what it adds or removes), it is placed as far RIGHT as possible. So an
inserted word goes, with its following space, in front of the next word ("to school" -> "to the school" is
``Edit(3, 3, "", "the ")``); inserted punctuation attaches right after the preceding word, with no space ("However
I" -> "However, I" is ``Edit(7, 7, "", ",")``); a deleted word goes with its following space ("the the cat" ->
"the cat" removes the second "the "). Before final punctuation or at the end of the text there is no following
space, so the space comes first (" very much" inserted before "."). Insertions are zero-length edits.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass

from service.text.normalize import Normalized, source_span

_APOSTROPHES = frozenset("'\u2019")
_JOINERS = frozenset("\u200c\u200d")
# ``tokenize`` of ASCII text: whitespace runs (what ``str.isspace`` takes), words with inner apostrophes, any other
# single character.
_ASCII_TOKENS = re.compile(r"[\t-\r\x1c- ]+|[0-9A-Za-z_]+(?:'[0-9A-Za-z_]+)*|.", re.DOTALL)


@dataclass(frozen=True)
class Edit:
    """Replace ``original == source[start:end]`` (code points) by ``replacement``; ``start == end`` inserts."""

    start: int
    end: int
    original: str
    replacement: str


def tokenize(text: str) -> list[str]:
    """Whitespace runs, words, ideographs and single other characters; they concatenate back to ``text``."""
    if text.isascii():  # most text: one regular expression finds the same tokens (no marks, joiners nor ideographs)
        return _ASCII_TOKENS.findall(text)
    return _walk(text)


def _walk(text: str) -> list[str]:
    """``tokenize``, a character at a time."""
    tokens = []
    i = 0
    while i < len(text):
        j = _token_end(text, i)
        tokens.append(text[i:j])
        i = j
    return tokens


def cased_like(word: str, like: str) -> str:
    """``word`` (lowercase) with a capital first letter where ``like``, the word it replaces, has one."""
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def extract_edits(source: str, corrected: str) -> list[Edit]:
    """Minimal word-level edits that turn ``source`` into ``corrected`` (see the module docstring)."""
    if source == corrected:  # most sentences: no diff to run
        return []
    a, b = tokenize(source), tokenize(corrected)
    starts = _token_starts(a)
    edits = []
    for i1, i2, j1, j2 in _changed_runs(a, b):
        start, end = starts[i1], starts[i2]
        edits.append(Edit(start, end, source[start:end], "".join(b[j1:j2])))
    return edits


def apply_edits(source: str, edits: list[Edit]) -> str:
    """``source`` with the edits applied; they must be sorted, non-overlapping and match ``source``."""
    parts = []
    position = 0
    for edit in edits:
        if edit.start < position or edit.end < edit.start or edit.end > len(source):
            raise ValueError(f"edits must be sorted, non-overlapping and inside the text: {edit}")
        if source[edit.start : edit.end] != edit.original:
            raise ValueError(f"edit does not match the text: {edit}")
        parts += [source[position : edit.start], edit.replacement]
        position = edit.end
    parts.append(source[position:])
    return "".join(parts)


def map_edits(edits: list[Edit], normalized: Normalized, sentence_offset: int) -> list[Edit]:
    """Edits computed on ``normalized.text`` expressed on the original paragraph.

    ``normalized`` is the normalisation of the sentence that starts at ``sentence_offset`` in the paragraph. Spans
    map as ``normalize.source_span`` says; ``original`` is re-read from the original sentence, so it keeps the
    characters the model did not see (NBSP, zero-width space, ...).
    """
    mapped = []
    for edit in edits:
        start, end = source_span(normalized, edit.start, edit.end)
        original = normalized.source[start:end]
        mapped.append(Edit(start + sentence_offset, end + sentence_offset, original, edit.replacement))
    return mapped


def _token_starts(tokens: list[str]) -> list[int]:
    """Start offset of each token, plus the text length as a final entry."""
    starts = [0]
    for token in tokens:
        starts.append(starts[-1] + len(token))
    return starts


def _changed_runs(a: list[str], b: list[str]) -> list[tuple[int, int, int, int]]:
    """Token ranges ``(i1, i2, j1, j2)``: a[i1:i2] becomes b[j1:j2]; trimmed, slid right, separated by equal tokens."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    runs: list[list[int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if runs and runs[-1][1] == i1 and runs[-1][3] == j1:
            runs[-1][1], runs[-1][3] = i2, j2
        else:
            runs.append([i1, i2, j1, j2])
    trimmed = [run for run in (_trim_run(a, b, *run) for run in runs) if run is not None]
    slid = []
    for k, run in enumerate(trimmed):
        limit = trimmed[k + 1][0] - 1 if k + 1 < len(trimmed) else len(a)
        slid.append(_slide_right(a, b, run, limit))
    return _merge_punctuation_runs(a, b, slid)


def _merge_punctuation_runs(
    a: list[str], b: list[str], runs: list[tuple[int, int, int, int]]
) -> list[tuple[int, int, int, int]]:
    """Join two runs without words that only one whitespace token separates (a moved comma is one edit)."""
    merged: list[tuple[int, int, int, int]] = []
    for run in runs:
        if merged:
            i1, i2, j1, j2 = merged[-1]
            gap_is_space = run[0] == i2 + 1 and a[i2].isspace()
            if (
                gap_is_space
                and not _has_word(a[i1:i2] + b[j1:j2])
                and not _has_word(a[run[0] : run[1]] + b[run[2] : run[3]])
            ):
                merged[-1] = (i1, run[1], j1, run[3])
                continue
        merged.append(run)
    return merged


def _has_word(tokens: list[str]) -> bool:
    return any(_is_word_char(char) for token in tokens for char in token)


def _trim_run(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int) -> tuple[int, int, int, int] | None:
    """Drop equal tokens at both edges of a changed run; None if nothing is left."""
    while i1 < i2 and j1 < j2 and a[i1] == b[j1]:
        i1, j1 = i1 + 1, j1 + 1
    while i1 < i2 and j1 < j2 and a[i2 - 1] == b[j2 - 1]:
        i2, j2 = i2 - 1, j2 - 1
    return None if (i1 == i2 and j1 == j2) else (i1, i2, j1, j2)


def _slide_right(a: list[str], b: list[str], run: tuple[int, int, int, int], limit: int) -> tuple[int, int, int, int]:
    """Move a pure insertion or deletion right while it stays equivalent and ends at or before ``limit``."""
    i1, i2, j1, j2 = run
    if i1 != i2 and j1 != j2:
        return run
    while i2 < limit:
        first = a[i1] if i1 != i2 else b[j1]
        if first != a[i2]:
            break
        i1, i2, j1, j2 = i1 + 1, i2 + 1, j1 + 1, j2 + 1
    return i1, i2, j1, j2


def _token_end(text: str, i: int) -> int:
    char = text[i]
    if char.isspace():
        j = i + 1
        while j < len(text) and text[j].isspace():
            j += 1
        return j
    if _is_ideograph(char) or not _is_word_char(char):
        return _extend(text, i + 1, pair_flags=_is_regional_indicator(char))
    return _word_end(text, i + 1)


def _word_end(text: str, j: int) -> int:
    while j < len(text):
        char = text[j]
        if _is_word_char(char) and not _is_ideograph(char):
            j += 1
        elif _is_extender(char):
            j = _extend(text, j)
        elif char in _APOSTROPHES and j + 1 < len(text) and _is_word_char(text[j + 1]):
            j += 1
        else:
            break
    return j


def _extend(text: str, j: int, pair_flags: bool = False) -> int:
    """Skip combining marks, variation selectors, emoji modifiers and tags, and joiners with what they join."""
    if pair_flags and j < len(text) and _is_regional_indicator(text[j]):
        j += 1
    while j < len(text) and _is_extender(text[j]):
        joins_next = text[j] == "\u200d" and j + 1 < len(text) and not text[j + 1].isspace()
        j += 2 if joins_next else 1
    return j


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _is_extender(char: str) -> bool:
    code = ord(char)
    return (
        char in _JOINERS
        or 0xFE00 <= code <= 0xFE0F
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
        or 0xE0100 <= code <= 0xE01EF
        or unicodedata.category(char).startswith("M")
    )


def _is_regional_indicator(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _is_ideograph(char: str) -> bool:
    """CJK ideographs, radicals and kana: each is its own token, since these scripts do not separate words."""
    code = ord(char)
    return (
        0x2E80 <= code <= 0x2FDF
        or 0x3040 <= code <= 0x30FF
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x3FFFF
    )
