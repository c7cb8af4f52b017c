"""The pipeline in-process with the real engine: cache, dedup, routing, accounting, errors (no web framework)."""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.config import Settings
from service.engine.engine import Engine
from service.engine.offline import correct_texts, model_review
from service.experiments.arms import Arm
from service.pipeline.errors import PayloadTooLargeError, UnknownArmRequestError
from service.pipeline.pipeline import Pipeline, writer_edit_id
from service.pipeline.types import CorrectRequest, GenerateRequest
from service.wiring import WARMUP_ROUNDS, Gateway
from tests.conftest import FIXTURE_MODEL, copy_with_language_model


def settings(**overrides) -> Settings:
    return Settings(model_path=FIXTURE_MODEL, model_variant="int8", **overrides)


async def with_pipeline(config: Settings, body):
    gateway = Gateway(config)
    await gateway.start()
    try:
        return await body(gateway.pipeline)
    finally:
        await gateway.stop()


def sample(pipeline: Pipeline, name: str, **labels: str) -> float:
    return pipeline.metrics.registry.get_sample_value(name, labels) or 0.0


def test_repeated_sentences_are_decoded_once() -> None:
    async def body(pipeline: Pipeline):
        text = "I saw a apple. I saw a apple. Tom found an owl."
        first = await pipeline.correct(CorrectRequest([text], single=True))
        hits_before = sample(pipeline, "gecserve_cache_lookups_total", level="memory", result="hit")
        second = await pipeline.correct(CorrectRequest([text], single=True))
        return (
            first,
            second,
            hits_before,
            sample(pipeline, "gecserve_cache_lookups_total", level="memory", result="hit"),
        )

    first, second, hits_before, hits_after = asyncio.run(with_pipeline(settings(), body))
    assert (
        first.corrections[0].text == second.corrections[0].text == "I saw an apple. I saw an apple. Tom found an owl."
    )
    assert hits_after - hits_before == 3
    assert second.timings.inference == 0


def test_refusals_are_errors_and_are_counted_by_outcome() -> None:
    async def body(pipeline: Pipeline):
        with pytest.raises(PayloadTooLargeError):
            await pipeline.correct(CorrectRequest(["x" * 101], single=True))
        with pytest.raises(PayloadTooLargeError):
            await pipeline.correct(CorrectRequest(["a", "b", "c"], single=False))
        with pytest.raises(UnknownArmRequestError, match="accelerated, autoregressive"):
            await pipeline.correct(CorrectRequest(["a"], single=True, arm="nope"), api="grpc")
        await pipeline.correct(CorrectRequest(["Tom found an owl."], single=True, arm="autoregressive"))
        return pipeline

    pipeline = asyncio.run(with_pipeline(settings(max_text_chars=100, max_texts=2), body))
    count = "gecserve_request_duration_seconds_count"
    common = {"route": "correct", "experiment": "none"}
    assert sample(pipeline, count, api="http", arm="none", outcome="too_large", **common) == 2
    assert sample(pipeline, count, api="grpc", arm="none", outcome="unknown_arm", **common) == 1
    assert sample(pipeline, count, api="http", arm="autoregressive", outcome="ok", **common) == 1
    window = pipeline.stats.window(["none", "autoregressive"], 60)
    assert window["outcomes"] == {"ok": 1, "too_large": 2, "unknown_arm": 1}


def test_generate_combines_sentences() -> None:
    async def body(pipeline: Pipeline):
        return await pipeline.generate(GenerateRequest("i saw a apple. Tom found a owl", num_return_sequences=2))

    result = asyncio.run(with_pipeline(settings(), body))
    assert len(result.sequences) == 2
    assert result.sequences[0][0].startswith("I saw an apple.")


def test_text_the_model_cannot_read_never_reaches_a_queue() -> None:
    texts = ["我喜欢猫。", "😀😀😀", "Привет, как дела?", "12 345", "مرحبا بالعالم"]

    async def body(pipeline: Pipeline):
        result = await pipeline.correct(CorrectRequest(texts, single=False))
        return result, sample(pipeline, "gecserve_batch_size_count", queue="accelerated")

    result, batches = asyncio.run(with_pipeline(settings(), body))
    assert [c.text for c in result.corrections] == texts
    assert all(c.edits == [] for c in result.corrections)
    assert batches == WARMUP_ROUNDS + 1  # the warm-up's batches only


