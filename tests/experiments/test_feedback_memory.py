"""The in-memory feedback ledger's bound in bytes: past it the oldest ids are forgotten first, the bytes it
counts are those of the ids it holds, and what it really holds (tracemalloc) stays within the bound."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.experiments.feedback import EditOrigin, MemoryLedger, UnknownEditsError, entry_bytes

TTL_S = 3600.0


def answer_origins(first: int, count: int, width: int) -> dict[str, EditOrigin]:
    """``count`` ids of one answer, numbered from ``first``, every string its own and ``width`` characters more."""
    pad = "x" * width
    return {
        f"edit-{first + i:010d}{pad}": EditOrigin(
            f"req-{first + i}{pad}", f"exp-{first + i}", f"run-{first + i}", "arm", "model", "1", f"type-{i}"
        )
        for i in range(count)
    }


def kept_after(remembered: list[tuple[str, EditOrigin]], max_bytes: int) -> list[str]:
    """The newest ids whose bytes, together, are within ``max_bytes``: what the ledger should still hold."""
    kept, total = [], 0
    for edit_id, origin in reversed(remembered):
        total += entry_bytes(edit_id, origin)
        if total > max_bytes:
            break
        kept.append(edit_id)
    return kept[::-1]


@settings(max_examples=60, deadline=None)
@given(
    answers=st.lists(st.tuples(st.integers(1, 6), st.integers(0, 200)), min_size=1, max_size=60),
    max_bytes=st.integers(1, 40_000),
)
def test_the_ledger_keeps_the_newest_ids_that_fit_and_counts_their_bytes(
    answers: list[tuple[int, int]], max_bytes: int
) -> None:
    async def scenario() -> None:
        ledger = MemoryLedger(TTL_S, 10**9, max_bytes)
        remembered: list[tuple[str, EditOrigin]] = []
        for count, width in answers:
            origins = answer_origins(len(remembered), count, width)
            await ledger.remember(origins)
            remembered += origins.items()
        kept = kept_after(remembered, max_bytes)
        sizes = dict((edit_id, entry_bytes(edit_id, origin)) for edit_id, origin in remembered)
        assert ledger.bytes == sum(sizes[edit_id] for edit_id in kept) <= max_bytes
        if kept:
            assert len((await ledger.record(kept, "accepted")).counted) == len(kept)
        forgotten = [edit_id for edit_id, _ in remembered[: len(remembered) - len(kept)]]
        for edit_id in forgotten[-1:] + forgotten[:1]:
            with pytest.raises(UnknownEditsError):
                await ledger.record([edit_id], "accepted")

    asyncio.run(scenario())


def test_an_id_remembered_again_is_counted_once() -> None:
    async def scenario() -> None:
        ledger = MemoryLedger(TTL_S, 10**9, 10**6)
        origins = answer_origins(0, 3, 10)
        await ledger.remember(origins)
        await ledger.remember(origins)
        assert ledger.bytes == sum(entry_bytes(edit_id, origin) for edit_id, origin in origins.items())

    asyncio.run(scenario())


def test_what_the_ledger_holds_stays_within_its_bytes_filled_ten_times_over() -> None:
    """tracemalloc measures what a ledger holds after answers worth ten times its bound: no more than the bound
    (``entry_bytes`` counts high), and not so far below it that the bound would mislead (over a quarter)."""
    max_bytes = 2**20

    async def fill(ledger: MemoryLedger) -> None:
        served = 0
        while served * 400 < 10 * max_bytes:  # an id takes some 400-800 bytes
            await ledger.remember(answer_origins(served, 3, 20))
            served += 3

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        ledger = MemoryLedger(TTL_S, 10**9, max_bytes)
        asyncio.run(fill(ledger))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert ledger.bytes <= max_bytes
    assert max_bytes / 4 < held <= max_bytes, f"the ledger holds {held} bytes, counted {ledger.bytes}"


def test_a_ledger_needs_a_positive_bound() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        MemoryLedger(TTL_S, 10, 0)
