"""Tests for sentence-level change statistics and the text table."""

from __future__ import annotations

import pytest

from models.gec.metrics.report import ChangeStats, change_stats


def test_change_stats() -> None:
    sources = ["a b c", "fine as is", "x y", "also fine"]
    references = ["a b d", "fine as is", "x z", "also  fine "]  # whitespace is not an edit
    hypotheses = ["a b d", "fine as is", "x y", "also fine here"]
    stats = change_stats(sources, references, hypotheses)
    assert stats == ChangeStats(
        n_sentences=4,
        n_exact=2,
        n_changed=2,
        n_need_no_change=2,
        n_kept_when_no_change=1,
        exact_match=0.5,
        changed_rate=0.5,
        keep_rate_no_change=0.5,
    )
    assert stats.as_dict()["n_exact"] == 2


def test_change_stats_whitespace_only_is_unchanged() -> None:
    stats = change_stats(["a  b"], ["a b"], [" a b\n"])
    assert stats.n_changed == 0
    assert stats.exact_match == 1.0
    assert stats.keep_rate_no_change == 1.0


def test_change_stats_no_sentence_needs_no_change() -> None:
    stats = change_stats(["a"], ["b"], ["a"])
    assert stats.n_need_no_change == 0
    assert stats.keep_rate_no_change is None
    assert stats.exact_match == 0.0


def test_change_stats_empty_and_mismatch() -> None:
    empty = change_stats([], [], [])
    assert empty.n_sentences == 0
    assert empty.exact_match is None
    with pytest.raises(ValueError, match="length mismatch"):
        change_stats(["a"], [], ["a"])
