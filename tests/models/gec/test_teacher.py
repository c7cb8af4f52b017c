"""The teacher that cleans learner pairs: unrelated targets and targets both scorers find worse are flagged."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="build extra (torch) not installed")

from models.gec.corpora import Pair
from models.gec.teacher import (
    UNRELATED_SIMILARITY,
    WORSE_LM_MARGIN,
    WORSE_MODEL_LOGPROB,
    clean_pairs,
    judge,
    summary_rows,
)
from service.text.ngrams import NgramModel
from tests.conftest import FIXTURE_MODEL

LANGUAGE_MODEL = Path(__file__).resolve().parents[3] / "models" / "gec-default" / "ngrams.npz"
PAIRS = [
    Pair("I like it.", "I like it.", "fce"),
    Pair("Sincerely,", "Yours faithfully,", "wi_locness"),
    Pair("I have recieved your letter.", "I have received your letter.", "fce"),
    Pair("I thought I should to eat some medicine.", "I thought I shouldtake somemedicene.", "lang8"),
    Pair("word " * 200, "words " * 200, "nucle"),  # too long for the model to score
]


def test_each_flag_follows_its_scores() -> None:
    verdicts = judge(PAIRS, FIXTURE_MODEL / "hf", NgramModel.load(LANGUAGE_MODEL), threads=1)
    same, unrelated, corrected, garbled, long = verdicts
    assert same.flag == "" and same.similarity == 100.0  # an unchanged pair is not scored
    assert unrelated.similarity < UNRELATED_SIMILARITY and unrelated.flag == "unrelated"
    assert corrected.lm_gain > 0 and corrected.flag == ""  # the language model prefers the correction
    assert garbled.lm_gain <= -WORSE_LM_MARGIN  # run-together words the language model has never seen
    assert garbled.flag == ("worse" if garbled.model_logprob < WORSE_MODEL_LOGPROB else "")
    assert garbled.model_logprob < 0 and math.isnan(long.model_logprob) and long.flag == ""
    kept = clean_pairs(PAIRS, verdicts)
    assert PAIRS[1] not in kept and PAIRS[2] in kept
    rows = {row["corpus"]: row for row in summary_rows(PAIRS, verdicts)}
    assert rows["wi_locness"]["unrelated"] == 1 and rows["wi_locness"]["kept"] == 0
    assert rows["fce"]["kept"] == 2 and rows["fce"]["dropped %"] == 0.0
