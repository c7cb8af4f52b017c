"""The frontier's thresholds: the edits kept at a threshold give the text the service answers with that
min_confidence, for any threshold, from one correction with every edit kept (on sentences where no model edit the
threshold holds back overrode a rule's, which the service then makes: ``units.with_rules``)"""

from __future__ import annotations

from pathlib import Path

import pytest

from models.gec.frontier import kept_text
from service.engine.engine import Engine
from service.engine.offline import correct_texts, model_confidence, model_review, model_speller

MODEL = Path(__file__).resolve().parents[3] / "models" / "gec-default"
DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


@pytest.fixture(scope="module")
def texts() -> list[str]:
    lines = (DATA / "dev" / "fce.dev.detok.src").read_text(encoding="utf-8").splitlines()
    return [*lines[:40], "I bought a umbrella yesterday.", "This dunder method is primariy used for checkpoints."]


def test_a_threshold_keeps_what_the_service_answers_with_it(texts: list[str]) -> None:
    engine = Engine(MODEL)
    served = {"speller": model_speller(MODEL), "review": model_review(MODEL), "confidence": model_confidence(MODEL)}
    every = correct_texts(engine, texts, min_confidence=0.0, **served)
    changed = set()
    for threshold in (0.0, 0.2, 0.3, 0.45, 0.7, 1.0):
        answered = correct_texts(engine, texts, min_confidence=threshold, **served)
        kept = [kept_text(text, assembled, threshold) for text, assembled in zip(texts, every, strict=True)]
        assert kept == [assembled.text for assembled in answered]
        changed.add(sum(a != b for a, b in zip(texts, kept, strict=True)))
    assert len(changed) >= 3  # the thresholds keep different edits: the comparison is not of unchanged texts
