"""Which of a corrector's edits are right, and how right edits spread over the corrector's confidence.

An edit of a source text is right when some reference makes the same edit: the reference's edits are the word-level
diff of the source and the reference (``service.text.edits.extract_edits``, the diff the service itself makes), and
two edits are the same when they replace the same span (code-point offsets) by the same text. Offsets are those of
the text the corrector read: for tokenised sets (JFLEG) both the source and the references are detokenised first
(``models.gec.metrics.detokenize``), as ``gecserve eval`` does, so that the offsets agree.

``reliability`` bins labelled edits by their confidence (``BINS`` equal bins over 0..1) and gives each bin's share of
right edits: a well-calibrated corrector's share right in a bin is about the bin's confidence.
``calibration_error`` is the expected calibration error of those bins (the mean gap between confidence and share
right, weighted by edits).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from service.text.edits import extract_edits

BINS = 10

Key = tuple[int, int, str]
"""An edit as compared: its start, its end and its replacement."""


class Span(Protocol):
    """What labelling reads of an edit (``service.text.edits.Edit``, ``service.text.units.TypedEdit``)."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...

    @property
    def replacement(self) -> str: ...


def reference_edits(source: str, references: Sequence[str]) -> set[Key]:
    """Every edit some reference makes to ``source`` (all texts as the corrector read them: natural text)."""
    return {(e.start, e.end, e.replacement) for reference in references for e in extract_edits(source, reference)}


def is_right(edit: Span, gold: set[Key]) -> bool:
    """Whether a reference makes ``edit`` (``gold``: ``reference_edits`` of the edit's source)."""
    return (edit.start, edit.end, edit.replacement) in gold


def confidence_bin(confidence: float, bins: int = BINS) -> int:
    """The bin of ``confidence`` among ``bins`` equal bins over 0..1 (1.0 falls in the last; out of range: clipped)."""
    return min(bins - 1, max(0, int(confidence * bins)))


def reliability(labelled: Iterable[tuple[float, bool]], bins: int = BINS) -> list[dict[str, Any]]:
    """Per bin of confidence: its range, its edits, the right ones among them, their share (None without edits) and
    the edits' mean confidence (None without edits); ``labelled``: ``(confidence, right)`` per edit."""
    counts, right, total = [0] * bins, [0] * bins, [0.0] * bins
    for confidence, ok in labelled:
        b = confidence_bin(confidence, bins)
        counts[b] += 1
        right[b] += ok
        total[b] += confidence
    return [
        {
            "low": b / bins,
            "high": (b + 1) / bins,
            "edits": counts[b],
            "right": right[b],
            "share_right": right[b] / counts[b] if counts[b] else None,
            "mean_confidence": total[b] / counts[b] if counts[b] else None,
        }
        for b in range(bins)
    ]


def calibration_error(rows: Sequence[dict[str, Any]]) -> float | None:
    """The expected calibration error of ``reliability`` rows: the edits-weighted mean of |mean confidence - share
    right|; None without edits."""
    edits = sum(row["edits"] for row in rows)
    if not edits:
        return None
    return sum(row["edits"] * abs(row["mean_confidence"] - row["share_right"]) for row in rows if row["edits"]) / edits
