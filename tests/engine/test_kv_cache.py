"""Both cache layouts behave like a list of per-row token histories."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.kv_cache import CACHES

L, H, DH = 2, 2, 3


def _visible(cache, row: int) -> np.ndarray:
    """The keys of the valid entries of one row, in cache order."""
    past, mask = cache.view()
    return past[0, 0, row, 0, mask[row].astype(bool), 0]


ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 5), st.lists(st.integers(0, 5), min_size=3, max_size=3)),
        st.tuples(st.just("truncate"), st.lists(st.integers(0, 12), min_size=3, max_size=3)),
        st.tuples(st.just("select"), st.lists(st.integers(0, 2), min_size=1, max_size=3)),
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(sorted(CACHES)), program=ops)
def test_cache_matches_reference_histories(kind: str, program: list) -> None:
    cache = CACHES[kind](L, 3, H, DH, capacity=2)
    histories: list[list[float]] = [[], [], []]
    counter = 0.0
    for op in program:
        rows = len(histories)
        if op[0] == "append":
            width, raw = op[1], op[2]
            counts = np.array([min(c, width) for c in (raw * 3)[:rows]], dtype=np.int64)
            new = np.zeros((L, 2, rows, H, width, DH), dtype=np.float32)
            for r in range(rows):
                for t in range(width):
                    counter += 1
                    new[:, :, r, :, t, :] = counter
                    if t < counts[r]:
                        histories[r].append(counter)
            cache.append(new, counts)
        elif op[0] == "truncate":
            lengths = np.array((op[1] * 3)[:rows], dtype=np.int64)
            cache.truncate(lengths)
            histories = [h[: int(n)] for h, n in zip(histories, lengths, strict=True)]
        else:
            picked = [r for r in op[1] if r < rows] or [0]
            cache.select(np.array(picked))
            histories = [list(histories[r]) for r in picked]
        assert list(cache.lengths) == [len(h) for h in histories]
        for r, history in enumerate(histories):
            assert list(_visible(cache, r)) == history


def test_compact_view_is_contiguous_and_minimal() -> None:
    cache = CACHES["compact"](L, 2, H, DH)
    cache.append(np.ones((L, 2, 2, H, 4, DH), dtype=np.float32), np.array([4, 2]))
    past, mask = cache.view()
    assert past.flags.c_contiguous
    assert past.shape[4] == 4
    assert mask.tolist() == [[1, 1, 1, 1], [1, 1, 0, 0]]
