"""``gecserve eval`` on the tiny model: GLEU and change figures from real decoding."""

from __future__ import annotations

import json

from models.gec.evaluate import evaluate, main
from tests.conftest import FIXTURE_MODEL
from tests.engine.conftest import engine_for

SOURCES = ["i saw a apple yesterday", "I saw an apple yesterday.", "Tom found an honest owl."]
REFS = ["I saw an apple yesterday.", "I saw an apple yesterday.", "Tom found an honest owl."]


def test_evaluate_scores_corrections_and_kept_sentences() -> None:
    result = evaluate(engine_for(), SOURCES, [REFS], tokenized=False)
    assert result["hypotheses"][0] == "I saw an apple yesterday."
    assert result["sentences"] == 3 and result["needs_no_change"] == 2
    kept = sum(h == s for h, s, r in zip(result["hypotheses"], SOURCES, REFS, strict=True) if s == r) / 2
    assert result["unchanged_kept"] == kept
    assert result["exact_match"] == sum(h == r for h, r in zip(result["hypotheses"], REFS, strict=True)) / 3
    source_only = evaluate(engine_for(), SOURCES, [SOURCES], tokenized=False)
    assert result["gleu"] > 0 and source_only["changed"] == result["changed"]


def test_eval_cli_writes_outputs_and_figures(tmp_path, capsys) -> None:
    (tmp_path / "src").write_text("\n".join(SOURCES) + "\n")
    (tmp_path / "ref").write_text("\n".join(REFS) + "\n")
    args = ["--model", str(FIXTURE_MODEL), "--src", str(tmp_path / "src"), "--refs", str(tmp_path / "ref")]
    code = main([*args, "--out", str(tmp_path / "out"), "--json", str(tmp_path / "figures.json"), "--threads", "1"])
    assert code == 0
    figures = json.loads((tmp_path / "figures.json").read_text())
    assert figures["sentences"] == 3 and 0 <= figures["gleu"] <= 100  # percent
    assert (tmp_path / "out").read_text().splitlines()[0] == "I saw an apple yesterday."
    assert "gleu" in capsys.readouterr().out
