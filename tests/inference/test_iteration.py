"""Closed and iteration-level batches on a real engine: jobs carrying their own decoding are grouped by it,
and a bad group fails alone; an iteration-level batch's jobs join between passes, leave when done or past their
deadline, and a job that breaks the engine fails alone; a payload batch takes the listed strategies into
iteration-level batches."""

from __future__ import annotations

import threading
import time

import pytest

from service.batching import DeadlineExceededError, Job
from service.engine.decoding.params import DecodeParams
from service.engine.engine import InputTooLongError
from service.inference.batches import Outcome, decode_by_payload
from service.inference.iteration import IterationBatch, PayloadBatch
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


def _batch(strategy: str = "aggressive") -> tuple[IterationBatch, list[int]]:
    ended: list[int] = []
    engine = engine_for()
    return IterationBatch(engine, strategy, DecodeParams(), 4, lambda: ended.append(1)), ended


@pytest.mark.parametrize("strategy", ["greedy", "aggressive"])
def test_iteration_batch_jobs_joining_between_passes_get_what_greedy_gives_alone(strategy: str) -> None:
    batch, ended = _batch(strategy)
    engine = batch.engine
    jobs = [Job(tokens) for tokens in engine.codec.encode_batch([s for s in SENTENCES if s] * 2)]
    waiting, outcomes, calls = list(jobs), {}, 0
    wake = threading.Event()
    wake.set()  # work is always waiting: the batch comes back for it once a quarter is free
    while waiting or batch.active:
        joining, waiting = waiting[:2], waiting[2:]
        batch.advance(joining, wake if waiting else threading.Event(), outcomes.update)
        calls += 1
    assert len(ended) == calls
    for job in jobs:
        assert outcomes[job].result.tokens == engine.generate([job.tokens], "greedy")[0].tokens
    assert max(outcome.batch_size for outcome in outcomes.values()) > 2  # joined a running batch


def test_iteration_batch_returns_early_when_work_waits_and_it_has_room() -> None:
    batch, _ = _batch("greedy")
    tokens = batch.engine.codec.encode_batch(["The cat likes teh old car and the dog likes the cat very much."])[0]
    wake = threading.Event()
    wake.set()
    finished: dict = {}
    batch.advance([Job(tokens)], wake, finished.update)  # one pass, then back for the waiting work
    assert batch.active == 1 and not finished
    while batch.active:
        batch.advance([], threading.Event(), finished.update)
    assert len(finished) == 1


def test_iteration_batch_drops_jobs_past_their_deadline_and_answers_the_odd_ones_at_once() -> None:
    batch, _ = _batch()
    good, late = batch.engine.codec.encode_batch(["i saw a apple yesterday", "Tom found an honest owl."])
    jobs = [
        Job(good),
        Job(late, deadline=time.monotonic() - 1),
        Job([]),
        Job([5] * (batch.engine.max_source_tokens + 1)),
        Job([399, 10**6]),  # an id past the vocabulary: the encoder refuses this one alone
    ]
    outcomes = {}
    waiting = list(jobs)
    while waiting or batch.active:
        batch.advance(waiting, threading.Event(), outcomes.update)
        waiting = []
    assert outcomes[jobs[0]].result.tokens == batch.engine.generate([good], "greedy")[0].tokens
    assert isinstance(outcomes[jobs[1]], DeadlineExceededError)
    assert outcomes[jobs[2]].result.tokens == []
    assert isinstance(outcomes[jobs[3]], InputTooLongError)
    assert isinstance(outcomes[jobs[4]], Exception) and not isinstance(outcomes[jobs[4]], Outcome)


def test_payload_batch_joins_listed_decodings_between_passes_and_closes_the_others() -> None:
    """Beam and sampling jobs (listed) join running batches of their own decoding as they come and get
    what each gets alone; greedy (not listed) decodes closed; settings the engine refuses fail their jobs."""
    engine = engine_for("fp32")  # int8 beam scores move in the fourth decimal with the batch (test_beam)
    ended: list[int] = []
    batch = PayloadBatch(engine, frozenset({"beam", "sample"}), 4, lambda: ended.append(1))
    sources = engine.codec.encode_batch([s for s in SENTENCES if s] * 2)
    settings = [BEAM, SAMPLE, GREEDY, BAD]
    jobs = [Job(tokens, payload=settings[i % len(settings)]) for i, tokens in enumerate(sources)]
    outcomes: dict = {}
    waiting, calls = list(jobs), 0
    wake = threading.Event()
    wake.set()
    while waiting or batch.active:
        joining, waiting = waiting[:3], waiting[3:]
        batch.advance(joining, wake if waiting else threading.Event(), outcomes.update)
        calls += 1
    assert len(ended) == calls and not batch.batches
    for job in jobs:
        if job.payload == BAD:
            assert isinstance(outcomes[job], ValueError) and "num_return_sequences" in str(outcomes[job])
            continue
        alone = engine.generate([job.tokens], *job.payload)[0]
        assert [h.tokens for h in outcomes[job].result.hypotheses] == [h.tokens for h in alone.hypotheses]
        assert [h.score for h in outcomes[job].result.hypotheses] == pytest.approx(
            [h.score for h in alone.hypotheses], abs=1e-5
        )
    for payload in (BEAM, SAMPLE):
        sizes = [outcomes[job].batch_size for job in jobs if job.payload == payload]
        assert max(sizes) > 1  # joined a running batch of its decoding
