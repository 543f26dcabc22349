"""The pane table's effects on the rest of the service: what follows a change to it
(`TableChanges`), and the end of its panes at a stop (`hang_up_panes`)."""

import asyncio
import time
from collections.abc import Sequence

from mux.lifecycle.session_keeper import SessionKeeper
from mux.lifecycle.status import StatusReporter
from mux.panes.pane import Pane
from mux.panes.table import PaneTable
from mux.panes.windows import Window

# After the hang-up, how long the panes' processes get to go before the stop goes on.
LAST_EXITS_SECONDS = 2.0


class TableChanges:
    """Any change to the pane table or its windows: the snapshot and the status line
    follow it."""

    def __init__(self, keeper: SessionKeeper, status: StatusReporter) -> None:
        self._keeper = keeper
        self._status = status

    def _changed(self) -> None:
        self._keeper.table_changed()
        self._status.changed()

    def pane_added(self, pane: Pane) -> None:
        self._changed()

    def pane_removed(self, pane: Pane) -> None:
        self._keeper.pane_removed(pane.id)
        self._changed()

    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None:
        self._changed()

    def pane_exited(self, pane: Pane) -> None:
        self._changed()

    def window_added(self, window: Window) -> None:
        self._changed()

    def window_changed(self, window: Window) -> None:
        self._changed()

    def window_removed(self, window: Window) -> None:
        self._changed()


async def hang_up_panes(table: PaneTable, grace_seconds: float) -> None:
    """Hang up every pane like closed terminal windows, then wait for them to go."""
    table.close_all()
    await _wait_for_exits(table, grace_seconds)
    table.end_closing_sessions()
    await _wait_for_exits(table, LAST_EXITS_SECONDS)


async def _wait_for_exits(table: PaneTable, seconds: float) -> None:
    # Our children's exits arrive through the loop (pidfd readers): keep it turning.
    deadline = time.monotonic() + seconds
    while table.lingering_processes() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
