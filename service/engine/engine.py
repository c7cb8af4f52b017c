"""The engine facade: one model variant, every decoding strategy, text in and text out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from service.engine.decoding.aggressive import AggressiveDecoder, aggressive
from service.engine.decoding.beam import beam, check_beam_params
from service.engine.decoding.continuous import ContinuousDecoder
from service.engine.decoding.greedy import GreedyDecoder, greedy
from service.engine.decoding.sampling import check_sampling_params, sample
from service.engine.decoding.types import DecodeParams, DecodeResult, Hypothesis, empty_result
from service.engine.model import DecodingStoppedError, InputTooLongError, Seq2SeqModel, StopCheck
from service.engine.sessions import SessionSettings

Strategy = Callable[[Seq2SeqModel, Sequence[Sequence[int]], DecodeParams, StopCheck | None], list[DecodeResult]]

STRATEGIES: dict[str, Strategy] = {"greedy": greedy, "aggressive": aggressive, "beam": beam, "sample": sample}
# Strategies whose batch can change between passes (iteration-level batching).
CONTINUOUS: dict[str, type[ContinuousDecoder[Any]]] = {"greedy": GreedyDecoder, "aggressive": AggressiveDecoder}
# Parameter checks run before any work, so bad settings fail even when every source is empty.
CHECKS: dict[str, Callable[[DecodeParams], None]] = {"beam": check_beam_params, "sample": check_sampling_params}

__all__ = [
    "CONTINUOUS",
    "STRATEGIES",
    "DecodeParams",
    "DecodeResult",
    "DecodingStoppedError",
    "Engine",
    "Hypothesis",
    "InputTooLongError",
    "StopCheck",
]


class Engine:
    """Runs decoding strategies over batches of token-id sources.

    Empty sources give empty outputs without touching the model; sources longer than the
    model's maximum raise ``InputTooLongError`` (split them first).
    """

    def __init__(
        self,
        model_dir: Path | str,
        variant: str | None = None,
        settings: SessionSettings | None = None,
        cache: str = "compact",
    ) -> None:
        self.model = Seq2SeqModel(Path(model_dir), variant, settings, cache)
        self.manifest = self.model.manifest
        self.codec = self.model.codec

    @property
    def max_source_tokens(self) -> int:
        return self.manifest.max_source_content

    def generate(
        self,
        sources: Sequence[Sequence[int]],
        strategy: str = "aggressive",
        params: DecodeParams | None = None,
        stop: StopCheck | None = None,
    ) -> list[DecodeResult]:
        """Decode ``sources``; ``stop`` is asked before every decoder pass and abandons the batch
        (``DecodingStoppedError``) when it returns True."""
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; known: {', '.join(sorted(STRATEGIES))}")
        params = params or DecodeParams()
        CHECKS.get(strategy, lambda p: None)(params)
        for source in sources:
            self.check_length(source)
        results: list[DecodeResult] = [empty_result() for _ in sources]
        work = [i for i, s in enumerate(sources) if len(s) > 0]
        if work:
            decoded = STRATEGIES[strategy](self.model, [list(sources[i]) for i in work], params, stop)
            for i, result in zip(work, decoded, strict=True):
                results[i] = result
        return results

    def check_length(self, source: Sequence[int]) -> None:
        """Raise ``InputTooLongError`` for a source longer than the model reads (split it first)."""
        if len(source) > self.max_source_tokens:
            raise InputTooLongError(
                f"source of {len(source)} tokens is longer than the model maximum {self.max_source_tokens}"
            )

    def continuous(self, strategy: str, params: DecodeParams | None = None) -> ContinuousDecoder[Any]:
        """A decoder that sources join between passes (``CONTINUOUS`` strategies only). Unlike
        ``generate``, it neither skips empty sources nor checks lengths: its caller does."""
        if strategy not in CONTINUOUS:
            raise ValueError(f"{strategy!r} decodes closed batches only; continuous: {', '.join(sorted(CONTINUOUS))}")
        return CONTINUOUS[strategy](self.model, params or DecodeParams())

    def release_memory(self) -> None:
        """Give back what the sessions' memory arenas hold beyond the runs in flight (see ``Seq2SeqModel``)."""
        self.model.release_memory()

    def correct(
        self, texts: Sequence[str], strategy: str = "aggressive", params: DecodeParams | None = None
    ) -> list[str]:
        """Texts in, corrected texts out (each text must fit the model's maximum length)."""
        results = self.generate(self.codec.encode_batch(list(texts)), strategy, params)
        return [self.codec.decode(r.tokens) for r in results]
