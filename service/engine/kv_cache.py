"""Per-sequence self-attention caches for a batch, in two layouts with one interface.

A decoder pass appends the keys/values of T new tokens for every row; a row may then keep
only some of them (aggressive decoding rolls back at its own mismatch) or be dropped or
reordered (finished rows, beam search).

- ``CompactCache``: each row's valid entries are always ``[0, length)``; new entries are
  written at the row's own length, so rolling back is just lowering the length.
- ``MaskedCache``: every pass appends T slots for all rows; rolled-back slots stay in place
  and are masked out. Positions are explicit, so holes do not shift them. Cheaper appends,
  but the past the decoder attends over grows with the holes.

Both implement ``KVCache`` (``CACHES`` names them; ``model.DecoderState`` holds one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np


class KVCache(Protocol):
    """The self-attention cache of a batch's rows, whichever its layout."""

    lengths: np.ndarray
    """``[B]``: the tokens in the cache per row (the position of the next token)."""

    def view(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``past_kv [L,2,B,H,P,Dh]`` (contiguous) and ``past_mask [B,P]`` (int64, 1 = valid) of every row or of
        ``rows`` only."""
        ...

    def append(self, new_kv: np.ndarray, counts: np.ndarray, rows: np.ndarray | None = None) -> None:
        """Add the first ``counts[b]`` of the T new entries of each row b (of row ``rows[b]`` when given; the
        other rows gain nothing)."""
        ...

    def add_rows(self, count: int) -> None:
        """Append empty rows (sequences joining the batch)."""
        ...

    def empty(self, rows: np.ndarray) -> None:
        """Forget what ``rows`` hold (a new sequence takes their place)."""
        ...

    def truncate(self, lengths: np.ndarray) -> None:
        """Keep each row's first ``lengths[b]`` tokens (``lengths <= self.lengths``)."""
        ...

    def select(self, rows: np.ndarray) -> None:
        """Keep (and reorder to) the given rows."""
        ...


def _grow(buffer: np.ndarray, needed: int, axis: int) -> np.ndarray:
    capacity = buffer.shape[axis]
    if needed <= capacity:
        return buffer
    shape = list(buffer.shape)
    shape[axis] = max(needed, 2 * capacity, 16)
    grown = np.zeros(shape, dtype=buffer.dtype)
    index = [slice(None)] * buffer.ndim
    index[axis] = slice(0, capacity)
    grown[tuple(index)] = buffer
    return grown


def _with_rows(buffer: np.ndarray, count: int) -> np.ndarray:
    """``buffer [L,2,B,...]`` with ``count`` rows of zeros after its own (no copy of an empty buffer)."""
    shape = list(buffer.shape)
    shape[2] = count
    rows = np.zeros(shape, dtype=buffer.dtype)
    return np.concatenate([buffer, rows], axis=2) if buffer.shape[2] else rows


class CompactCache:
    """Left-aligned rows in a preallocated buffer ``[L,2,B,H,capacity,Dh]``."""

    def __init__(self, layers: int, batch: int, heads: int, head_dim: int, capacity: int = 64) -> None:
        self.buffer = np.zeros((layers, 2, batch, heads, capacity, head_dim), dtype=np.float32)
        self.lengths = np.zeros(batch, dtype=np.int64)

    def view(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        lengths = self.lengths if rows is None else self.lengths[rows]
        past = int(lengths.max(initial=0))
        if rows is None:
            past_kv = np.ascontiguousarray(self.buffer[:, :, :, :, :past])
        else:
            past_kv = self.buffer[:, :, rows, :, :past]  # fancy indexing copies: contiguous
        mask = (np.arange(past)[None, :] < lengths[:, None]).astype(np.int64)
        return past_kv, mask

    def append(self, new_kv: np.ndarray, counts: np.ndarray, rows: np.ndarray | None = None) -> None:
        targets = np.arange(len(self.lengths)) if rows is None else rows
        self.buffer = _grow(self.buffer, int((self.lengths[targets] + counts).max(initial=0)), axis=4)
        lengths = self.lengths[targets]
        if rows is None and np.all(counts == counts[0]) and np.all(lengths == lengths[0]):
            start, n = int(lengths[0]), int(counts[0])
            self.buffer[:, :, :, :, start : start + n] = new_kv[:, :, :, :, :n]
        else:  # one scatter of every row's real tokens, each to its own row's length onwards
            fed, offset = np.nonzero(np.arange(new_kv.shape[4])[None, :] < counts[:, None])
            self.buffer[:, :, targets[fed], :, lengths[fed] + offset] = new_kv[:, :, fed, :, offset]
        updated = self.lengths.copy()
        updated[targets] = lengths + counts
        self.lengths = updated

    def truncate(self, lengths: np.ndarray) -> None:
        self.lengths = np.minimum(self.lengths, lengths)

    def select(self, rows: np.ndarray) -> None:
        # Only the filled part is copied: the buffer's spare capacity would double the copy.
        self.lengths = self.lengths[rows]
        self.buffer = self.buffer[:, :, rows, :, : max(int(self.lengths.max(initial=0)), 1)]

    def add_rows(self, count: int) -> None:
        self.buffer = _with_rows(self.buffer, count)
        self.lengths = np.concatenate([self.lengths, np.zeros(count, dtype=np.int64)])

    def empty(self, rows: np.ndarray) -> None:
        lengths = self.lengths.copy()
        lengths[rows] = 0
        self.lengths = lengths


class MaskedCache:
    """Shared slot axis for all rows; each slot remembers its row's position or -1."""

    def __init__(self, layers: int, batch: int, heads: int, head_dim: int, capacity: int = 64) -> None:
        self.buffer = np.zeros((layers, 2, batch, heads, capacity, head_dim), dtype=np.float32)
        self.slot_pos = np.full((batch, capacity), -1, dtype=np.int64)
        self.used = 0
        self.lengths = np.zeros(batch, dtype=np.int64)

    def view(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        if rows is None:
            past_kv = np.ascontiguousarray(self.buffer[:, :, :, :, : self.used])
            return past_kv, (self.slot_pos[:, : self.used] >= 0).astype(np.int64)
        return self.buffer[:, :, rows, :, : self.used], (self.slot_pos[rows, : self.used] >= 0).astype(np.int64)

    def append(self, new_kv: np.ndarray, counts: np.ndarray, rows: np.ndarray | None = None) -> None:
        if rows is not None:  # every row takes the T slots; the others' stay masked out
            full = np.zeros((*new_kv.shape[:2], len(self.lengths), *new_kv.shape[3:]), dtype=new_kv.dtype)
            full[:, :, rows] = new_kv
            full_counts = np.zeros(len(self.lengths), dtype=np.int64)
            full_counts[rows] = counts
            new_kv, counts = full, full_counts
        t = new_kv.shape[4]
        self.buffer = _grow(self.buffer, self.used + t, axis=4)
        self.slot_pos = _grow(self.slot_pos + 1, self.used + t, axis=1) - 1
        self.buffer[:, :, :, :, self.used : self.used + t] = new_kv
        offsets = np.arange(t)[None, :]
        self.slot_pos[:, self.used : self.used + t] = np.where(
            offsets < counts[:, None], self.lengths[:, None] + offsets, -1
        )
        self.used += t
        self.lengths = self.lengths + counts

    def add_rows(self, count: int) -> None:
        self.buffer = _with_rows(self.buffer, count)
        self.slot_pos = np.concatenate([self.slot_pos, np.full((count, self.slot_pos.shape[1]), -1, dtype=np.int64)])
        self.lengths = np.concatenate([self.lengths, np.zeros(count, dtype=np.int64)])

    def empty(self, rows: np.ndarray) -> None:
        self.slot_pos[rows] = -1
        lengths = self.lengths.copy()
        lengths[rows] = 0
        self.lengths = lengths
        self._drop_dead_slots()

    def truncate(self, lengths: np.ndarray) -> None:
        self.lengths = np.minimum(self.lengths, lengths)
        self.slot_pos[self.slot_pos >= self.lengths[:, None]] = -1
        self._drop_dead_slots()

    def select(self, rows: np.ndarray) -> None:
        self.buffer = self.buffer[:, :, rows]
        self.slot_pos = self.slot_pos[rows]
        self.lengths = self.lengths[rows]
        self._drop_dead_slots()

    def _drop_dead_slots(self) -> None:
        """Once more than half the used slots are valid for no row (rolled back, or of rows that left
        or were emptied), squeeze them out, so a long-lived batch does not attend over ever more holes."""
        live = (self.slot_pos[:, : self.used] >= 0).any(axis=0)
        if self.used < 16 or live.sum() * 2 >= self.used:
            return
        keep = np.flatnonzero(live)
        self.buffer = np.ascontiguousarray(self.buffer[:, :, :, :, keep])
        self.slot_pos = np.ascontiguousarray(self.slot_pos[:, keep])
        self.used = len(keep)


CACHES: dict[str, Callable[[int, int, int, int], KVCache]] = {"compact": CompactCache, "masked": MaskedCache}
"""A cache layout's name -> its constructor ``(layers, batch, heads, head_dim)``."""
