"""Giving freed heap memory back to the operating system.

Freeing an emulator returns its memory to malloc, which keeps it for later
allocations; without a trim, the service's RSS would never shrink after
screens hibernate. glibc's malloc_trim releases free pages anywhere in the
heap. Elsewhere (musl, macOS) this does nothing.
"""

import ctypes
import functools
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
