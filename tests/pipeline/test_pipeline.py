"""The pipeline in-process with the real engine: cache, dedup, arms, errors (no web framework)."""

from __future__ import annotations

import asyncio

import pytest

from service.config import Settings
from service.pipeline.errors import InvalidRequestError, PayloadTooLargeError
from service.pipeline.pipeline import Pipeline
from service.pipeline.types import CorrectRequest, GenerateRequest
from tests.conftest import FIXTURE_MODEL


def settings(**overrides) -> Settings:
    return Settings(model_path=FIXTURE_MODEL, model_variant="int8", **overrides)


async def with_pipeline(config: Settings, body):
    pipeline = Pipeline(config)
    await pipeline.start()
    try:
        return await body(pipeline)
    finally:
        await pipeline.stop()


def counter(pipeline: Pipeline, name: str) -> float:
    return pipeline.metrics.registry.get_sample_value(name) or 0.0


def test_repeated_sentences_are_decoded_once() -> None:
    async def body(pipeline: Pipeline):
        text = "I saw a apple. I saw a apple. Tom found an owl."
        first = await pipeline.correct(CorrectRequest([text], single=True))
        hits_before = counter(pipeline, "gecserve_cache_hits_total")
        second = await pipeline.correct(CorrectRequest([text], single=True))
        return first, second, hits_before, counter(pipeline, "gecserve_cache_hits_total")

    first, second, hits_before, hits_after = asyncio.run(with_pipeline(settings(), body))
    assert (
        first.corrections[0].text == second.corrections[0].text == "I saw an apple. I saw an apple. Tom found an owl."
    )
    assert hits_after - hits_before == 3
    assert second.timings.inference == 0


def test_validation_errors() -> None:
    async def body(pipeline: Pipeline):
        with pytest.raises(PayloadTooLargeError):
            await pipeline.correct(CorrectRequest(["x" * 101], single=True))
        with pytest.raises(PayloadTooLargeError):
            await pipeline.correct(CorrectRequest(["a", "b", "c"], single=False))
        with pytest.raises(InvalidRequestError):
            await pipeline.correct(CorrectRequest(["a"], single=True, backend="nope"))
        with pytest.raises(InvalidRequestError):
            await pipeline.generate(GenerateRequest("a", num_return_sequences=3, num_beams=2))

    asyncio.run(with_pipeline(settings(max_text_chars=100, max_texts=2), body))


def test_generate_combines_sentences() -> None:
    async def body(pipeline: Pipeline):
        return await pipeline.generate(GenerateRequest("i saw a apple. Tom found a owl", num_return_sequences=2))

    result = asyncio.run(with_pipeline(settings(), body))
    assert len(result.sequences) == 2
    assert result.sequences[0][0].startswith("I saw an apple.")
