"""``bench.heap_diff``: the allocation site that grew between the two snapshots is named, with its
growth."""

from __future__ import annotations

import threading
import time
import tracemalloc
from pathlib import Path

from bench.heap_diff import diff_later


def test_the_site_that_grew_between_the_snapshots_heads_the_diff(tmp_path: Path) -> None:
    out = tmp_path / "diff.txt"
    held: list[str] = []
    tracemalloc.start()
    try:
        snapshots = threading.Thread(target=diff_later, args=(0.1, 0.6, out))
        snapshots.start()
        time.sleep(0.2)  # after the first snapshot
        held.extend(f"{i:08d}" * 20 for i in range(20_000))  # some 4 MB, from this line
        snapshots.join()
    finally:
        tracemalloc.stop()
    lines = out.read_text().splitlines()
    assert lines[0].startswith("traced ")
    assert "test_heap_diff.py:" in lines[1] and "(+4" in lines[1] and "KiB" in lines[1]
    assert len(held) == 20_000
