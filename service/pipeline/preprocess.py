"""Parallel CPU preprocessing: paragraphs -> units (sentence split, normalise, tokenize).

``mode="thread"`` runs plans on a thread pool (the tokenizer and Bling Fire are native code);
``mode="process"`` on a process pool whose workers each load the tokenizer once. Which is
faster here is measured by ``gecserve bench preprocess``; the default follows that figure.
Tokens come from the engine's ``TextCodec``, the one tokenizer of serving, ``gecserve correct``
and ``gecserve eval``: text that spells a special token (``</s>``, ``<pad>``) stays text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from service.engine.tokenization import TextCodec
from service.pipeline.units import Unit, plan_units

_PROCESS_CODEC: TextCodec | None = None
_PROCESS_MAX_TOKENS = 0


def _init_process(tokenizer_path: str, max_tokens: int) -> None:
    global _PROCESS_CODEC, _PROCESS_MAX_TOKENS
    _PROCESS_CODEC = TextCodec(Path(tokenizer_path), set())
    _PROCESS_MAX_TOKENS = max_tokens


def _plan_in_process(texts: Sequence[str]) -> list[list[Unit]]:
    assert _PROCESS_CODEC is not None
    return [plan_units(text, _PROCESS_CODEC.encode, _PROCESS_MAX_TOKENS) for text in texts]


class Preprocessor:
    """Plans the units of paragraphs on a pool of ``workers`` threads or processes."""

    def __init__(self, tokenizer_path: Path, max_tokens: int, mode: str = "thread", workers: int = 2) -> None:
        self.max_tokens = max_tokens
        self.mode = mode
        self.codec = TextCodec(tokenizer_path, set())
        self.executor: Executor
        if mode == "process":
            self.executor = ProcessPoolExecutor(
                workers, initializer=_init_process, initargs=(str(tokenizer_path), max_tokens)
            )
        elif mode == "thread":
            self.executor = ThreadPoolExecutor(workers, thread_name_prefix="preprocess")
        else:
            raise ValueError(f"preprocess mode must be 'thread' or 'process', not {mode!r}")

    def encode(self, text: str) -> list[int]:
        return self.codec.encode(text)

    def plan_sync(self, texts: Sequence[str]) -> list[list[Unit]]:
        return [plan_units(text, self.codec.encode, self.max_tokens) for text in texts]

    async def plan(self, texts: Sequence[str]) -> list[list[Unit]]:
        """Units of each paragraph; paragraphs are planned in parallel."""
        loop = asyncio.get_running_loop()
        if self.mode == "process":
            parts = await asyncio.gather(*(loop.run_in_executor(self.executor, _plan_in_process, [t]) for t in texts))
        else:
            parts = await asyncio.gather(*(loop.run_in_executor(self.executor, self.plan_sync, [t]) for t in texts))
        return [part[0] for part in parts]

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
