"""The pane table a previous muxd handed over in a graceful upgrade.

Its id space goes on (the same token, the next ids); its panes read their
terminals again; their exits are watched once every observer is in place
(`PaneTable.start_watching_exits`); the programs of panes closed within their
grace period are still reaped.
"""

import functools
import logging

from mux.panes.handover import TableRecord
from mux.panes.ids import IdSpace
from mux.panes.pane_handover import resumed_pane
from mux.panes.process import ChildProcess
from mux.panes.table import PaneTable

log = logging.getLogger(__name__)


def resume_into(table: PaneTable, record: TableRecord) -> None:
    """Fill a new, empty `table` with what the previous muxd handed over."""
    table.ids = IdSpace.restored(bytes.fromhex(record.token), record.next_pane, record.next_window)
    for saved in record.panes:
        pane = resumed_pane(
            saved,
            settings=table.settings,
            loop=table.loop,
            observer=table,
            local_hosts=table.local_hosts,
            resurrection=table.resurrection,
        )
        table.adopt_resumed(pane)
    for pid in record.reap:
        table.exits.watch_later(ChildProcess(pid), functools.partial(_log_reaped, pid))


def _log_reaped(pid: int, status: int) -> None:
    log.info("a closed pane's program (pid %d) ended (%d)", pid, status)
