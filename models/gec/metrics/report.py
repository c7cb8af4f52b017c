"""Sentence-level change figures for a one-reference dev set.

``change_stats`` answers "how often does the system do the right amount of editing": exact match
with the reference, how often it leaves alone the sentences that need no change, and how much of
the input it changes at all. Sentences are compared after collapsing runs of whitespace and
trimming, so extra spaces alone are not edits; pass all three sides in the same form (all
tokenised or all natural text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["ChangeStats", "change_stats"]


@dataclass(frozen=True)
class ChangeStats:
    """Counts and rates; a rate is ``None`` where its denominator is 0."""

    n_sentences: int
    n_exact: int  # hypothesis == reference
    n_changed: int  # hypothesis != source
    n_need_no_change: int  # reference == source
    n_kept_when_no_change: int  # reference == source and hypothesis == source
    exact_match: float | None  # n_exact / n_sentences
    changed_rate: float | None  # n_changed / n_sentences
    keep_rate_no_change: float | None  # n_kept_when_no_change / n_need_no_change

    def as_dict(self) -> dict[str, Any]:
        """Field name -> value, e.g. as a table row or for JSON."""
        return asdict(self)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def change_stats(sources: Sequence[str], references: Sequence[str], hypotheses: Sequence[str]) -> ChangeStats:
    """Exact-match, keep-when-correct and change rates of ``hypotheses`` (one per source)."""
    if not len(sources) == len(references) == len(hypotheses):
        raise ValueError(
            f"length mismatch: {len(sources)} sources, {len(references)} references, {len(hypotheses)} hypotheses"
        )
    n_exact = n_changed = n_need_no_change = n_kept = 0
    for src, ref, hyp in zip(sources, references, hypotheses, strict=True):
        src, ref, hyp = _norm(src), _norm(ref), _norm(hyp)
        n_exact += hyp == ref
        n_changed += hyp != src
        if ref == src:
            n_need_no_change += 1
            n_kept += hyp == src
    n = len(sources)
    return ChangeStats(
        n_sentences=n,
        n_exact=n_exact,
        n_changed=n_changed,
        n_need_no_change=n_need_no_change,
        n_kept_when_no_change=n_kept,
        exact_match=_rate(n_exact, n),
        changed_rate=_rate(n_changed, n),
        keep_rate_no_change=_rate(n_kept, n_need_no_change),
    )
