"""Giving freed heap memory back to the operating system, and pacing the collector.

Freeing an emulator returns its memory to malloc, which keeps it for later
allocations; without a trim, the service's RSS would never shrink after
screens hibernate. glibc's malloc_trim releases free pages anywhere in the
heap. Elsewhere (musl, macOS) this does nothing.
"""

import ctypes
import functools
import gc
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols, libc's among them
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_free_memory() -> None:
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


# The cyclic collector's youngest generation is collected after this many more
# allocations than frees (CPython's default: 700). muxd frees almost everything by
# reference counting, and each young collection promotes what is merely in flight
# (a call being answered, a snapshot being captured) until a full collection is due:
# under 500 busy panes (bench/load.py), 7 full collections a run of 11-135 ms each
# (the loop waits), against 3-4 of 11-100 ms with this, in every one of five runs.
YOUNG_COLLECTION_THRESHOLD = 10_000


def pace_the_collector() -> None:
    """Fewer, not longer, collections: the older generations keep their defaults.

    Called once muxd is built and before it serves: what exists then (every
    imported module's functions, classes and tables, ~43,000 objects, and the
    service's own parts) lives as long as muxd, so it is frozen out of the
    collector's sight, after one collection so that no garbage is frozen with
    it. A full collection then walks only what came since: 15 ms less of each
    (measured), each one a pause of the event loop.
    """
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, old)
    gc.collect()
    gc.freeze()
