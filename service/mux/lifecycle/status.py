"""The one-line status a person sees in `systemctl --user status mux`, and sending it.

See docs/systemd.md: `STATUS=` says how many panes mux holds, on which bus,
and any problem a person should know about (a refused session, failing
autosaves, panes that could not be restored).
"""

import asyncio
from collections.abc import Callable, Sequence

from mux.panes.pane import Pane
from mux.protocol.names import EXIT_STATUS_NOT_STARTED
from mux.system.notify import Supervisor

HELD = "held"  # a PaneState's value: restored, waiting to be started (SPEC §13)


def status_line(panes: Sequence[Pane], bus_kind: str, not_restored: int = 0) -> str:
    """`5 panes (2 running, 1 exited, 1 waiting to start, 1 not restored); 1 could not
    be restored; session bus`. A place holder of a pane that was not restored, and a
    held pane, are neither running nor exited: they are named for what they are."""
    running = sum(1 for pane in panes if pane.is_running)
    held = sum(1 for pane in panes if pane.state == HELD)
    placeholders = sum(
        1
        for pane in panes
        if pane.state == "exited" and pane.exit_status == EXIT_STATUS_NOT_STARTED
    )
    exited = len(panes) - running - held - placeholders
    noun = "pane" if len(panes) == 1 else "panes"
    parts = [f"{running} running"]
    parts += [f"{exited} exited"] if exited else []
    parts += [f"{held} waiting to start"] if held else []
    parts += [f"{placeholders} not restored"] if placeholders else []
    detail = f" ({', '.join(parts)})" if len(parts) > 1 else ""
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
