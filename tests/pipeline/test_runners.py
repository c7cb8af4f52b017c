"""The runners: jobs carrying their own decoding are grouped by it, and a bad group fails alone."""

from __future__ import annotations

import pytest

from service.batching import Job
from service.engine.decoding.types import DecodeParams
from service.pipeline.runners import Outcome, decode_by_payload
from tests.engine.conftest import SENTENCES, engine_for

BEAM = ("beam", DecodeParams(num_beams=3, num_return_sequences=2))
SAMPLE = ("sample", DecodeParams(seed=3, temperature=2.0, num_return_sequences=2))
GREEDY = ("greedy", DecodeParams())
BAD = ("beam", DecodeParams(num_beams=2, num_return_sequences=3))  # more sequences than beams


def test_jobs_decode_with_their_own_settings_and_a_bad_group_fails_alone() -> None:
    engine = engine_for()
    sources = engine.codec.encode_batch([s for s in SENTENCES if s] * 2)
    settings = [BEAM, SAMPLE, BAD, GREEDY]
    jobs = [Job(tokens, payload=settings[i % len(settings)]) for i, tokens in enumerate(sources)]
    outcomes = decode_by_payload(engine, jobs)
    for strategy, params in (BEAM, SAMPLE, GREEDY):
        group = [i for i, job in enumerate(jobs) if job.payload == (strategy, params)]
        alone = engine.generate([jobs[i].tokens for i in group], strategy, params)
        assert [outcomes[i].result.to_json() for i in group] == [r.to_json() for r in alone]
        assert {outcomes[i].batch_size for i in group} == {len(group)}  # the group decoded as one batch
    failed = [outcomes[i] for i, job in enumerate(jobs) if job.payload == BAD]
    assert failed and all(isinstance(o, ValueError) and "num_return_sequences" in str(o) for o in failed)
    assert sum(isinstance(o, Outcome) for o in outcomes) == len(jobs) - len(failed)


@pytest.mark.parametrize("payload", [BEAM, SAMPLE])
def test_a_job_decodes_the_same_alone_and_among_other_settings(payload) -> None:
    engine = engine_for()
    tokens = engine.codec.encode_batch(["i saw a apple yesterday"])[0]
    mixed = decode_by_payload(engine, [Job(tokens, payload=p) for p in (GREEDY, payload, BAD)])[1]
    alone = decode_by_payload(engine, [Job(tokens, payload=payload)])[0]
    assert mixed.result.to_json() == alone.result.to_json()
