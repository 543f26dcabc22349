"""Freeing the screen emulators nobody has read for a while (see mux.terminal.screen)."""

import asyncio
import time
from collections.abc import Callable, Iterable

from mux.panes.pane import Pane
from mux.system.memory import release_free_memory

MAX_SWEEP_INTERVAL = 10.0


class ScreenSweeper:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        idle_seconds: float,
        panes: Callable[[], Iterable[Pane]],
    ) -> None:
        self._loop = loop
        self._idle_seconds = idle_seconds
        self._interval = min(MAX_SWEEP_INTERVAL, idle_seconds)
        self._panes = panes
        self._timer = loop.call_later(self._interval, self._sweep)

    def _sweep(self) -> None:
        try:
            cutoff = time.monotonic() - self._idle_seconds
            freed = [pane for pane in self._panes() if pane.hibernate_screen_if_idle_since(cutoff)]
            if freed:
                # Freed memory goes back to malloc, not to the system, without this.
                release_free_memory()
        finally:
            self._timer = self._loop.call_later(self._interval, self._sweep)

    def stop(self) -> None:
        self._timer.cancel()
