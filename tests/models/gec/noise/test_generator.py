"""NoiseGenerator: determinism, p_clean, naturalness of the output, type distribution, CLI."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from models.gec.noise import generator as gm
from models.gec.noise.generator import DEFAULT_CALIBRATION, NoiseGenerator, load_calibration

SENTENCES = [
    "She has lived in London since 2010.",
    "I think that the people in my town are very friendly, and they always help tourists.",
    "Although it was raining, we decided to go to the beach with our children.",
    "He can also speak three languages, but he doesn't like to discuss his work.",
    "Most students enjoy playing football after school because it is fun.",
    "The information you gave me was much better than I expected.",
    "I don't know where the station is, so I will ask someone who lives here.",
    "If it rains tomorrow, we'll stay at home and watch a film.",
    "Their house is bigger than ours; it's also the most beautiful house on the street.",
    "My friend's brother has gone to Paris to study English.",
    "The committee approved the new budget after a long discussion.",
    "Many scientists believe that the climate is changing faster than expected.",
    "We visited the museum, which was full of old paintings and sculptures.",
    "The children were playing in the garden when it started to snow.",
    "According to the report, the company lost money for the third year in a row.",
    "He told me that he would call back later, but he never did.",
]


def sample(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(SENTENCES) for _ in range(n)]


def test_deterministic_by_seed() -> None:
    a = [NoiseGenerator(seed=7).corrupt(s) for s in SENTENCES]
    g1, g2 = NoiseGenerator(seed=7), NoiseGenerator(seed=7)
    b = [g1.corrupt(s) for s in SENTENCES]
    c = [g2.corrupt(s) for s in SENTENCES]
    assert b == c
    assert a[0] == b[0]
    d = [NoiseGenerator(seed=8).corrupt(s) for s in SENTENCES]
    g3 = NoiseGenerator(seed=8)
    assert [g3.corrupt(s) for s in SENTENCES] != b or d != a


def test_deterministic_with_explicit_rng() -> None:
    gen = NoiseGenerator(seed=1)
    for s in SENTENCES:
        assert gen.corrupt(s, random.Random(42)) == gen.corrupt(s, random.Random(42))


def test_p_clean_one_returns_input() -> None:
    gen = NoiseGenerator(p_clean=1.0, seed=0)
    for s in [*SENTENCES, "  padded  ", "", "???"]:
        assert gen.corrupt(s) == s


def test_p_clean_zero_changes_nearly_everything() -> None:
    gen = NoiseGenerator(p_clean=0.0, seed=3)
    sents = sample(300)
    changed = sum(gen.corrupt(s) != s for s in sents)
    assert changed >= 0.95 * len(sents)


def test_default_share_of_clean_sentences() -> None:
    gen = NoiseGenerator(seed=5)  # p_clean=0.15
    sents = sample(1000, seed=1)
    unchanged = sum(gen.corrupt(s) == s for s in sents) / len(sents)
    assert 0.1 < unchanged < 0.25


def test_output_stays_natural_text() -> None:
    gen = NoiseGenerator(p_clean=0.0, seed=11)
    for s in sample(500, seed=2):
        out, types = gen.corrupt_with_types(s)
        assert out and out == out.strip()
        assert "  " not in out, (s, out, types)
        assert " ," not in out and " ." not in out, (s, out, types)
        assert 1 <= len(types) <= gen.max_edits


def test_whitespace_around_sentence_is_kept() -> None:
    gen = NoiseGenerator(p_clean=0.0, seed=0)
    out = gen.corrupt("  The cat sat on the mat.\n")
    assert out.startswith("  ")
    assert out.endswith("\n") and not out.endswith(" \n")


def test_edits_histogram_is_used() -> None:
    cal = dict(DEFAULT_CALIBRATION, mapped_edits_hist=[0.0, 1.0])  # always exactly one edit
    gen = NoiseGenerator(calibration=cal, p_clean=0.0, seed=0)
    counts = Counter(len(gen.corrupt_with_types(s)[1]) for s in sample(200))
    assert counts[1] >= 190


def test_more_edits_for_longer_sentences() -> None:
    gen = NoiseGenerator(seed=0)
    rng = random.Random(0)
    short = sum(gen.num_edits(8, rng) for _ in range(2000))
    long = sum(gen.num_edits(40, rng) for _ in range(2000))
    assert long > 1.5 * short
    assert all(1 <= gen.num_edits(n, rng) <= gen.max_edits for n in (3, 10, 100))


def test_type_distribution_follows_weights() -> None:
    weights = {name: 0.0 for name in gm.ERROR_FUNCTIONS}
    weights.update({"det_missing": 3.0, "punct_missing": 1.0})
    cal = dict(DEFAULT_CALIBRATION, mapped_edits_hist=[0.0, 1.0])
    gen = NoiseGenerator(calibration=cal, p_clean=0.0, seed=0, type_weights=weights)
    counts: Counter[str] = Counter()
    text = "Yes, the cat sat on a mat, and the dog slept."  # both types always apply
    for _ in range(2000):
        counts.update(gen.corrupt_with_types(text)[1])
    ratio = counts["det_missing"] / counts["punct_missing"]
    assert 2.4 < ratio < 3.7
    assert set(counts) == {"det_missing", "punct_missing"}


def test_default_weights_order_of_applied_types() -> None:
    gen = NoiseGenerator(p_clean=0.0, seed=9)
    counts: Counter[str] = Counter()
    for s in sample(1500, seed=4):
        counts.update(gen.corrupt_with_types(s)[1])
    # the most frequent learner error type (missing punctuation) is also among the most
    # frequently generated ones, and every type shows up
    top = [t for t, _ in counts.most_common(6)]
    assert "punct_missing" in top
    assert len(counts) >= 20


def test_unknown_type_weight_rejected() -> None:
    with pytest.raises(ValueError):
        NoiseGenerator(type_weights={"nope": 1.0})


def test_misspellings_are_used() -> None:
    weights = {name: 0.0 for name in gm.ERROR_FUNCTIONS}
    weights["spelling"] = 1.0
    gen = NoiseGenerator(
        misspellings={"because": ["becouse"]},
        p_clean=0.0,
        seed=0,
        type_weights=weights,
        calibration=dict(DEFAULT_CALIBRATION, mapped_edits_hist=[0.0, 1.0]),
    )
    outs = [gen.corrupt("It was because of him.") for _ in range(50)]
    assert outs.count("It was becouse of him.") >= 30


def test_load_calibration_default_and_file(tmp_path: Path) -> None:
    assert "type_weights" in load_calibration()
    path = tmp_path / "cal.json"
    path.write_text('{"type_weights": {"spelling": 1.0}, "mean_tokens": 10}')
    cal = load_calibration(path)
    gen = NoiseGenerator(calibration=cal)
    assert max(gen.weights, key=gen.weights.__getitem__) == "spelling"


def test_cli_keeps_order_and_line_count(tmp_path: Path) -> None:
    src = tmp_path / "clean.txt"
    src.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    out = tmp_path / "noisy.txt"
    assert gm.main(["--in", str(src), "--out", str(out), "--seed", "3", "--p-clean", "1"]) == 0
    assert out.read_text(encoding="utf-8") == src.read_text(encoding="utf-8")
    out2 = tmp_path / "noisy2.txt"
    out3 = tmp_path / "noisy3.txt"
    gm.main(["--in", str(src), "--out", str(out2), "--seed", "3"])
    gm.main(["--in", str(src), "--out", str(out3), "--seed", "3"])
    lines = out2.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(SENTENCES)
    assert out2.read_text() == out3.read_text()


def test_default_rates_match_packaged_calibration() -> None:
    packaged = load_calibration(gm.PACKAGED_CALIBRATION)
    for name, weight in packaged["type_weights"].items():
        assert DEFAULT_CALIBRATION["type_weights"][name] == pytest.approx(weight, abs=1e-3)
    assert DEFAULT_CALIBRATION["mapped_edits_hist"] == pytest.approx(packaged["mapped_edits_hist"], abs=1e-3)
