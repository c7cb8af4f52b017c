"""A confidence for every edit: read from the model's token log-probabilities, the language model, the spelling
stage and the sentence, combined by a fitted logistic regression (``service.text.confidence``), and the edits under
the threshold held back by ``units.assemble``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.gec.language_model import count_ngrams
from service.text.confidence import (
    FEATURES,
    UNCALIBRATED,
    ConfidenceModel,
    SentenceEvidence,
    TokenScores,
    features,
    unit_evidence,
)
from service.text.edits import extract_edits
from service.text.units import Scoring, assemble, plan_units
from tests.text.char_codec import CHARS


def _scores(text: str, logprobs: list[float]) -> TokenScores:
    """One token a word (with the space before it)."""
    ends, position = [], 0
    for i, word in enumerate(text.split(" ")):
        position += len(word) + (1 if i else 0)
        ends.append(position)
    return TokenScores(text, tuple(ends), tuple(logprobs))


def test_the_lowest_token_log_probability_at_an_edit_and_at_the_token_after_it() -> None:
    scores = _scores("She goes to school", [-0.1, -2.0, -0.2, -0.3])
    assert scores.lowest(4, 8) == -2.0  # "goes"
    assert scores.lowest(12, 18) == -0.3  # "school" (the last token: nothing after it)
    assert scores.lowest(9, 9) == pytest.approx(-0.3)  # a deletion inside " to": it and the token after it
    assert scores.lowest(0, 0) == pytest.approx(-2.0)
    assert _scores("x", [-99.0]).lowest(0, 1) == -10.0  # floored


@given(st.lists(st.floats(-20, 0), min_size=1, max_size=8), st.data())
def test_lowest_is_one_of_the_tokens_around_the_span(logprobs: list[float], data) -> None:
    text = " ".join("w" * (i + 1) for i in range(len(logprobs)))
    scores = _scores(text, logprobs)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    assert scores.lowest(start, end) in [max(-10.0, p) for p in logprobs]


def test_evidence_of_the_model_s_edits_and_of_edits_it_did_not_make() -> None:
    source = "She go to school every days."
    model_output = "She goes to school every day."
    final = "She goes to the school every day."  # the review added "the"
    edits = extract_edits(source, final)
    scores = _scores(model_output, [-0.1, -0.5, -0.1, -0.1, -0.1, -1.5])
    evidence = unit_evidence(source, final, edits, ["R:VERB:SVA", "M:DET", "R:NOUN:NUM"], [False] * 3, scores, None)
    assert [e.model_logprob for e in evidence] == [-0.5, None, -1.5]
    assert [e.lexical for e in evidence] == ["morphology", "closed", "morphology"]
    assert all(e.sentence.log_edits == pytest.approx(math.log(3)) for e in evidence)


def test_sentence_evidence_tells_rare_words_and_unknown_ones() -> None:
    learner = SentenceEvidence.of("I like very much the facilitis and the acsident", 2)
    professional = SentenceEvidence.of("The licensee may sublicense the indemnification clauses", 1)
    assert learner.unknown_share > 0 and learner.mean_zipf > professional.mean_zipf
    assert professional.rare_share > learner.rare_share


def test_a_fit_must_name_this_service_s_features(tmp_path: Path) -> None:
    path = tmp_path / "confidence.json"
    path.write_text(json.dumps({"features": list(FEATURES), "weights": [0.0] * len(FEATURES)}))
    assert ConfidenceModel.load(path).weights == (0.0,) * len(FEATURES)
    path.write_text(json.dumps({"features": ["bias", "other"], "weights": [0.0, 1.0]}))
    with pytest.raises(ValueError, match="features"):
        ConfidenceModel.load(path)


def test_uncalibrated_is_the_model_s_own_probability_and_a_fit_a_logistic_of_the_features() -> None:
    source, final = "He go home.", "He goes home."
    (edit,) = extract_edits(source, final)
    scores = _scores(final, [-0.1, -0.7, -0.1])
    (evidence,) = unit_evidence(source, final, [edit], ["R:VERB:SVA"], [False], scores, None)
    assert UNCALIBRATED.confidence(edit, evidence) == round(math.exp(-0.7), 3)
    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("model_logprob")] = 2.0
    expected = 1 / (1 + math.exp(-2.0 * -0.7))
    assert ConfidenceModel(tuple(weights)).confidence(edit, evidence) == round(expected, 3)
    assert len(features(edit, evidence)) == len(FEATURES)


def _plan(paragraph: str):
    return plan_units(paragraph, CHARS, 100)


def test_edits_under_the_threshold_are_held_back_and_not_applied() -> None:
    paragraph = "He go home. She is good in it."  # "in": no rule of the rule stage corrects it
    units = _plan(paragraph)
    outputs = ["He goes home.", "She is good at it."]
    scores = [_scores(outputs[0], [-0.05, -0.05, -0.05]), _scores(outputs[1], [-0.05, -0.05, -0.05, -3.0, -0.05])]
    kept_all = assemble(paragraph, units, outputs, None, scores, Scoring(threshold=0.0))
    assert kept_all.text == "He goes home. She is good at it." and not kept_all.held
    some = assemble(paragraph, units, outputs, None, scores, Scoring(threshold=0.5))
    assert some.text == "He goes home. She is good in it."
    assert [e.replacement for e in some.held] == ["at"] and some.held[0].confidence < 0.5
    assert all(0.0 <= e.confidence <= 1.0 for e in [*some.edits, *some.held])


def test_a_word_moved_is_kept_or_held_back_whole() -> None:
    paragraph = "I like very much football."
    (unit,) = _plan(paragraph)
    output = "I like football very much."
    scores = _scores(output, [-0.05, -0.05, -4.0, -0.05, -0.05])  # unsure where "football" goes
    held = assemble(paragraph, [unit], [output], None, [scores], Scoring(threshold=0.5))
    assert held.text == paragraph  # never "I like very much."
    assert len({e.confidence for e in held.held}) == 1


def test_half_a_move_is_held_back_whatever_its_evidence() -> None:
    source = "I like very much football."
    model_output = "I like football very much."
    final = "I like very much."  # the review took the insertion back
    edits = extract_edits(source, final)
    scores = _scores(model_output, [-0.01] * 5)
    (evidence,) = unit_evidence(source, final, edits, ["U:NOUN"], [False], scores, None)
    assert evidence.half_move
    assert ConfidenceModel((5.0,) + (0.0,) * (len(FEATURES) - 1)).confidence(edits[0], evidence) == 0.0
    (whole,) = unit_evidence(source, final, edits, ["U:NOUN"], [False], _scores(final, [-0.01] * 4), None)
    assert not whole.half_move  # a deletion the model made as such


def test_a_spelling_edit_has_the_spelling_evidence_whether_the_stage_or_the_model_made_it() -> None:
    source = "I recieved the pakage today."
    final = "I received the package today."
    edits = extract_edits(source, final)
    letters_changed = {("recieved", "received"): -2.0, ("pakage", "package"): -4.0}
    evidence = unit_evidence(
        source, final, edits, ["R:SPELL", "R:SPELL"], [True, False], None, None, lambda t, m: letters_changed[(t, m)]
    )
    assert [e.channel for e in evidence] == [-2.0, -4.0]  # the model's "pakage" too, not only the stage's
    rows = [dict(zip(FEATURES, features(edit, e), strict=True)) for edit, e in zip(edits, evidence, strict=True)]
    assert [row["spelled"] for row in rows] == [1.0, 0.0]
    assert [row["spelling_distance"] for row in rows] == [1.0, 1.0]
    assert [row["spelling_channel"] for row in rows] == [-2.0, -4.0]
    (article,) = unit_evidence("I saw cat.", "I saw a cat.", extract_edits("I saw cat.", "I saw a cat."), ["M:DET"],
                               [False], None, None, lambda t, m: -1.0)  # fmt: skip
    assert article.channel == 0.0  # not a spelling edit


def test_the_fluency_of_a_sentence_as_written_is_read_from_the_language_model() -> None:
    corpus = ["She went to the market on Monday.", "He went to the park on Friday."] * 20
    lm = count_ngrams(corpus, order=3, min_count=2)
    seen = "She went to the market on Friday."
    garbled = "She market the went on to Friday."
    fluent, jumbled = (
        unit_evidence(text, text + "!", extract_edits(text, text + "!"), ["M:PUNCT"], [False], None, lm)[0].fluency
        for text in (seen, garbled)
    )
    assert fluent[0] > jumbled[0] and fluent[1] >= jumbled[1]
    assert all(value <= 0.0 for value in (*fluent, *jumbled))  # log10 probabilities
    (alone,) = unit_evidence(seen, seen + "!", extract_edits(seen, seen + "!"), ["M:PUNCT"], [False], None, None)
    assert alone.fluency == (0.0, 0.0)  # no language model
