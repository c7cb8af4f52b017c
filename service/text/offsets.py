"""Code-point offsets -> UTF-16 code-unit offsets, for editors (JavaScript) that count UTF-16 code units.

Build one ``Utf16Index`` per paragraph (O(n) once, nothing at all for text without astral characters); each lookup
is then O(1). Characters above U+FFFF take two code units; everything else, lone surrogates included, takes one.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate

from service.text.edits import Edit


class Utf16Index:
    """Converts code-point offsets ``0 <= i <= len(text)`` of one text to UTF-16 code-unit offsets."""

    def __init__(self, text: str) -> None:
        self._length = len(text)
        units = len(text.encode("utf-16-le", "surrogatepass")) // 2
        # _before[i]: number of astral characters in text[:i]; None when there are none.
        self._before: list[int] | None = None
        if units != len(text):
            self._before = list(accumulate((ord(c) > 0xFFFF for c in text), initial=0))

    def offset(self, index: int) -> int:
        """UTF-16 offset of code-point offset ``index``."""
        if not 0 <= index <= self._length:
            raise IndexError(f"offset {index} outside 0..{self._length}")
        return index if self._before is None else index + self._before[index]

    __call__ = offset

    def span(self, start: int, end: int) -> tuple[int, int]:
        """UTF-16 ``(offset, length)`` of the code-point span ``[start, end)``."""
        first = self.offset(start)
        return first, self.offset(end) - first

    def edit_span(self, edit: Edit) -> tuple[int, int]:
        """UTF-16 ``(offset, length)`` of an edit's span."""
        return self.span(edit.start, edit.end)


def utf16_offsets(text: str) -> Callable[[int], int]:
    """A converter from code-point offsets of ``text`` to UTF-16 code-unit offsets (see ``Utf16Index``)."""
    return Utf16Index(text).offset


def utf16_length(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (what JavaScript's ``String.length`` reports)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
