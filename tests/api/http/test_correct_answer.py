"""The answer to ``POST /v1/correct`` is written without the response model, and is what the model would give: the
same fields, in its order, its null fields left out."""

from __future__ import annotations

import json

import pytest

from service.api.http.correction import correct_answer
from service.api.schemas import CorrectResponse
from service.pipeline.types import Correction, CorrectResult, EditOut, Timings

EDIT = EditOut("7335fb104802", 4, 2, "go", "went", ["goes"], 0, "grammar", "R:VERB:TENSE", "'go' → 'went'.", 0.87)
CORRECTIONS = [Correction("She went home.", [EDIT]), Correction("\ud800 Fine.", [])]  # a lone surrogate too


@pytest.mark.parametrize("experiment", [None, "versions"])
@pytest.mark.parametrize("single", [True, False])
def test_the_answer_is_the_response_model_s_own(single: bool, experiment: str | None) -> None:
    timings = Timings(0.001, 0.0, 0.0002, 0.004, 0.0015, 0.0003, 0.007)
    result = CorrectResult(CORRECTIONS[:1] if single else CORRECTIONS, "gec-default", "3", "beam", "beam", experiment)
    result.timings = timings
    answer = correct_answer(result, single)
    expected = CorrectResponse.model_validate(answer).model_dump(exclude_none=True)
    assert json.dumps(answer) == json.dumps(expected)  # the same keys in the same order, the same values
    assert ("experiment" in answer) == (experiment is not None)
    assert ("results" in answer) != single
