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


async def settled(
    what: str, *, within: float = 0.0, tasks: bool = False, timeout: float = TIMEOUT
) -> None:
    """Let the loop run until nothing more is coming on it: no timer due by its own clock
    (`loop.time()`, which a test may steer) nor within `within` seconds of it, no
    callback ready and, with `tasks`, no task but this one unfinished. What such a timer
    or task would have done is then done: a test can assert that it did nothing, with no
    pause guessed at. Fails after `timeout` seconds (real time). (asyncio has no public
    view of its timers and ready callbacks: its own attributes are read.)"""
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + timeout
    while True:
        await asyncio.sleep(0)  # (a turn: a select, what it found and the timers due run)
        state = vars(loop)
        horizon = loop.time() + within
        coming = any(not h.cancelled() and h.when() <= horizon for h in state["_scheduled"])
        busy = tasks and len(asyncio.all_tasks(loop)) > 1
        if not (coming or state["_ready"] or busy):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")


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
