"""Parallel CPU preprocessing: paragraphs -> units (protected spans, sentence split, languages, normalise, spell,
tokenize).

``mode="thread"`` runs plans on a thread pool (the tokenizer and Bling Fire are native code);
``mode="process"`` on a process pool whose processes each load the codec and the speller once.
Which is faster here is measured by ``gecserve bench preprocess``; the default follows that
figure. Tokens come from the model's ``TextCodec`` (``TextCodec.for_model``, the engine's own),
the one tokenizer of serving, ``gecserve correct`` and ``gecserve eval``: text that spells a
special token (``</s>``, ``<pad>``) stays text.

The spelling stage (``service.text.spelling``) needs the model's vocabulary: a model whose
manifest names none is served without it (logged once), and ``spelling=False`` turns it off.
Building a speller takes about a second of Python (holding the GIL, so the event loop serving
other requests crawls meanwhile): models whose spelling files are the same bytes (versions of one
model, usually) share one speller, which lives as long as a model uses it.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from service.engine.manifest import file_sha256
from service.engine.tokenization import TextCodec
from service.text.language import LanguageIdentifier, language_identifier
from service.text.spelling import Speller, spelling_files
from service.text.units import Unit, plan_units

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Planner:
    """What a plan needs: the codec, the longest unit, the speller if there is one, the language identifier."""

    codec: TextCodec
    max_tokens: int
    speller: Speller | None
    languages: LanguageIdentifier

    def plan(self, texts: Sequence[str], spelling: bool) -> list[list[Unit]]:
        spell = self.speller.corrections if spelling and self.speller is not None else None
        known = self.speller.may_rewrite if self.speller is not None else None
        english = self.languages.english_sentences
        return [plan_units(text, self.codec, self.max_tokens, spell, english, known) for text in texts]


# A paragraph this short is planned on the event loop: its plan (0.3 ms at the median on the 2-core machine, about a
# millisecond with an unknown word) costs about what handing it to a pool thread and back did (0.25 ms), and a pool
# thread would hold the GIL, and so the loop, as long (up to the interpreter's 5 ms switch interval).
INLINE_MAX_CHARS = 400
_PROCESS_PLANNER: _Planner | None = None
_SPELLERS: weakref.WeakValueDictionary[tuple[str, ...], Speller] = weakref.WeakValueDictionary()


def shared_speller(vocabulary: Path, ranking: Path | None) -> Speller:
    """The speller of these files: the one already loaded from files of the same content, else a new one."""
    key = tuple(file_sha256(path) for path in (vocabulary, ranking) if path is not None)
    speller = _SPELLERS.get(key)
    if speller is None:
        speller = _SPELLERS[key] = Speller.load(vocabulary, ranking)
    return speller


def _init_process(model_dir: str, files: tuple[Path, Path | None] | None) -> None:
    global _PROCESS_PLANNER
    codec, manifest = TextCodec.for_model(Path(model_dir))
    speller = Speller.load(*files) if files is not None else None
    _PROCESS_PLANNER = _Planner(codec, manifest.max_source_content, speller, language_identifier())


def _plan_in_process(texts: Sequence[str], spelling: bool) -> list[list[Unit]]:
    assert _PROCESS_PLANNER is not None
    return _PROCESS_PLANNER.plan(texts, spelling)


class Preprocessor:
    """Plans the units of paragraphs on a pool of ``pool_size`` threads or processes; ``start`` loads the speller."""

    def __init__(self, model_dir: Path, mode: str = "thread", pool_size: int = 2, spelling: bool = True) -> None:
        if mode not in ("thread", "process"):
            raise ValueError(f"preprocess mode must be 'thread' or 'process', not {mode!r}")
        self.mode = mode
        self.pool_size = pool_size
        self.codec, manifest = TextCodec.for_model(model_dir)
        self.max_tokens = manifest.max_source_content
        self.spelling_files = spelling_files(model_dir, manifest) if spelling else None
        if spelling and self.spelling_files is None:
            log.warning("the model ships no vocabulary: no spelling stage", extra={"model": manifest.name})
        self.speller: Speller | None = None
        self.executor: Executor
        if mode == "process":
            initargs = (str(model_dir), self.spelling_files)
            self.executor = ProcessPoolExecutor(pool_size, initializer=_init_process, initargs=initargs)
        else:
            self.executor = ThreadPoolExecutor(pool_size, thread_name_prefix="preprocess")

    @property
    def spells(self) -> bool:
        """Whether the spelling stage is available (the model ships a vocabulary and spelling is on)."""
        return self.spelling_files is not None

    async def start(self) -> None:
        """Load the speller and the language identifier (threads), or start every process of the pool, which loads
        its own."""
        if self.mode == "thread":
            await asyncio.to_thread(language_identifier)
            if self.spelling_files is not None and self.speller is None:
                self.speller = await asyncio.to_thread(shared_speller, *self.spelling_files)
        else:
            await self.plan([""] * self.pool_size)

    def encode(self, text: str) -> list[int]:
        return self.codec.encode(text)

    def plan_sync(self, texts: Sequence[str], spelling: bool = True) -> list[list[Unit]]:
        return _Planner(self.codec, self.max_tokens, self.speller, language_identifier()).plan(texts, spelling)

    async def plan(self, texts: Sequence[str], spelling: bool = True) -> list[list[Unit]]:
        """Units of each paragraph, spelled unless ``spelling`` is False; paragraphs are planned in parallel, but
        for one short paragraph (``INLINE_MAX_CHARS``) on a thread pool, planned where it is asked for."""
        if self.mode == "thread" and len(texts) == 1 and len(texts[0]) <= INLINE_MAX_CHARS:
            return self.plan_sync(texts, spelling)
        loop = asyncio.get_running_loop()
        work = _plan_in_process if self.mode == "process" else self.plan_sync
        parts = await asyncio.gather(*(loop.run_in_executor(self.executor, work, [t], spelling) for t in texts))
        return [part[0] for part in parts]

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
