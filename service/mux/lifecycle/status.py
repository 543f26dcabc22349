"""The one-line status a person sees in `systemctl --user status mux`, and sending it.

See docs/systemd.md: `STATUS=` says how many panes mux holds, on which bus,
and any problem a person should know about (a refused session, failing
autosaves, panes that could not be restored).
"""

import asyncio
from collections.abc import Callable, Sequence

from mux.panes.pane import Pane
from mux.system.notify import Supervisor


def status_line(panes: Sequence[Pane], bus_kind: str, not_restored: int = 0) -> str:
    running = sum(1 for pane in panes if pane.is_running)
    exited = len(panes) - running
    noun = "pane" if len(panes) == 1 else "panes"
    detail = f" ({running} running, {exited} exited)" if exited else ""
    problems = f"; {not_restored} could not be restored" if not_restored else ""
    return f"{len(panes)} {noun}{detail}{problems}; {bus_kind} bus"


class StatusReporter:
    """Sends `STATUS=` when something changed, coalesced: many pane events in one
    loop turn make one message."""

    def __init__(self, supervisor: Supervisor, compose: Callable[[], str]) -> None:
        """`compose()`: the status line as it is now."""
        self._supervisor = supervisor
        self._compose = compose
        self._pending = False

    def line(self) -> str:
        return self._compose()

    def changed(self) -> None:
        if self._pending or not self._supervisor.active:
            return
        self._pending = True
        asyncio.get_running_loop().call_soon(self._send)

    def _send(self) -> None:
        self._pending = False
        self._supervisor.status(self._compose())
