"""Giving freed heap memory back to the operating system, and keeping the
collector off what lives as long as the process.

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


def exempt_from_collection() -> None:
    """Everything that exists now (modules, classes, the libraries' tables) lives as
    long as the process: the cyclic collector stops scanning it. Called once at
    start, before any pane exists (a pane's objects form cycles that only the
    collector frees). Each full collection walked them again: 20-25 ms with no pane
    at all, and under hundreds of busy panes, full collections every few seconds
    held the loop 50-160 ms (a keystroke's echo waited as long)."""
    gc.collect()  # garbage of the start-up, frozen, would never be freed
    gc.freeze()
