"""Freeing the screen emulators nobody has read for a while (see mux.terminal.screen)."""

import asyncio
import time
from collections.abc import Callable, Iterable

from mux.panes.pane import Pane
from mux.panes.periodic import Periodic
from mux.system.memory import release_free_memory

MAX_SWEEP_INTERVAL = 10.0


class ScreenSweeper:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        idle_seconds: float,
        panes: Callable[[], Iterable[Pane]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clock`: now, on the clock of a screen's `last_used`."""
        self._idle_seconds = idle_seconds
        self._panes = panes
        self._clock = clock
        self._timer = Periodic(loop, min(MAX_SWEEP_INTERVAL, idle_seconds), self.sweep)

    def start(self) -> None:
        self._timer.start()

    def sweep(self) -> None:
        cutoff = self._clock() - self._idle_seconds
        freed = [pane for pane in self._panes() if pane.hibernate_screen_if_idle_since(cutoff)]
        if freed:
            # Freed memory goes back to malloc, not to the system, without this.
            release_free_memory()

    def stop(self) -> None:
        self._timer.stop()
