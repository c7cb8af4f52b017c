"""Python's cyclic garbage collector in a serving process: what start-up made is frozen out of its collections, and
the youngest generation is collected less often.

A served model is hundreds of thousands of Python objects that live as long as the process (the spelling stage's
dictionaries, word lists, the edit classifier's tables). Left to the collector, each full collection walks all of
them: on the bundled model 157 ms of the event loop's thread each, one every 500 requests at 32 clients, and with
the younger generations' collections 0.4 ms a request in all (``docs/benchmarks.md``, "Python's collector").
``configure_collector`` collects once, then moves every object still alive into the collector's permanent
generation (``gc.freeze``), which no collection walks; what requests make afterwards is collected as before. It
also collects the youngest generation once ``YOUNG_THRESHOLD`` more objects are alive than at its last collection,
not 700: the requests in flight hold more than 700, so the default collected one every five requests or so, walking
what they held (the younger generations' collections still took 0.08 ms a request after the freeze). Garbage in
reference cycles waits for the next collection, a few MB at most.

``gecserve serve`` (each front end, with ``--front-ends``) calls it once its models are loaded; a model loaded later
is walked as before. (The engine process and ``gecserve worker`` hold the ONNX Runtime sessions, few Python objects:
they leave the collector as it is.) A frozen object in a reference cycle is never freed, even once unreachable: when
a model is unloaded or replaced (``service.repository``), ``thaw_objects`` hands every frozen object back to the
collector, so the drained model's cycles are freed; full collections walk everything again from then on.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "configure_collector", "thaw_objects"]

YOUNG_THRESHOLD = 7000  # more objects alive than at the youngest generation's last collection (Python's default: 700)


def configure_collector() -> int:
    """Collect, freeze every object alive and raise the youngest generation's threshold (the module docstring);
    returns how many objects are frozen."""
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, oldest)
    return gc.get_freeze_count()


def thaw_objects() -> None:
    """Hand every frozen object back to the collector (``gc.unfreeze``): a drained model's cycles can be freed."""
    gc.unfreeze()
