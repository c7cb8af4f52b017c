"""Calibration from a tiny M2 snippet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.gec.noise import calibrate as cb
from models.gec.noise.generator import NoiseGenerator

M2 = """\
S I has a apple .
A 1 2|||R:VERB:SVA|||have|||REQUIRED|||-NONE-|||0
A 2 3|||R:DET|||an|||REQUIRED|||-NONE-|||0

S This is fine .
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S I like there house becuase it is big
A 2 3|||R:OTHER|||their|||REQUIRED|||-NONE-|||0
A 4 5|||R:SPELL|||because|||REQUIRED|||-NONE-|||0
A 8 8|||M:PUNCT|||.|||REQUIRED|||-NONE-|||0

S He go to the the school , i think .
A 1 2|||R:VERB:SVA|||goes|||REQUIRED|||-NONE-|||0
A 4 5|||U:DET||||||REQUIRED|||-NONE-|||0
A 0 1|||UNK|||He|||REQUIRED|||-NONE-|||0
A 7 8|||R:ORTH|||I|||REQUIRED|||-NONE-|||0
A 2 3|||R:PREP|||at|||REQUIRED|||-NONE-|||1

S We make a lot of fun .
A 1 2|||R:VERB|||have|||REQUIRED|||-NONE-|||0
A 4 6|||R:OTHER|||great time|||REQUIRED|||-NONE-|||0
"""


@pytest.fixture
def m2_file(tmp_path: Path) -> Path:
    path = tmp_path / "train" / "m2" / "tiny.m2"
    path.parent.mkdir(parents=True)
    path.write_text(M2.rstrip("\n"), encoding="utf-8")  # no blank line at the very end
    return path


def test_parse_m2(m2_file: Path) -> None:
    blocks = list(cb.parse_m2(m2_file.read_text().splitlines(keepends=True)))
    assert len(blocks) == 5
    tokens, edits = blocks[0]
    assert tokens == ["I", "has", "a", "apple", "."]
    assert [(e.start, e.end, e.etype, e.correction) for e in edits] == [
        (1, 2, "R:VERB:SVA", "have"),
        (2, 3, "R:DET", "an"),
    ]
    assert blocks[1][1] == []  # noop
    assert all(e.etype != "UNK" and e.annotator == 0 for e in blocks[3][1])  # first annotator
    assert len(blocks[3][1]) == 3


def test_classify() -> None:
    toks = ["I", "like", "there", "house"]
    assert cb.classify(toks, cb.Edit(2, 3, "R:OTHER", "their")) == "confusion"
    assert cb.classify(toks, cb.Edit(0, 1, "R:ORTH", "i")) == "capitalisation"
    assert cb.classify(["a", "lot"], cb.Edit(0, 2, "R:ORTH", "alot")) == "spacing"
    assert cb.classify(["the", "the", "cat"], cb.Edit(1, 2, "U:DET", "")) == "repeated_word"
    assert cb.classify(["a", "cat"], cb.Edit(0, 1, "U:DET", "")) == "det_extra"
    assert cb.classify(["I", "go"], cb.Edit(1, 2, "R:OTHER", "went there")) is None
    assert cb.classify(["I", "dont"], cb.Edit(1, 2, "R:CONTR", "do n't")) == "contraction"


def test_rates(m2_file: Path) -> None:
    cal = cb.calibrate([m2_file])
    rates = cal.rates()
    assert rates["sentences"] == 5
    assert rates["edits"] == 10  # noop and UNK skipped, annotator 1 ignored
    assert rates["zero_edit_share"] == pytest.approx(0.2)
    assert rates["mean_edits"] == pytest.approx(2.0)
    hist = rates["edits_hist"]
    assert len(hist) == cb.MAX_EDITS_BUCKET + 1
    assert hist[:4] == pytest.approx([0.2, 0.0, 0.4, 0.4])
    assert sum(hist) == pytest.approx(1.0)
    weights = rates["type_weights"]
    # R:OTHER "great time" is not simulated; everything else maps to a generator type
    assert rates["mapped_share"] == pytest.approx(0.9)
    assert weights["verb_sva"] == pytest.approx(2 / 9, abs=1e-5)
    for name in (
        "det_wrong",
        "confusion",
        "spelling",
        "punct_missing",
        "repeated_word",
        "capitalisation",
        "word_choice",
    ):
        assert weights[name] == pytest.approx(1 / 9, abs=1e-5), name
    assert sum(weights.values()) == pytest.approx(1.0, abs=1e-4)
    assert set(weights) <= set(cb.ERRANT_TO_GENERATOR.values()) | {
        "confusion",
        "capitalisation",
        "spacing",
        "repeated_word",
        "contraction",
    }
    # numbers and type names only: no text from the corpus
    blob = json.dumps(rates)
    assert "apple" not in blob and "becuase" not in blob
    assert cal.misspelling_dict() == {"because": ["becuase"]}


def test_rates_drive_the_generator(m2_file: Path) -> None:
    gen = NoiseGenerator(calibration=cb.calibrate([m2_file]).rates(), seed=0)
    assert gen.weights["verb_sva"] > gen.weights["det_missing"]


def test_cli(m2_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "rates.json"
    spell = tmp_path / "spell.json"
    data_dir = m2_file.parents[2]
    assert cb.main(["--data", str(data_dir), "--out", str(out), "--spelling-out", str(spell)]) == 0
    assert json.loads(out.read_text())["sentences"] == 5
    assert json.loads(spell.read_text()) == {"because": ["becuase"]}


def test_packaged_calibration_is_numbers_only() -> None:
    path = Path(cb.__file__).with_name("calibration.json")
    rates = json.loads(path.read_text())
    assert 0.0 < rates["zero_edit_share"] < 1.0
    assert sum(rates["type_weights"].values()) == pytest.approx(1.0, abs=1e-3)
    for value in rates["type_weights"].values():
        assert isinstance(value, float)
