"""What start-up made leaves the collector's walks and stays alive, and the youngest generation waits for more; what is
made afterwards is still collected; once thawed, the frozen objects' cycles are freed when unreachable. In a child
process: the collector is process-wide."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import gc, weakref
    from service.engine.collector import YOUNG_THRESHOLD, configure_collector, thaw_objects

    class Node:
        pass

    def ring(size):
        nodes = [Node() for _ in range(size)]
        for a, b in zip(nodes, nodes[1:] + nodes[:1]):
            a.next = b
        return nodes[0]

    kept = [ring(1000) for _ in range(50)]  # start-up objects, in reference cycles
    frozen = configure_collector()
    assert frozen >= 50 * 1000, frozen
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD > 700
    walked = {id(o) for o in gc.get_objects()}
    assert id(kept[0]) not in walked and id(kept[0].next) not in walked  # no collection walks them
    later = ring(10)
    watch = weakref.ref(later)
    del later
    assert gc.collect() >= 10 and watch() is None  # garbage made afterwards is collected
    assert kept[0].next.next is not None  # the frozen ones stay alive
    first = weakref.ref(kept[0])
    del kept
    gc.collect()
    assert first() is not None  # frozen and unreachable, in a cycle: never freed
    thaw_objects()
    assert gc.get_freeze_count() == 0 and gc.collect() >= 50 * 1000 and first() is None  # thawed: freed
    print("ok")
    """
)


def test_start_up_objects_are_frozen_later_garbage_collected_and_thawed_cycles_freed() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
