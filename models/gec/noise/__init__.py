"""Synthetic learner errors: corrupt clean sentences into realistic learner-like ones.

``NoiseGenerator`` is the entry point; ``errors`` has one function per error type (one module per
error family), ``words`` the word lists they use, ``calibrate`` derives the error rates from
learner data (M2), ``tokens`` and ``inflect`` are the helpers.
Names are imported lazily so that ``python -m models.gec.noise.generator`` runs cleanly.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from models.gec.noise.errors import ERROR_FUNCTIONS
    from models.gec.noise.generator import (
        DEFAULT_CALIBRATION,
        NoiseGenerator,
        load_calibration,
        load_misspellings,
    )
    from models.gec.noise.tokens import Token, detokenize, tokenize

_EXPORTS = {
    "DEFAULT_CALIBRATION": "generator",
    "NoiseGenerator": "generator",
    "load_calibration": "generator",
    "load_misspellings": "generator",
    "ERROR_FUNCTIONS": "errors",
    "Token": "tokens",
    "detokenize": "tokens",
    "tokenize": "tokens",
}

__all__ = [
    "DEFAULT_CALIBRATION",
    "ERROR_FUNCTIONS",
    "NoiseGenerator",
    "Token",
    "detokenize",
    "load_calibration",
    "load_misspellings",
    "tokenize",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
