"""Helpers for tests that drive mux's parts on a real asyncio loop, without a muxd."""

import asyncio
import os
import time
from collections.abc import Callable

TIMEOUT = 10.0


async def until(condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> None:
    """Let the loop run until `condition` holds; fail after `timeout` seconds (real time)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


class ThisProcess:
    """A launch that is this test process: its own owner (an explicit launch) for a
    resurrection endpoint."""

    pid = os.getpid()
    is_running = True

    def __init__(self) -> None:
        self.generations: list[int | None] = []

    def foreground_group(self) -> int | None:
        return None

    def checkpoint_changed(self, generation: int | None) -> None:
        self.generations.append(generation)
