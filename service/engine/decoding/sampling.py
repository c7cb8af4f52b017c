"""Ancestral sampling, batched: temperature, top-k and top-p (nucleus) as ``transformers`` 5.23 applies them.

Per step the logits are divided by ``temperature`` (skipped at 1.0), then everything below the
``top_k``-th largest value is dropped (``top_k=0``: off; ties with the k-th are kept), then the
nucleus filter drops, from the least likely token up, every token whose cumulative probability
is <= ``1 - top_p`` (the most likely token always stays; ``top_p=1``: off); the next token is
drawn from the softmax of what is left. ``temperature`` 0 or ``top_k=1`` is greedy decoding; a
temperature between 0 and ``MIN_TEMPERATURE`` is refused (dividing logits by a subnormal number
overflows them to infinity, and below 0.01 sampling is greedy decoding in all but name).

Each source yields ``num_return_sequences`` samples, in draw order; ``tokens`` is the first.
A sample's score is its log-probability under the unmodified model (sum of ``log_softmax`` of
the raw logits over its tokens, ``</s>`` included when it ended there).

Reproducibility: each source draws from its own ``numpy.random.Generator`` seeded with
``SeedSequence([seed, *source tokens])``, and only its own rows use it, in a fixed order; so a
source's samples depend on the seed and its tokens only, never on where it sits in a batch or
on the other sources (the service batches sentences of different requests together).
Without a seed one is drawn from the OS for the whole call.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from service.engine.decoding.beam import log_softmax
from service.engine.decoding.types import DecodeParams, DecodeResult, Hypothesis, default_max_new_tokens
from service.engine.model import Seq2SeqModel, StopCheck


@dataclass
class _Sample:
    source: int
    limit: int
    tokens: list[int] = field(default_factory=list)
    score: float = 0.0
    finished: bool = True


MIN_TEMPERATURE = 0.01
MAX_TEMPERATURE = 10.0


def check_sampling_params(params: DecodeParams) -> None:
    """Raise ``ValueError`` for settings that have no meaning."""
    if not (params.temperature == 0.0 or MIN_TEMPERATURE <= params.temperature <= MAX_TEMPERATURE):
        raise ValueError(
            f"temperature must be 0 (greedy) or between {MIN_TEMPERATURE:g} and {MAX_TEMPERATURE:g},"
            f" got {params.temperature}"
        )
    if params.num_return_sequences < 1:
        raise ValueError(f"num_return_sequences must be >= 1, got {params.num_return_sequences}")
    if params.top_k < 0:
        raise ValueError(f"top_k must be >= 0 (0: off), got {params.top_k}")
    if not 0.0 < params.top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {params.top_p}")
    if params.seed is not None and params.seed < 0:
        raise ValueError(f"seed must be >= 0, got {params.seed}")


def is_greedy(params: DecodeParams) -> bool:
    """Settings under which sampling always takes the most likely token."""
    return params.temperature == 0.0 or params.top_k == 1


def warp(logits: np.ndarray, params: DecodeParams) -> np.ndarray:
    """Temperature, then top-k, then top-p over ``logits [R,V]``; dropped tokens become -inf."""
    x = logits.astype(np.float64)
    if params.temperature != 1.0:
        x = x / params.temperature
    if params.top_k > 0:
        k = min(params.top_k, x.shape[-1])
        kth = np.partition(x, -k, axis=-1)[:, -k, None]
        x = np.where(x < kth, -np.inf, x)
    if params.top_p < 1.0:
        order = np.argsort(x, axis=-1, kind="stable")
        ascending = np.take_along_axis(x, order, axis=-1)
        cumulative = np.exp(log_softmax(ascending)).cumsum(axis=-1)
        drop = cumulative <= 1.0 - params.top_p
        drop[:, -1] = False
        np.put_along_axis(drop, order, drop.copy(), axis=-1)
        x = np.where(drop, -np.inf, x)
    return x


def draw(scores: np.ndarray, rng: np.random.Generator) -> int:
    """One token from the softmax of ``scores [V]`` (-inf: never drawn)."""
    cumulative = np.exp(scores - scores.max()).cumsum()
    return min(int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right")), len(scores) - 1)


def _generators(params: DecodeParams, sources: Sequence[Sequence[int]]) -> list[np.random.Generator]:
    seed = params.seed if params.seed is not None else secrets.randbits(63)
    return [np.random.default_rng(np.random.SeedSequence([seed, *source])) for source in sources]


def _choose(logits: np.ndarray, owners: list[int], params: DecodeParams, rngs: list[np.random.Generator]) -> list[int]:
    """The next token of each row; rows are drawn in order, each from its source's generator."""
    if is_greedy(params):
        return [int(t) for t in logits.argmax(-1)]
    scores = warp(logits, params)
    return [draw(scores[r], rngs[owners[r]]) for r in range(len(owners))]


def _results(samples: list[_Sample], passes: list[int], count: int) -> list[DecodeResult]:
    results = []
    for source, taken in enumerate(passes):
        own = samples[source * count : (source + 1) * count]
        hypotheses = [Hypothesis(list(s.tokens), s.score) for s in own]
        results.append(
            DecodeResult(
                tokens=list(own[0].tokens),
                finished=own[0].finished,
                passes=taken,
                accepted=[1] * taken,
                hypotheses=hypotheses,
            )
        )
    return results


def sample(
    model: Seq2SeqModel, sources: Sequence[Sequence[int]], params: DecodeParams, stop: StopCheck | None = None
) -> list[DecodeResult]:
    """Draw ``num_return_sequences`` samples per source; rows leave the batch as they finish."""
    check_sampling_params(params)
    m = model.manifest
    prefix = np.array(m.decoder_prefix_ids, dtype=np.int64)
    count = params.num_return_sequences
    rngs = _generators(params, sources)
    samples = [
        _Sample(s, params.max_new_tokens or default_max_new_tokens(len(source), m.max_target_positions, len(prefix)))
        for s, source in enumerate(sources)
        for _ in range(count)
    ]
    passes = [0] * len(sources)
    state = model.start(sources, stop)
    active = list(range(len(samples)))
    feed = [i // count for i in active]  # state row holding each active sample's logits
    tokens = np.tile(prefix, (len(sources), 1))
    while active:
        logits = state.step(tokens)[:, -1][feed]
        logp = log_softmax(logits)
        chosen = _choose(logits, [samples[i].source for i in active], params, rngs)
        for source in {samples[i].source for i in active}:
            passes[source] += 1
        keep = []
        for row, (index, token) in enumerate(zip(active, chosen, strict=True)):
            current = samples[index]
            current.score += float(logp[row, token])
            if token == m.eos_token_id:
                continue
            current.tokens.append(token)
            if len(current.tokens) >= current.limit:
                current.finished = False
                continue
            keep.append(row)
        if keep:
            state.select(np.array([feed[r] for r in keep], dtype=np.int64))
        active = [active[r] for r in keep]
        feed = list(range(len(keep)))
        tokens = np.array([chosen[r] for r in keep], dtype=np.int64)[:, None]
    return _results(samples, passes, count)
