"""glibc's malloc under the service: freed memory given back to the system once decoding is idle.

Left to adapt, malloc raises its ``mmap`` threshold to the largest block freed so far (up to
32 MB) and its trim threshold to twice that, so after large batches their buffers (the arrays of
the decoder's cache, ONNX Runtime's arena regions) come from and go back to the heaps, one per
allocating thread. ``malloc_trim(0)`` (``release_free_memory``) gives back every whole free page
of every heap, except the free space at the top of a thread's heap, which goes back only when a
free leaves more than the trim threshold there. ``keep_freed_blocks`` fixes both thresholds at
32 MB (the largest ``mmap`` threshold glibc takes), which bounds that top and keeps blocks up to
32 MB for reuse between batches (the README's overload drill: 295-371 MB a minute after the load
without it, 273-304 MB with it; decoding as fast). Where the C library is not glibc (musl,
macOS), both do nothing and say so.

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

__all__ = ["IDLE_S", "THRESHOLD", "IdleRelease", "keep_freed_blocks", "release_free_memory"]

IDLE_S = 2.0  # no batch for this long: decoding is idle and its freed memory goes back

THRESHOLD = 32 * 1024 * 1024
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

_libc = ctypes.CDLL(None)
_mallopt = getattr(_libc, "mallopt", None)
_malloc_trim = getattr(_libc, "malloc_trim", None)


def keep_freed_blocks() -> bool:
    """Fix glibc's ``mmap`` and trim thresholds at ``THRESHOLD`` (process-wide); False where not glibc."""
    if _mallopt is None or _malloc_trim is None:
        return False
    return bool(_mallopt(_M_MMAP_THRESHOLD, THRESHOLD)) and bool(_mallopt(_M_TRIM_THRESHOLD, THRESHOLD))


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
        """Called by the worker threads after each batch."""
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
