"""Panes restored without their programs, until started (`restore = "ask"` or `"lazy"`).

A held pane stands in its window with its id, size, title and old contents, and
says what would run there; its State is "held" and its Pid 0. It starts when
asked to (`Start`, `muxctl start`), or, in "ask" mode, when Enter is typed in
it (Ctrl-D dismisses it: the pane closes), or, in "lazy" mode, as soon as
anyone attaches to it or sends it input (that input then goes to the program).
Starting it is a spawn into the same pane (`PaneTable.spawn(into=...)`): the
clients attached to it stay attached, and see the program's output below the
old contents. Starting is never done inside the caller's own step (an attach,
a keystroke): it is scheduled on the loop, so the caller finishes first.
"""

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mux.panes.pane import Pane, PaneState
from mux.protocol.errors import InvalidArgument, MuxError
from mux.protocol.spawn_options import SpawnRequest

if TYPE_CHECKING:  # (the table makes its HeldPanes)
    from mux.panes.table import PaneTable

log = logging.getLogger(__name__)

ENTER = (b"\r", b"\n")
CTRL_D = b"\x04"


@dataclass(frozen=True)
class PendingStart:
    """How a held pane starts, and what it says meanwhile."""

    request: SpawnRequest
    waiting: str  # on its screen while held: what would run, and how to start it
    notice: str  # on its screen when it starts, before the program's output
    offer: str | None = None  # the application's reference (application-resurrection/1)
    asks: bool = True  # "ask": Enter starts, Ctrl-D dismisses; else started by any use
    started: Callable[[Pane], None] = field(default=lambda pane: None)  # then (a replay)
    saved: object = None  # what it was saved as: kept in snapshots while it waits


class HeldPanes:
    def __init__(self, table: "PaneTable", loop: asyncio.AbstractEventLoop) -> None:
        self._table = table
        self._loop = loop
        self._pending: dict[int, PendingStart] = {}
        # Told whenever a pane starts waiting or stops (the desktop's "N panes wait").
        self.listeners: list[Callable[[], None]] = []

    def __len__(self) -> int:
        return len(self._pending)

    def __contains__(self, pane_id: object) -> bool:
        return pane_id in self._pending

    def ids(self) -> list[int]:
        return list(self._pending)

    def pending(self, pane_id: int) -> PendingStart | None:
        return self._pending.get(pane_id)

    def add(self, pane: Pane, pending: PendingStart) -> None:
        self._pending[pane.id] = pending
        self._tell()

    def forget(self, pane_id: int) -> None:
        """The pane closed (dismissed, killed)."""
        if self._pending.pop(pane_id, None) is not None:
            self._tell()

    def start(self, pane: Pane) -> None:
        """Start the held pane's program now; InvalidArgument if it does not wait, the
        spawn's error if it cannot start (it then stays held, saying why)."""
        pending = self._pending.get(pane.id)
        if pending is None or pane.state is not PaneState.HELD:
            raise InvalidArgument(f"pane {pane.id} is not waiting to start")
        # At the size it has now: an attached client may have resized it meanwhile.
        request = dataclasses.replace(pending.request, rows=pane.rows, cols=pane.cols)
        try:
            self._table.spawn(
                request, pending.notice, offer=pending.offer, budgeted=False, into=pane
            )
        except Exception as e:
            reason = e.message if isinstance(e, MuxError) else f"it could not be started ({e})"
            pane.show_notice(f"mux: {pane.argv[0]} did not start: {reason}")
            log.error("pane %d (%s) did not start: %s", pane.id, pane.argv[0], reason)
            raise
        del self._pending[pane.id]
        log.info("pane %d: started %s (pid %d) in window %d, as asked", *pane.described)
        pending.started(pane)
        self._tell()

    def wanted(self, pane: Pane, data: bytes | None) -> None:
        """Someone attached to a held pane (`data` None) or typed into it."""
        pending = self._pending.get(pane.id)
        if pending is None:
            return
        loop = self._loop
        if not pending.asks:
            loop.call_soon(self._start_then_send, pane, data)
        elif data is not None and CTRL_D in data:
            loop.call_soon(self._dismiss, pane)
        elif data is not None and any(key in data for key in ENTER):
            loop.call_soon(self._start_then_send, pane, None)

    def _start_then_send(self, pane: Pane, data: bytes | None) -> None:
        if pane.id not in self._pending:
            return  # started or closed meanwhile
        try:
            self.start(pane)
        except Exception:
            return  # said on its screen and in the log
        if data:
            pane.send_input(data)

    def _dismiss(self, pane: Pane) -> None:
        if pane.id in self._pending:
            log.info("pane %d (%s): dismissed before it started", pane.id, pane.argv[0])
            self._table.close(pane.id)

    def _tell(self) -> None:
        for listener in self.listeners:
            listener()
