"""What both beam searches (``beam``, ``diverse``) share: log-probabilities, the best candidates, the rules of a
search and a finished hypothesis."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Finished:
    """A hypothesis that left the beams: its length-normalised score and content tokens."""

    score: float
    tokens: list[int]
    eos: bool  # ended at </s> (False: cut by the length limit)


@dataclass(frozen=True)
class Rules:
    """A search's settings, as one source's steps read them."""

    num_beams: int
    length_penalty: float
    early_stopping: bool | str
    eos: int
    offset: int  # decoder prefix tokens that HF counts as generated (a forced BOS)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-probabilities over the last axis, in float64."""
    x = logits.astype(np.float64)
    x -= x.max(axis=-1, keepdims=True)
    logp: np.ndarray = x - np.log(np.exp(x).sum(axis=-1, keepdims=True))
    return logp


def best(scores: np.ndarray, count: int) -> np.ndarray:
    """Indices of the ``count`` highest scores, best first (ties: lower index first)."""
    count = min(count, len(scores))
    top = np.argpartition(-scores, count - 1)[:count]
    return top[np.lexsort((top, -scores[top]))]
