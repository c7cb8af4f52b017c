"""The keep bias: aggressive decoding still equals greedy under any bias, each source decodes with its own, a
large bias keeps the source as written, and the bias moves how much the model edits in one direction; the bias a
decoding is given is worked out in one place (``keep_bias_for``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine.decoding.alignment import Alignment
from service.engine.decoding.params import DecodeParams
from service.engine.engine import STRATEGIES, Engine, keep_bias_for, takes_keep_bias
from service.engine.manifest import ModelManifest, level_keep_bias
from service.engine.offline import correct_texts
from service.engine.runtime import RuntimeOptions
from service.text.policy import LEVELS
from tests.conftest import DEFAULT_MODEL, DEV_DATA
from tests.engine.conftest import SENTENCES, engine_for
from tests.engine.test_aggressive import VARIANTS, text


def _tokens(results) -> list[list[int]]:
    return [r.tokens for r in results]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    texts=st.lists(text, min_size=1, max_size=6),
    variant=st.sampled_from(VARIANTS),
    params=st.sampled_from([DecodeParams(), DecodeParams(pass_cost=0), DecodeParams(max_draft=3)]),
)
def test_aggressive_equals_greedy_under_any_keep_bias(data, texts, variant, params: DecodeParams) -> None:
    engine = engine_for(*variant)
    sources = [s[: engine.max_source_tokens] for s in engine.codec.encode_batch(texts)]
    biases = data.draw(st.lists(st.floats(-6, 6), min_size=len(sources), max_size=len(sources)))
    greedy = engine.generate(sources, "greedy", params, keep_biases=biases)
    aggressive = engine.generate(sources, "aggressive", params, keep_biases=biases)
    assert _tokens(aggressive) == _tokens(greedy)
    alone = [engine.generate([s], "greedy", keep_biases=[b])[0] for s, b in zip(sources, biases, strict=True)]
    assert _tokens(alone) == _tokens(greedy)  # each source its own bias: a batch mixing biases decodes each as alone


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(text, min_size=1, max_size=6), strategy=st.sampled_from(["greedy", "aggressive"]))
def test_a_large_keep_bias_keeps_every_source_as_written(texts: list[str], strategy: str) -> None:
    engine = engine_for()
    sources = [s[: engine.max_source_tokens] for s in engine.codec.encode_batch(texts)]
    results = engine.generate(sources, strategy, keep_biases=[1000.0] * len(sources))
    assert _tokens(results) == [list(s) for s in sources]


def test_a_zero_keep_bias_is_the_model_as_trained(engine: Engine) -> None:
    sources = engine.codec.encode_batch(SENTENCES)
    plain = _tokens(engine.generate(sources, "aggressive"))
    assert _tokens(engine.generate(sources, "aggressive", keep_biases=[0.0] * len(sources))) == plain
    assert _tokens(engine.generate(sources, "greedy", keep_biases=[0.0] * len(sources))) == plain


@pytest.mark.parametrize("strategy", ["beam", "sample"])
def test_strategies_without_an_alignment_refuse_a_keep_bias(engine: Engine, strategy: str) -> None:
    assert not takes_keep_bias(strategy)
    with pytest.raises(ValueError, match="takes no keep bias"):
        engine.generate(engine.codec.encode_batch(["i saw a apple"]), strategy, keep_biases=[1.0])


bias = st.floats(-5, 5, allow_nan=False)
MANIFEST = ModelManifest.load(DEFAULT_MODEL)


@settings(max_examples=200)
@given(
    strategy=st.sampled_from(sorted(STRATEGIES)),
    level=st.sampled_from(sorted(LEVELS)),
    measured=st.dictionaries(st.sampled_from(sorted(LEVELS)), bias),
    chosen=st.lists(st.none() | bias, max_size=3),
)
def test_a_decoding_takes_the_first_bias_chosen_else_the_models_for_its_level(
    strategy: str, level: str, measured: dict[str, float], chosen: list[float | None]
) -> None:
    manifest = replace(MANIFEST, keep_bias=measured)
    given_bias = [b for b in chosen if b is not None]
    expected = (given_bias[0] if given_bias else level_keep_bias(manifest, level)) if takes_keep_bias(strategy) else 0.0
    assert keep_bias_for(manifest, strategy, level, *chosen) == expected


def test_the_alignment_leans_on_the_token_it_would_copy_and_follows_edits() -> None:
    align = Alignment([5, 6, 7, 8, 2], keep_bias=1.5)
    scores = np.zeros((3, 10))
    align.lean(scores, 3)  # aligned at 5: the next three positions expect 5, 6, 7
    assert scores[0, 5] == scores[1, 6] == scores[2, 7] == 1.5
    assert scores.sum() == 4.5
    align.follow([5])  # copied: the next token expected is 6
    assert align.pointer == 1
    align.follow([5, 9])  # an edit: "9" is in no source n-gram, the alignment is lost
    assert align.pointer is None
    unbiased = np.zeros((1, 10))
    align.lean(unbiased, 1)
    assert not unbiased.any()
    align.follow([5, 9, 7])  # "7" occurs once in the source: aligned again, just after it
    assert align.pointer == 3


def test_a_lost_alignment_guesses_where_the_source_goes_on() -> None:
    draft = [5, 6, 7, 6, 8, 2]  # "6" occurs twice: it realigns nothing
    replaced = Alignment(draft)
    replaced.follow([5])
    replaced.follow([5, 9])  # "9" instead of the first "6"
    assert replaced.pointer is None and replaced.lost == (1, 1)
    assert replaced.guess([5, 9]) == 2  # a word replaced: the source goes on after it
    inserted = Alignment(draft, pointer=1, lost=(1, 1))
    assert inserted.guess([5, 9, 6]) == 2  # "9" put in before "6", which the output then copied
    left_out = Alignment(draft, pointer=None, lost=(1, 1))
    assert left_out.guess([5, 7]) == 3  # "6" left out: the output copied "7" next
    assert left_out.guess([5, 9, 9, 9, 9]) is None  # too far from where it was lost
    assert Alignment(draft).guess([5]) is None  # never lost


@settings(max_examples=200, deadline=None)
@given(
    draft=st.lists(st.integers(3, 9), min_size=1, max_size=12),
    output=st.lists(st.integers(3, 9), max_size=8),
    tokens=st.lists(st.integers(3, 9), max_size=8),
)
def test_pointers_along_a_draft_are_the_ones_following_it_gives(
    draft: list[int], output: list[int], tokens: list[int]
) -> None:
    align = Alignment([*draft, 2], keep_bias=1.0)
    for end in range(1, len(output) + 1):
        align.follow(output[:end])
    pointers = align.pointers_along(output, tokens)
    before = (align.pointer, align.lost)
    expected = [align.pointer]
    for end in range(len(output) + 1, len(output) + len(tokens) + 1):
        align.follow([*output, *tokens][:end])
        expected.append(align.pointer)
    assert pointers == expected
    probe = Alignment([*draft, 2], keep_bias=1.0, pointer=before[0], lost=before[1])
    scores = np.zeros((len(pointers), 10))
    probe.lean_along(scores, pointers)
    assert scores.sum() == sum(1 for p in pointers if p is not None and p < len(draft) + 1)


@pytest.mark.slow
def test_the_keep_bias_moves_how_much_the_bundled_model_edits_one_way() -> None:
    """On learner sentences, more bias never changes more sentences, and less never fewer (served path)."""
    if not DEV_DATA.is_dir():
        pytest.skip(f"the GEC dev data is not beside the project ({DEV_DATA})")
    lines = (DEV_DATA / "fce.dev.detok.src").read_text(encoding="utf-8").split("\n")[:300]
    engine = Engine(DEFAULT_MODEL, options=RuntimeOptions(intra_op_threads=1))
    changed = []
    for bias in (-2.0, -1.0, 0.0, 1.0, 2.0):
        corrected = correct_texts(engine, lines, keep_bias=bias)
        changed.append(sum(c.text != line for c, line in zip(corrected, lines, strict=True)))
    assert changed == sorted(changed, reverse=True)
    assert changed[0] > changed[2] > changed[-1]
