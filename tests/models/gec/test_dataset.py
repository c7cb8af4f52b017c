"""Packed pairs and length-bucketed batches."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.gec.dataset import PackedPairs, batch_plan, iterate_batches, make_batch
from models.gec.tokenizer import BOS_ID, EOS_ID, PAD_ID


def _pairs(rows: list[tuple[list[int], list[int]]]) -> PackedPairs:
    def flat(seqs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        offsets = np.concatenate([[0], np.cumsum([len(s) for s in seqs])]).astype(np.int64)
        return np.concatenate([np.array(s, dtype=np.int32) for s in seqs]), offsets

    src, src_off = flat([[*s, EOS_ID] for s, _ in rows])
    tgt, tgt_off = flat([[*t, EOS_ID] for _, t in rows])
    return PackedPairs(src, src_off, tgt, tgt_off)


def test_save_load_concat(tmp_path) -> None:
    a = _pairs([([5, 6], [5]), ([7], [7, 8, 9])])
    b = _pairs([([10, 11, 12], [10, 12])])
    a.save(tmp_path / "a.npz")
    joined = PackedPairs.concat([PackedPairs.load(tmp_path / "a.npz"), b])
    assert len(joined) == 3
    assert joined.src_row(2).tolist() == [10, 11, 12, EOS_ID]
    assert joined.tgt_row(1).tolist() == [7, 8, 9, EOS_ID]
    assert joined.lengths().tolist() == [3, 4, 4]


def test_make_batch_shifts_targets_into_decoder_inputs() -> None:
    data = _pairs([([5, 6], [5]), ([7], [7, 8, 9])])
    batch = make_batch(data, np.array([0, 1]), pad_multiple=4)
    assert batch.input_ids.tolist() == [[5, 6, EOS_ID, PAD_ID], [7, EOS_ID, PAD_ID, PAD_ID]]
    assert batch.attention_mask.tolist() == [[1, 1, 1, 0], [1, 1, 0, 0]]
    assert batch.decoder_input_ids.tolist() == [[BOS_ID, 5, PAD_ID, PAD_ID], [BOS_ID, 7, 8, 9]]
    assert batch.labels.tolist() == [[5, EOS_ID, -100, -100], [7, 8, 9, EOS_ID]]
    assert batch.tokens == 5 + 6


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 120), min_size=1, max_size=300), st.integers(128, 2048), st.integers(0, 5))
def test_batch_plan_covers_every_row_once_within_budget(lengths: list[int], max_tokens: int, seed: int) -> None:
    plan = batch_plan(np.array(lengths), max_tokens, seed)
    rows = np.concatenate(plan)
    assert sorted(rows.tolist()) == list(range(len(lengths)))
    for batch in plan:
        padded = -(-max(lengths[i] for i in batch) // 8) * 8
        assert len(batch) == 1 or padded * len(batch) <= max_tokens
    assert [b.tolist() for b in batch_plan(np.array(lengths), max_tokens, seed)] == [b.tolist() for b in plan]


def test_iterate_batches_resumes_at_a_batch_index() -> None:
    data = _pairs([([5 + i % 7] * (1 + i % 9), [6] * (1 + i % 5)) for i in range(200)])
    full = list(iterate_batches(data, 64, seed=3))
    resumed = list(iterate_batches(data, 64, seed=3, start=4))
    assert [i for i, _ in resumed] == [i for i, _ in full[4:]]
    assert all(np.array_equal(a.input_ids, b.input_ids) for (_, a), (_, b) in zip(resumed, full[4:], strict=True))
