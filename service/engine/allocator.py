"""glibc's malloc under the service: freed memory given back to the system once decoding is idle.

Left to adapt, malloc raises its ``mmap`` threshold to the largest block freed so far (up to
32 MB) and its trim threshold to twice that, so after large batches their buffers (the arrays of
the decoder's cache, ONNX Runtime's arena regions) come from and go back to the heaps. By default
each thread allocating at once gets a heap (arena) of its own, up to eight per core.
``malloc_trim(0)`` (``release_free_memory``) gives back every whole free page of every heap, but
not the free space at the top of a thread's heap, which goes back only when a free in that heap
leaves more than the trim threshold there: a burst of 16-beam generations left 14-44 MB so, over
the inference and ONNX Runtime threads' heaps (``tests/system/test_memory.py``, CI's run of d4a1db1).
``configure_malloc`` makes every thread share the main heap, whose top ``malloc_trim`` does give
back (3 MB left after the same burst; serving as fast: ``bench serve`` at concurrency 1 and 32,
within the runs' noise), and fixes both thresholds at 32 MB (the largest ``mmap`` threshold glibc
takes), which keeps blocks up to 32 MB for reuse between batches (the README's overload drill:
295-371 MB a minute after the load without it, 273-304 MB with it; decoding as fast). It must run
before the process starts its threads: a heap made before stays. Where the C library is not glibc
(musl, macOS), both do nothing and say so.

``IdleRelease`` is when: once no batch has run for ``IDLE_S`` seconds, the memory decoding used goes
back to the system; never between the batches of a burst, whose next batch would only fault the same
pages in again. Its caller looks every ``idle_s`` seconds (``service.wiring`` does, for the gateway's
queues and for a worker).
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Sequence
from typing import Protocol

__all__ = ["ARENAS", "IDLE_S", "THRESHOLD", "IdleRelease", "configure_malloc", "release_free_memory"]

IDLE_S = 2.0  # no batch for this long: decoding is idle and its freed memory goes back

THRESHOLD = 32 * 1024 * 1024
ARENAS = 1  # every thread allocates from the main heap, which malloc_trim gives back whole
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8

_libc = ctypes.CDLL(None)
_mallopt = getattr(_libc, "mallopt", None)
_malloc_trim = getattr(_libc, "malloc_trim", None)


def configure_malloc() -> bool:
    """Limit glibc's heaps to ``ARENAS`` and fix its ``mmap`` and trim thresholds at ``THRESHOLD``, process-wide;
    call it before the process starts threads. False where not glibc."""
    if _mallopt is None or _malloc_trim is None:
        return False
    settings = ((_M_ARENA_MAX, ARENAS), (_M_MMAP_THRESHOLD, THRESHOLD), (_M_TRIM_THRESHOLD, THRESHOLD))
    taken = [bool(_mallopt(option, value)) for option, value in settings]
    return all(taken)


def release_free_memory() -> bool:
    """Return every whole free page of malloc's heaps to the system; False where not glibc."""
    if _malloc_trim is None:
        return False
    _malloc_trim(0)
    return True


class _Arenas(Protocol):
    def release_memory(self) -> None:
        """Shrink the memory arenas its sessions hold (``engine.Engine.release_memory``)."""


class IdleRelease:
    """Gives back the memory the ``engines``' batches used once decoding is idle (see the module docstring)."""

    def __init__(self, engines: Sequence[_Arenas], idle_s: float = IDLE_S) -> None:
        self.engines = list(engines)
        self.idle_s = idle_s
        self._last_batch = float("-inf")  # time.monotonic() when the latest batch ended
        self._shrunk = float("-inf")  # when the arenas were last shrunk

    def batch_ended(self) -> None:
        """Called by the decoding threads after each batch."""
        self._last_batch = time.monotonic()

    def idle(self) -> bool:
        """No batch has ended for ``idle_s`` seconds."""
        return time.monotonic() - self._last_batch >= self.idle_s

    def release(self) -> None:
        """Give malloc's free pages back; the first time after a batch, shrink every engine's memory arenas
        before (about 20 ms in all after a burst; 0.1 ms for what an idle process's other threads free
        meanwhile): call it in a thread."""
        if self._last_batch > self._shrunk:
            self._shrunk = time.monotonic()
            for engine in self.engines:
                engine.release_memory()
        release_free_memory()
