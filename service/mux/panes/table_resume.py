"""The pane table a previous muxd handed over: in a graceful upgrade, or after a crash.

Its id space goes on (the same token, the next ids); its panes read their
terminals again; their exits are watched once every observer is in place
(`PaneTable.start_watching_exits`). After an upgrade, the programs of panes
closed within their grace period are still reaped; after a crash they are
no longer our children, and their panes' programs are re-adopted
(pane_handover.readopted).
"""

import functools
import logging
from dataclasses import dataclass, field

from mux.panes.handover import TableRecord
from mux.panes.ids import IdSpace
from mux.panes.pane_handover import forget, pane_record, resumed_pane
from mux.panes.process import ChildProcess
from mux.panes.table import PaneTable

log = logging.getLogger(__name__)


@dataclass
class Unresumed:
    """The panes of a handover that are for the snapshot to restore, by id."""

    # After a crash: running panes whose terminal the fd store did not keep (their
    # program was in no scope of its own, so it ended with muxd): not re-adopted.
    ended: list[int] = field(default_factory=list)
    # Panes that waited to be started (mux.panes.held): they have no process or
    # terminal to hand over, and their way to start is made again from the snapshot.
    held: list[int] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        return self.ended + self.held


def resume_into(table: PaneTable, record: TableRecord, *, after_crash: bool = False) -> Unresumed:
    """Fill a new, empty `table` with what the previous muxd handed over; `after_crash`:
    it comes from the fd store of a muxd that ended without a handover. Returns the
    panes it leaves for the snapshot to restore."""
    table.ids = IdSpace.restored(bytes.fromhex(record.token), record.next_pane, record.next_window)
    unresumed = Unresumed()
    for saved in record.panes:
        if saved.running and saved.pid == 0:  # held: no process yet (pane_record)
            unresumed.held.append(saved.id)
            forget(saved)
            continue
        if after_crash and saved.running and saved.master_fd is None:
            unresumed.ended.append(saved.id)
            forget(saved)
            continue
        pane = resumed_pane(
            saved,
            settings=table.settings,
            shared_reader=table.shared_reader,
            observer=table,
            local_hosts=table.local_hosts,
            resurrection=table.resurrection,
            after_crash=after_crash,
        )
        table.adopt_resumed(pane)
    table.windows.take_records(record.windows)
    # Empty after a crash (mux.lifecycle.readoption): those are no longer our children.
    for pid in record.reap:
        table.exits.watch_later(ChildProcess(pid), functools.partial(_log_reaped, pid))
    return unresumed


def _log_reaped(pid: int, status: int) -> None:
    log.info("a closed pane's program (pid %d) ended (%d)", pid, status)


def handover_record(table: PaneTable, history_bytes: int | None = None) -> TableRecord:
    """The table for the next muxd. The caller ends the sessions of closed panes first
    (an upgrade cuts their grace short); their programs still need reaping.
    `history_bytes`: how much of each pane's history to keep (None: all)."""
    return TableRecord(
        token=table.ids.token.hex(),
        next_pane=table.ids.next_pane_id,
        next_window=table.ids.next_window_id,
        panes=[pane_record(pane, history_bytes) for pane in table],
        reap=table.closing.unreaped(),
        windows=table.windows.records(),
    )


def handover_fds(table: PaneTable) -> list[int]:
    """The fds the next muxd inherits: every open terminal and resurrection endpoint."""
    fds = [pane.master_fd for pane in table if pane.master_fd is not None]
    return fds + [pane.endpoint.fileno() for pane in table if pane.endpoint is not None]
