"""LanguageTool's annotated text (the ``data`` parameter of ``/v2/check``): the plain text to correct,
and spans of it mapped back to the original text, markup included.

``{"annotation": [{"text": "A "}, {"markup": "<b>"}, {"text": "tset"}, {"markup": "</b>"},
{"markup": "<p>", "interpretAs": "\\n\\n"}]}`` is the original text ``A <b>tset</b><p>``; the plain text
is the text parts and each markup's ``interpretAs`` (nothing when absent): ``A tset\\n\\n``. ``{"text": ...}``
alone is a text with no markup. As in LanguageTool, the offsets a client gets count the markup: a
span starts after any markup before it and ends before any markup after it, so "tset" above is at
5..9 of the original; an insertion goes at the end of the text before it, else at the start of the
text after it. A span that crosses markup takes the markup in. Offsets here are code points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class AnnotationError(ValueError):
    """A ``data`` value that is not LanguageTool's annotation format (the message says why)."""


@dataclass(frozen=True)
class _Part:
    plain_start: int
    plain_end: int
    original_start: int
    original_end: int
    is_text: bool


@dataclass(frozen=True)
class AnnotatedText:
    original: str  # what the client's offsets count: text and markup
    plain: str  # what the model reads: text, and markup's interpretAs
    parts: tuple[_Part, ...]

    @classmethod
    def of_text(cls, text: str) -> AnnotatedText:
        """A text with no markup: the plain text is the original."""
        return cls(text, text, (_Part(0, len(text), 0, len(text), True),))

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original ``[start, end)`` of the plain text's ``[start, end)`` (rules in the module docstring)."""
        if start == end:
            position = self._end(start)
            return position, position
        return self._start(start), self._end(end)

    def _start(self, position: int) -> int:
        texts = [p for p in self.parts if p.is_text]
        for part in texts:
            if part.plain_start <= position < part.plain_end:
                return part.original_start + position - part.plain_start
        return self._end(position)

    def _end(self, position: int) -> int:
        texts = [p for p in self.parts if p.is_text]
        for part in texts:
            if part.plain_start < position <= part.plain_end:
                return part.original_start + position - part.plain_start
        for part in texts:
            if part.plain_start == position:
                return part.original_start
        for part in self.parts:  # inside the interpretAs of a markup: the whole markup
            if part.plain_start <= position <= part.plain_end:
                return part.original_end
        return len(self.original)


def parse_data(data: Any) -> AnnotatedText:
    """The ``AnnotatedText`` of a decoded ``data`` value (LanguageTool's messages for what is wrong)."""
    if not isinstance(data, dict):
        raise AnnotationError("'data' must be a JSON object with a 'text' or an 'annotation' key")
    if "text" in data and "annotation" in data:
        raise AnnotationError("'data' key in JSON requires either 'text' or 'annotation' key, not both")
    if "text" in data:
        return AnnotatedText.of_text(_string(data, "text"))
    if "annotation" not in data:
        raise AnnotationError("'data' key in JSON requires 'text' or 'annotation' key")
    items = data["annotation"]
    if not isinstance(items, list):
        raise AnnotationError("'annotation' must be a list")
    parts: list[_Part] = []
    plain: list[str] = []
    original: list[str] = []
    plain_at = original_at = 0
    for item in items:
        if not isinstance(item, dict):
            raise AnnotationError(f"Only 'text' and 'markup' are supported in 'annotation' list: {item!r}")
        if "text" in item and "markup" in item:
            raise AnnotationError(f"Only either 'text' or 'markup' are supported in an object, not both: {item!r}")
        if "text" in item and "interpretAs" in item:
            raise AnnotationError(f"'text' cannot be used with 'interpretAs' (only 'markup' can): {item!r}")
        if "text" in item:
            shown = written = _string(item, "text")
        elif "markup" in item:
            written = _string(item, "markup")
            shown = _string(item, "interpretAs") if "interpretAs" in item else ""
        else:
            raise AnnotationError(f"Only 'text' and 'markup' are supported in 'annotation' list: {item!r}")
        parts.append(_Part(plain_at, plain_at + len(shown), original_at, original_at + len(written), "text" in item))
        plain.append(shown)
        original.append(written)
        plain_at += len(shown)
        original_at += len(written)
    return AnnotatedText("".join(original), "".join(plain), tuple(parts))


def _string(item: dict[str, Any], key: str) -> str:
    value = item[key]
    if not isinstance(value, str):
        raise AnnotationError(f"'{key}' must be a string: {item!r}")
    return value
