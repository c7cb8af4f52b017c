"""Per-sequence self-attention caches for a batch, in two layouts with one interface.

A decoder pass appends the keys/values of T new tokens for every row; a row may then keep
only some of them (aggressive decoding rolls back at its own mismatch) or be dropped or
reordered (finished rows, beam search).

- ``CompactCache``: each row's valid entries are always ``[0, length)``; new entries are
  written at the row's own length, so rolling back is just lowering the length.
- ``MaskedCache``: every pass appends T slots for all rows; rolled-back slots stay in place
  and are masked out. Positions are explicit, so holes do not shift them. Cheaper appends,
  but the past the decoder attends over grows with the holes.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class KVCache(Protocol):
    lengths: np.ndarray  # [B] tokens in the cache per row (= position of the next token)

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        """``past_kv [L,2,B,H,P,Dh]`` (contiguous) and ``past_mask [B,P]`` (int64, 1 = valid)."""
        ...

    def append(self, new_kv: np.ndarray, counts: np.ndarray) -> None:
        """Add the first ``counts[b]`` of the T new entries of each row b."""
        ...

    def truncate(self, lengths: np.ndarray) -> None:
        """Keep only each row's first ``lengths[b]`` tokens (``lengths <= self.lengths``)."""
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


class CompactCache:
    """Left-aligned rows in a preallocated buffer ``[L,2,B,H,capacity,Dh]``."""

    def __init__(self, layers: int, batch: int, heads: int, head_dim: int, capacity: int = 64) -> None:
        self.buffer = np.zeros((layers, 2, batch, heads, capacity, head_dim), dtype=np.float32)
        self.lengths = np.zeros(batch, dtype=np.int64)

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        past = int(self.lengths.max(initial=0))
        past_kv = np.ascontiguousarray(self.buffer[:, :, :, :, :past])
        mask = (np.arange(past)[None, :] < self.lengths[:, None]).astype(np.int64)
        return past_kv, mask

    def append(self, new_kv: np.ndarray, counts: np.ndarray) -> None:
        self.buffer = _grow(self.buffer, int((self.lengths + counts).max(initial=0)), axis=4)
        if np.all(counts == counts[0]) and np.all(self.lengths == self.lengths[0]):
            start, n = int(self.lengths[0]), int(counts[0])
            self.buffer[:, :, :, :, start : start + n] = new_kv[:, :, :, :, :n]
        else:
            for row in range(len(counts)):
                start, n = int(self.lengths[row]), int(counts[row])
                self.buffer[:, :, row, :, start : start + n] = new_kv[:, :, row, :, :n]
        self.lengths = self.lengths + counts

    def truncate(self, lengths: np.ndarray) -> None:
        self.lengths = np.minimum(self.lengths, lengths)

    def select(self, rows: np.ndarray) -> None:
        self.buffer = self.buffer[:, :, rows]
        self.lengths = self.lengths[rows]


class MaskedCache:
    """Shared slot axis for all rows; each slot remembers its row's position or -1."""

    def __init__(self, layers: int, batch: int, heads: int, head_dim: int, capacity: int = 64) -> None:
        self.buffer = np.zeros((layers, 2, batch, heads, capacity, head_dim), dtype=np.float32)
        self.slot_pos = np.full((batch, capacity), -1, dtype=np.int64)
        self.used = 0
        self.lengths = np.zeros(batch, dtype=np.int64)

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        past_kv = np.ascontiguousarray(self.buffer[:, :, :, :, : self.used])
        return past_kv, (self.slot_pos[:, : self.used] >= 0).astype(np.int64)

    def append(self, new_kv: np.ndarray, counts: np.ndarray) -> None:
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

    def truncate(self, lengths: np.ndarray) -> None:
        self.lengths = np.minimum(self.lengths, lengths)
        self.slot_pos[self.slot_pos >= self.lengths[:, None]] = -1

    def select(self, rows: np.ndarray) -> None:
        self.buffer = self.buffer[:, :, rows]
        self.slot_pos = self.slot_pos[rows]
        self.lengths = self.lengths[rows]


CACHES = {"compact": CompactCache, "masked": MaskedCache}
