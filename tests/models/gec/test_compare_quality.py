"""Correction in rounds stops at a fixed point (or at the most rounds), with a rule and with the real engine."""

from __future__ import annotations

from models.gec.compare_quality import MAX_ROUNDS, in_rounds
from service.engine.engine import Engine
from service.engine.offline import correct_texts
from tests.conftest import FIXTURE_MODEL


def _drop_one_very(texts: list[str]) -> list[str]:
    return [text.replace("very ", "", 1) for text in texts]


def test_rounds_stop_once_nothing_changes() -> None:
    assert in_rounds(_drop_one_very, ["a very very good day", "fine"]) == (["a good day", "fine"], 3)
    assert in_rounds(_drop_one_very, ["fine"]) == (["fine"], 1)


def test_rounds_stop_at_the_most_rounds() -> None:
    texts, rounds = in_rounds(_drop_one_very, ["very " * 9 + "good"])
    assert rounds == MAX_ROUNDS and texts == ["very " * (9 - MAX_ROUNDS) + "good"]


def test_the_engine_s_rounds_end_at_a_fixed_point() -> None:
    engine = Engine(FIXTURE_MODEL, variant="int8")

    def correct(texts: list[str]) -> list[str]:
        return [c.text for c in correct_texts(engine, texts)]

    texts = ["i saw a apple yesterday", "My friend my friend bought a umbrella", "Tom found an honest owl."]
    final, rounds = in_rounds(correct, texts, max_rounds=5)
    assert rounds < 5 and correct(final) == final
