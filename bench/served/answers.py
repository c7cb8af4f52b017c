"""Checks of the service's answers, written independently of its code: a wrong answer is a load-test failure.

A correction is right when its edits, applied by their offsets (code points or UTF-16 units) to the
text that was sent, give the corrected text it names, each edit's ``original`` being what sits at
its span. A beam-search rewrite is right when it has as many sequences as asked, best first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class WrongAnswerError(Exception):
    """An answer that does not hold together (counted by Locust as a failure)."""


def rebuild(text: str, edits: Sequence[Mapping[str, Any]], unit: str) -> str:
    """``text`` with ``edits`` applied by their offsets in ``unit`` (``codepoint`` or ``utf16``)."""
    if unit == "utf16":
        units = text.encode("utf-16-le", "surrogatepass")
        size = len(units) // 2

        def cut(a: int, b: int) -> str:
            return units[2 * a : 2 * b].decode("utf-16-le", "surrogatepass")

    else:
        size = len(text)

        def cut(a: int, b: int) -> str:
            return text[a:b]

    out, last = [], 0
    for edit in sorted(edits, key=lambda e: e["offset"]):
        start, end = edit["offset"], edit["offset"] + edit["length"]
        if not last <= start <= end <= size:
            raise WrongAnswerError(f"edit outside the text or overlapping another: {dict(edit)}")
        if cut(start, end) != edit["original"]:
            raise WrongAnswerError(f"edit's original is not the text at its offsets: {dict(edit)}")
        out += [cut(last, start), edit["replacement"]]
        last = end
    out.append(cut(last, size))
    return "".join(out)


def check_correction(sent: str, corrected: str, edits: Sequence[Mapping[str, Any]], unit: str) -> None:
    """Raise ``WrongAnswerError`` unless ``edits`` turn ``sent`` into ``corrected``."""
    rebuilt = rebuild(sent, edits, unit)
    if rebuilt != corrected:
        raise WrongAnswerError(f"edits rebuild {rebuilt!r}, the answer says {corrected!r}")


def check_rewrites(sequences: Sequence[Mapping[str, Any]], asked: int) -> None:
    """Raise ``WrongAnswerError`` unless there are ``asked`` sequences, highest score first (beam search)."""
    if len(sequences) != asked:
        raise WrongAnswerError(f"{len(sequences)} sequences for {asked} asked")
    scores = [s["score"] for s in sequences]
    if scores != sorted(scores, reverse=True):
        raise WrongAnswerError(f"sequences not best first: scores {scores}")
