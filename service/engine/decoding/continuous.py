"""Iteration-level batching: a decoder whose batch changes between passes.

A ``ContinuousDecoder`` holds one ``DecoderState`` whose rows are slots for the sequences being
decoded. ``join`` encodes new sources (one encoder run for all of them) and puts them into free
slots, or new ones; a source takes one slot (greedy, aggressive) or several (beam search's beams,
sampling's samples), all under one handle. ``step`` runs one decoder pass and returns the sources
that finished in it, whose slots are free from then on; ``drop`` frees a source's slots without a
result (its caller went away). A scheduler calls these between passes, so a finished source's
slots are taken by waiting sentences instead of running empty until the batch's slowest row is done.

A free slot is reused in place (no copy of the batch's arrays), and is fed padding until then;
once more slots are free than busy, the state is compacted to the busy ones. Every pass reads the
cross-attention keys/values and the self-attention cache whole, so the source axis is cut back
when the longest sources leave.

``run`` is the closed batch every strategy also offers: join everything, step until empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

import numpy as np

from service.engine.decoding.params import DecodeParams, DecodeResult, default_max_new_tokens
from service.engine.model import DecoderState, DecodingStoppedError, Seq2SeqModel, StopCheck, pad_rows


class _Row(Protocol):
    @property
    def result(self) -> DecodeResult:
        """What the row's source has decoded so far (shared by the rows of one source); returned as it is once
        the source's last row finishes."""
        ...


RowT = TypeVar("RowT", bound=_Row)


class ContinuousDecoder(Generic[RowT]):
    """The slots of one decoder state, in state order: a row's state and its caller's handle, or None."""

    takes_keep_bias = False  # follows each output's alignment with its source (``alignment``)

    def __init__(self, model: Seq2SeqModel, params: DecodeParams, stop: StopCheck | None = None) -> None:
        self.model = model
        self.params = params
        self.manifest = model.manifest
        self.state: DecoderState = model.empty_state(stop)
        self.rows: list[RowT | None] = []
        self.handles: list[int | None] = []
        self._open: dict[int, int] = {}  # handle -> its source's slots still decoding
        self._next_handle = 0
        self._stop = stop

    @property
    def active(self) -> int:
        """Rows still decoding."""
        return len(self.handles) - self.handles.count(None)

    def busy(self) -> list[tuple[int, RowT]]:
        """``(slot, row)`` of every row still decoding."""
        return [(i, row) for i, row in enumerate(self.rows) if row is not None]

    def join(self, sources: Sequence[Sequence[int]], keep_biases: Sequence[float] | None = None) -> list[int]:
        """Add non-empty ``sources``, each as the rows ``new_rows`` makes with its keep bias (``alignment``; 0 when
        ``keep_biases`` is None); one handle per source, in order."""
        if not sources:
            return []
        biases = [0.0] * len(sources) if keep_biases is None else keep_biases
        if not self.takes_keep_bias and any(biases):
            raise ValueError(f"{type(self).__name__} takes no keep bias (greedy and aggressive decoding do)")
        new = [self.new_rows(source, bias) for source, bias in zip(sources, biases, strict=True)]
        owners = [index for index, rows in enumerate(new) for _ in rows]
        free = [i for i, handle in enumerate(self.handles) if handle is None][: len(owners)]
        slots = free + list(range(len(self.rows), len(self.rows) + len(owners) - len(free)))
        self.model.join(self.state, np.array(slots, dtype=np.int64), sources, np.array(owners, dtype=np.int64))
        handles = list(range(self._next_handle, self._next_handle + len(sources)))
        self._next_handle += len(sources)
        grown = max(slots) + 1 - len(self.rows)
        self.rows.extend([None] * grown)
        self.handles.extend([None] * grown)
        for slot, row, owner in zip(slots, (row for rows in new for row in rows), owners, strict=True):
            self.rows[slot], self.handles[slot] = row, handles[owner]
        for handle, rows in zip(handles, new, strict=True):
            self._open[handle] = len(rows)
        return handles

    def step(self) -> list[tuple[int, DecodeResult]]:
        """One pass over every row; the ``(handle, result)`` of the sources whose last rows finished in it."""
        finished = []
        slots = self.advance()
        for slot in slots:
            row, handle = self.rows[slot], self.handles[slot]
            assert row is not None and handle is not None
            self.rows[slot] = self.handles[slot] = None
            self._open[handle] -= 1
            if not self._open[handle]:
                del self._open[handle]
                finished.append((handle, row.result))
        if slots:
            self._compact()
        return finished

    def drop(self, handles: Sequence[int]) -> None:
        """Take the rows of ``handles`` out of the batch, without results."""
        gone = set(handles)
        for slot, handle in enumerate(self.handles):
            if handle in gone:
                self.rows[slot] = self.handles[slot] = None
        for handle in gone:
            self._open.pop(handle, None)
        self._compact()

    def run(self, sources: Sequence[Sequence[int]], keep_biases: Sequence[float] | None = None) -> list[DecodeResult]:
        """A closed batch: decode every source to the end."""
        if self._stop is not None and self._stop():
            raise DecodingStoppedError("stopped before encoding")
        handles = self.join(sources, keep_biases)
        results: dict[int, DecodeResult] = {}
        while self.active:
            results.update(self.step())
        return [results[handle] for handle in handles]

    def last_logits(self, feeds: Sequence[tuple[int, Sequence[int]]]) -> np.ndarray:
        """Run one decoder pass feeding each ``(slot, tokens)`` its tokens (other slots padding); the
        logits ``[slots, V]`` at each slot's last fed position."""
        fed: list[Sequence[int]] = [[] for _ in self.rows]
        for slot, feed in feeds:
            fed[slot] = feed
        tokens, counts = pad_rows(fed, self.manifest.pad_token_id)
        last: np.ndarray = self.state.step(tokens, counts)[np.arange(len(self.rows)), np.maximum(counts - 1, 0)]
        return last

    def limit(self, source: Sequence[int]) -> int:
        """The most tokens a row may generate (``max_new_tokens`` or the default budget)."""
        m = self.manifest
        return self.params.max_new_tokens or default_max_new_tokens(
            len(source), m.max_target_positions, len(m.decoder_prefix_ids)
        )

    def _compact(self) -> None:
        """After rows left: keep only the busy slots once more slots are free than busy; shorten the
        source axis once the longest sources have gone."""
        busy = [slot for slot, handle in enumerate(self.handles) if handle is not None]
        if len(self.handles) - len(busy) > len(busy):
            self.state.select(np.array(busy, dtype=np.int64))
            self.rows = [self.rows[slot] for slot in busy]
            self.handles = [self.handles[slot] for slot in busy]
            busy = list(range(len(busy)))
        if busy:
            self.state.fit_sources(np.array(busy, dtype=np.int64))

    # -- what a strategy defines ------------------------------------------------------------

    def new_rows(self, source: Sequence[int], keep_bias: float) -> list[RowT]:
        """The rows a joining source decodes in (their caches start empty), sharing one ``result``; ``keep_bias``
        is 0 unless the strategy ``takes_keep_bias``."""
        raise NotImplementedError

    def advance(self) -> list[int]:
        """Run one decoder pass (free slots fed padding); the slots of the rows that finished in it
        (a source's result must be complete once its last row is returned)."""
        raise NotImplementedError