def test_the_keep_bias_decodes_anew_and_is_cached_apart() -> None:
    """The same sentence with another keep bias is decoded, not read from the cache; each answer is then cached."""

    async def body(pipeline: Pipeline):
        text = "The cat likes teh old car."  # no rule of the rule stage fires: the answer is the model's alone
        answers = [
            await pipeline.correct(CorrectRequest([text], single=True, keep_bias=bias)) for bias in (None, 1000.0)
        ]
        again = await pipeline.correct(CorrectRequest([text], single=True, keep_bias=1000.0))
        return text, answers, again

    text, (default, kept), again = asyncio.run(with_pipeline(settings(), body))
    assert default.corrections[0].text != text
    assert kept.corrections[0].text == text and not kept.corrections[0].edits
    assert kept.timings.inference > 0  # decoded, although the default's output was cached
    assert again.corrections[0].text == text and again.timings.inference == 0


def test_the_keep_bias_is_the_request_s_else_the_arm_s_else_the_model_s_level() -> None:
    async def body(pipeline: Pipeline):
        accelerated, beam = Arm.of_backend("accelerated"), Arm.of_backend("beam")
        eager = Arm("eager", "accelerated", (("keep_bias", -0.5),))
        model = pipeline.models.get()
        levels = model.manifest.keep_bias
        return [
            pipeline.keep_bias(model, accelerated, "default", None) == levels["default"],
            pipeline.keep_bias(model, accelerated, "picky", None) == levels["picky"],
            pipeline.keep_bias(model, eager, "picky", None) == -0.5,
            pipeline.keep_bias(model, eager, "default", 2.0) == 2.0,
            pipeline.keep_bias(model, beam, "picky", None) == 0.0,  # beam search takes none
        ]

    assert all(asyncio.run(with_pipeline(settings(), body)))


def test_the_language_model_reviews_what_is_served_as_offline(tmp_path) -> None:
    """A model folder with an n-gram model that prefers the learner's "a apple": the served answer is the model's
    correction with that edit vetoed, as ``correct_texts`` reviews it, and without the review the model's own; the
    rule stage, which the language model does not review, then writes "an" again."""
    model = copy_with_language_model(FIXTURE_MODEL, tmp_path / "model", "I saw a apple yesterday. " * 5)
    texts = ["i saw a apple yesterday", "Tom found an owl. The cat likes teh old car."]

    async def body(pipeline: Pipeline):
        results = [await pipeline.correct(CorrectRequest([text], single=True)) for text in texts]
        answers = [result.corrections[0].text for result in results]
        reviewing = min(result.timings.review for result in results)  # a stage of its own, after inference
        return answers, sample(pipeline, "gecserve_review_edits_total", queue="accelerated", action="vetoed"), reviewing

    config = Settings(model_path=model, model_variant="int8")
    reviewed, vetoed, reviewing = asyncio.run(with_pipeline(config, body))
    plain, none, not_reviewing = asyncio.run(with_pipeline(config.model_copy(update={"lm_review": False}), body))
    assert (vetoed, none) == (1, 0)  # "an" taken back once (the warm-up's sentences had nothing to take back)
    assert reviewing > not_reviewing
    engine = Engine(model, variant="int8")
    assert reviewed == [c.text for c in correct_texts(engine, texts, review=model_review(model))]
    assert plain == [c.text for c in correct_texts(engine, texts)]
    assert plain[0] == reviewed[0] == "I saw an apple yesterday."  # the review's veto, then the rule stage's a/an


@given(st.text(max_size=20), st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_an_edit_id_is_stable_for_its_writer_and_apart_from_other_writers(edit: str, writer: str, other: str) -> None:
    assert writer_edit_id(edit, None) == edit
    assert writer_edit_id(edit, writer) == writer_edit_id(edit, writer)
    assert re.fullmatch(r"[0-9a-f]{12}", writer_edit_id(edit, writer))
    if other != writer:
        assert writer_edit_id(edit, writer) != writer_edit_id(edit, other)
