"""Tokenized training sets packed as flat numpy arrays, and length-bucketed batches of them.

A packed set is an ``.npz`` with ``src``/``tgt`` (concatenated token ids) and ``src_off``/
``tgt_off`` (row offsets). Source rows end with ``</s>``; target rows are the corrected text
followed by ``</s>``; the decoder input is ``<s>`` + target without its last token.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from models.gec.tokenizer import BOS_ID, EOS_ID, PAD_ID


@dataclass
class PackedPairs:
    """Token id rows of sources and targets, stored flat with offsets."""

    src: np.ndarray
    src_off: np.ndarray
    tgt: np.ndarray
    tgt_off: np.ndarray

    def __len__(self) -> int:
        return len(self.src_off) - 1

    def src_row(self, i: int) -> np.ndarray:
        return self.src[self.src_off[i] : self.src_off[i + 1]]

    def tgt_row(self, i: int) -> np.ndarray:
        return self.tgt[self.tgt_off[i] : self.tgt_off[i + 1]]

    def lengths(self) -> np.ndarray:
        """Per row, the longer of the source and target lengths."""
        return np.maximum(np.diff(self.src_off), np.diff(self.tgt_off))

    def save(self, path: Path) -> None:
        np.savez(path, src=self.src, src_off=self.src_off, tgt=self.tgt, tgt_off=self.tgt_off)

    @classmethod
    def load(cls, path: Path) -> PackedPairs:
        data = np.load(path)
        return cls(data["src"], data["src_off"], data["tgt"], data["tgt_off"])

    @classmethod
    def concat(cls, parts: Sequence[PackedPairs]) -> PackedPairs:
        def join(arrays: list[np.ndarray], offsets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
            out_off = [np.zeros(1, dtype=np.int64)]
            base = 0
            for off in offsets:
                out_off.append(off[1:] + base)
                base += int(off[-1])
            return np.concatenate(arrays), np.concatenate(out_off)

        src, src_off = join([p.src for p in parts], [p.src_off for p in parts])
        tgt, tgt_off = join([p.tgt for p in parts], [p.tgt_off for p in parts])
        return cls(src, src_off, tgt, tgt_off)


def pack_pairs(tokenizer: Tokenizer, sources: Sequence[str], targets: Sequence[str], max_len: int) -> PackedPairs:
    """Tokenize pairs, append ``</s>``, and drop pairs with a side longer than ``max_len``.

    Long pairs are dropped rather than truncated: a truncated target teaches the model to
    delete the end of sentences.
    """
    src_ids = [e.ids for e in tokenizer.encode_batch(list(sources), add_special_tokens=False)]
    tgt_ids = [e.ids for e in tokenizer.encode_batch(list(targets), add_special_tokens=False)]
    keep = [i for i in range(len(src_ids)) if len(src_ids[i]) < max_len and len(tgt_ids[i]) < max_len]

    def flat(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        lengths = np.array([len(rows[i]) + 1 for i in keep], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        values = np.empty(int(offsets[-1]), dtype=np.int32)
        for row_index, i in enumerate(keep):
            start = offsets[row_index]
            values[start : start + lengths[row_index] - 1] = rows[i]
            values[start + lengths[row_index] - 1] = EOS_ID
        return values, offsets

    src, src_off = flat(src_ids)
    tgt, tgt_off = flat(tgt_ids)
    return PackedPairs(src, src_off, tgt, tgt_off)


@dataclass
class Batch:
    """Padded tensors (as numpy) for one training step."""

    input_ids: np.ndarray
    attention_mask: np.ndarray
    decoder_input_ids: np.ndarray
    labels: np.ndarray  # -100 where padded

    @property
    def tokens(self) -> int:
        return int(self.attention_mask.sum() + (self.labels != -100).sum())


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def batch_plan(lengths: np.ndarray, max_tokens: int, seed: int, pad_multiple: int = 8) -> list[np.ndarray]:
    """Group row indices into batches of similar length under a padded token budget.

    Rows are shuffled, sorted by length within large chunks, cut into batches whose padded
    size (rows x longest row, rounded up to ``pad_multiple``) stays under ``max_tokens``, and
    the batch order is shuffled. Deterministic for a seed.
    """
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(lengths))
    chunk = 100 * max(1, max_tokens // 32)
    batches: list[np.ndarray] = []
    for start in range(0, len(order), chunk):
        part = order[start : start + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        current: list[int] = []
        longest = 0
        for index in part:
            candidate = max(longest, _round_up(int(lengths[index]), pad_multiple))
            if current and candidate * (len(current) + 1) > max_tokens:
                batches.append(np.array(current))
                current, longest = [], 0
                candidate = _round_up(int(lengths[index]), pad_multiple)
            current.append(int(index))
            longest = candidate
        if current:
            batches.append(np.array(current))
    rng.shuffle(batches)
    return batches


def make_batch(data: PackedPairs, rows: np.ndarray, pad_multiple: int = 8) -> Batch:
    """Pad the selected rows into encoder inputs, decoder inputs and labels."""
    srcs = [data.src_row(i) for i in rows]
    tgts = [data.tgt_row(i) for i in rows]
    s_len = _round_up(max(len(s) for s in srcs), pad_multiple)
    t_len = _round_up(max(len(t) for t in tgts), pad_multiple)
    input_ids = np.full((len(rows), s_len), PAD_ID, dtype=np.int64)
    attention_mask = np.zeros((len(rows), s_len), dtype=np.int64)
    decoder_input_ids = np.full((len(rows), t_len), PAD_ID, dtype=np.int64)
    labels = np.full((len(rows), t_len), -100, dtype=np.int64)
    for r, (s, t) in enumerate(zip(srcs, tgts, strict=True)):
        input_ids[r, : len(s)] = s
        attention_mask[r, : len(s)] = 1
        decoder_input_ids[r, 0] = BOS_ID
        decoder_input_ids[r, 1 : len(t)] = t[:-1]
        labels[r, : len(t)] = t
    return Batch(input_ids, attention_mask, decoder_input_ids, labels)


def iterate_batches(data: PackedPairs, max_tokens: int, seed: int, start: int = 0) -> Iterator[tuple[int, Batch]]:
    """Yield (index, batch) over one epoch's plan, skipping the first ``start`` batches."""
    plan = batch_plan(data.lengths(), max_tokens, seed)
    for index in range(start, len(plan)):
        yield index, make_batch(data, plan[index])
