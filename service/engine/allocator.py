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
"""

from __future__ import annotations

import ctypes

__all__ = ["THRESHOLD", "keep_freed_blocks", "release_free_memory"]

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
