"""The guard on what the model writes: degenerate outputs are caught, human corrections never are."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from models.gec.metrics import detokenize
from service.text.guard import REASONS, degenerate
from tests.text.strategies import LEARNER_PAIRS, texts

DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "dev"


@pytest.mark.parametrize(
    ("source", "output", "reason"),
    [
        ("He have a cat. She go home.", "He has a cat. Squ Squ Squ Squ Squ Squ", "repetition"),
        (
            "There would be many things to say about .",
            "There would be many things to say about about about.",
            "repetition",
        ),
        ("Hi. Hi. Hi. Hi.", "Hi. Hi. Hi. Hi. Hi. Hi. Hi.", "repetition"),
        ("Install it.", "The Chernobyl Chernobyl Chernobyl Chernobyl install it.", "repetition"),
        (
            "It costs a lot.",
            "It costs a lot of money that I have to pay for the house and the car and the boat now.",
            "length",
        ),
        ("I went to the shop yesterday and bought some bread and milk for us.", "I went.", "length"),
        (
            "I went to the shop yesterday and bought some bread.",
            "Das ist ein ganz anderer Satz ohne Bezug hier.",
            "overlap",
        ),
    ],
)
def test_degenerate_outputs_are_caught(source: str, output: str, reason: str) -> None:
    assert degenerate(source, output) == reason


@pytest.mark.parametrize(("source", "corrected"), LEARNER_PAIRS)
def test_learner_corrections_pass(source: str, corrected: str) -> None:
    assert degenerate(source, corrected) is None


def test_short_sources_may_be_rewritten_whole() -> None:
    """A salutation or a fragment: short enough that a full rewrite is a correction, not a hallucination."""
    assert degenerate("your sincerly", "Yours sincerely") is None
    assert degenerate("faithful", "sincerely") is None
    assert degenerate("Learn", "Learn.") is None


@settings(max_examples=300, deadline=None)
@given(texts)
def test_an_unchanged_output_always_passes(text: str) -> None:
    assert degenerate(text, text) is None


@settings(max_examples=300, deadline=None)
@given(texts, texts)
def test_any_output_gets_a_known_reason_or_none(source: str, output: str) -> None:
    assert degenerate(source, output) in (*REASONS, None)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


@pytest.mark.skipif(not DEV.exists(), reason="../shared/data not beside the checkout")
def test_no_human_correction_of_the_dev_sets_is_dropped() -> None:
    """The thresholds sit beyond every reference: JFLEG dev's four per sentence and FCE dev's one."""
    pairs = list(zip(_lines(DEV / "fce.dev.detok.src"), _lines(DEV / "fce.dev.detok.tgt"), strict=True))
    jfleg = [detokenize(s) for s in _lines(DEV / "jfleg.dev.src")]
    for k in range(4):
        pairs += zip(jfleg, [detokenize(r) for r in _lines(DEV / f"jfleg.dev.ref{k}")], strict=True)
    assert len(pairs) == 2210 + 4 * 754
    dropped = [(source, reference) for source, reference in pairs if degenerate(source, reference) is not None]
    assert dropped == []
