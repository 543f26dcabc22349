"""Closed panes within their grace period (docs/dbus-api.md#manager-methods: Kill).

A closed pane is hung up at once; whatever is left of its session
`kill_grace_seconds` later (a program or job that ignores SIGHUP) is killed,
or at once when the service stops. Its program is reaped whenever it exits,
so no zombie is left behind.
"""

import asyncio
import logging
from collections.abc import Iterable, Iterator

from mux.panes.pane import Pane
from mux.system.sessions import kill_sessions, sessions_members

log = logging.getLogger(__name__)

# How much later than its grace a pane's session may be ended, to end it with others.
END_TOGETHER_SECONDS = 0.25


class ClosingPanes:
    def __init__(self, loop: asyncio.AbstractEventLoop, grace_seconds: float) -> None:
        self._loop = loop
        self._grace_seconds = grace_seconds
        self._panes: dict[int, Pane] = {}  # hung up, program not reaped yet
        self._ended: set[int] = set()  # of those, the ones whose session was killed
        self._due: list[Pane] = []  # grace over, session to end on the next turn

    def __iter__(self) -> Iterator[Pane]:
        """The closed panes whose program has not been reaped, or whose session has
        not been ended yet: whoever waits for them to go (stop, upgrade) sees them."""
        self._forget_gone()
        return iter(list(self._panes.values()))

    def add(self, pane: Pane, *, graced: bool = True) -> None:
        """`pane` has been hung up: its session ends when the grace is over (`graced`
        false: at `end_all`)."""
        self._panes[pane.id] = pane
        if graced:
            self._loop.call_later(self._grace_seconds, self._grace_over, pane)

    def end_all(self) -> None:
        """End every session now, without waiting out the grace (at stop, at upgrade)."""
        self._end_sessions(list(self._panes.values()))

    def _grace_over(self, pane: Pane) -> None:
        # Panes closed together (a stop, a window closed) end together: one read of
        # the process table for all whose grace ends within END_TOGETHER_SECONDS
        # (closing 2000 panes takes muxd ~1.5 s: one read each turn of the loop
        # would still be a dozen reads of 4000 processes).
        self._due.append(pane)
        if len(self._due) == 1:
            self._loop.call_later(END_TOGETHER_SECONDS, self._end_due)

    def _end_due(self) -> None:
        due, self._due = self._due, []
        self._end_sessions(due)

    def unreaped(self) -> list[int]:
        """The pids of closed panes' programs that have not been reaped yet."""
        return [pane.pid for pane in self if pane.process.returncode is None]

    def _forget_gone(self) -> None:
        for pane_id in [i for i in self._ended if self._panes[i].process.returncode is not None]:
            self._ended.discard(pane_id)
            del self._panes[pane_id]

    def _end_sessions(self, panes: list[Pane]) -> None:
        panes = [p for p in panes if p.id not in self._ended and p.id in self._panes]
        if not panes:
            return  # ended already, at stop
        # Kept until their programs are reaped: a stop or an upgrade waits for them.
        self._ended.update(pane.id for pane in panes)
        self._forget_gone()
        killed = kill_sessions([pane.pid for pane in panes])
        for pane in panes:
            if killed[pane.pid]:
                log.info(
                    "closed pane %d: killed %d process(es) ignoring the hangup",
                    pane.id,
                    killed[pane.pid],
                )

    def lingering_processes(self, open_panes: Iterable[Pane]) -> int:
        """Processes of panes (open, or closing here) that have not ended yet: while
        programs are still to be reaped, just those (a stop polls this: the process table
        is read once they are all gone, for what is left of their sessions)."""
        panes = [*open_panes, *self]
        if unreaped := sum(pane.process.returncode is None for pane in panes):
            return unreaped
        sessions = sessions_members([pane.pid for pane in panes if pane.has_process])
        return sum(len(members) for members in sessions.values())
