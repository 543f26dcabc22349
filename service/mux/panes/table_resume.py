"""The pane table a previous muxd handed over in a graceful upgrade.

Its id space goes on (the same token, the next ids); its panes read their
terminals again; their exits are watched once every observer is in place
(`PaneTable.start_watching_exits`); the programs of panes closed within their
grace period are still reaped.
"""

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from mux.config import Settings
from mux.panes.handover import TableRecord
from mux.panes.ids import IdSpace
from mux.panes.launch_endpoint import EndpointFactory
from mux.panes.pane_handover import resumed_pane
from mux.panes.process import ChildProcess
from mux.panes.table import PaneTable

log = logging.getLogger(__name__)


def resume_table(
    record: TableRecord,
    settings: Settings,
    service_env: Mapping[str, str],
    loop: asyncio.AbstractEventLoop,
    *,
    shell_dirs: Path | None = None,
    resurrection: EndpointFactory | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> PaneTable:
    table = PaneTable(
        settings,
        service_env,
        loop,
        shell_dirs=shell_dirs,
        resurrection=resurrection,
        clock=clock,
    )
    table.ids = IdSpace.restored(bytes.fromhex(record.token), record.next_pane, record.next_window)
    for saved in record.panes:
        pane = resumed_pane(
            saved,
            settings=settings,
            loop=loop,
            observer=table,
            local_hosts=table.local_hosts,
            resurrection=resurrection,
        )
        table.adopt_resumed(pane)
    for pid in record.reap:
        table.exits.watch_later(ChildProcess(pid), functools.partial(_log_reaped, pid))
    return table


def _log_reaped(pid: int, status: int) -> None:
    log.info("a closed pane's program (pid %d) ended (%d)", pid, status)
