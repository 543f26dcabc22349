"""Graceful upgrade as an explicit state machine (docs/dbus-api.md#snapshots-and-upgrades).

    IDLE ──Upgrade──▶ PREFLIGHT ──refused──▶ IDLE   (Unavailable, nothing changed)
                          │ the new program read the state it would be given
                          ▼ (the D-Bus reply goes out first)
                      DRAINING: reply flushed, session saved and held, watchdog
                          │      stopped, attach clients told, bus left
                          ▼
                      EXECUTING: state captured and handed over; exec
                          │ returns only if the exec failed
                          ▼
                      RECOVERING: saving, attach and bus resumed ──▶ IDLE

Everything that can be refused is refused in PREFLIGHT, before the reply.
From the capture to the exec nothing yields to the loop: no output is read
after the state was captured. The mechanics of the exec and of the handover
record are in `mux.lifecycle.upgrade`.
"""

import asyncio
import logging
from collections.abc import Callable
from enum import StrEnum
from typing import IO

from mux.lifecycle.attach_plane import AttachPlane
from mux.lifecycle.control_plane import ControlPlane
from mux.lifecycle.session_keeper import SessionKeeper
from mux.lifecycle.startup import StartupError
from mux.lifecycle.status import StatusReporter
from mux.lifecycle.upgrade import (
    HANDOVER_FORMAT,
    Handover,
    KeptPane,
    UpgradeError,
    exec_with,
    preflight,
    write_outcome,
)
from mux.panes.table import PaneTable
from mux.panes.table_resume import handover_fds, handover_record
from mux.protocol.errors import Unavailable
from mux.system.muxd_command import muxd_argv
from mux.system.notify import Supervisor
from mux.system.open_files import SERVICE_OPEN_FILES
from mux.system.paths import Paths

log = logging.getLogger(__name__)


class UpgradeState(StrEnum):
    IDLE = "idle"
    PREFLIGHT = "preflight"
    DRAINING = "draining"
    EXECUTING = "executing"
    RECOVERING = "recovering"


class Upgrader:
    def __init__(
        self,
        *,
        paths: Paths,
        locks: tuple[IO[bytes], IO[bytes]],
        generation: int,
        table: PaneTable,
        keeper: SessionKeeper,
        control: ControlPlane,
        attach: AttachPlane,
        supervisor: Supervisor,
        status: StatusReporter,
        stopping: asyncio.Event,
        fail: Callable[[], None],
    ) -> None:
        """`generation`: how many upgrades this service has been through; `stopping`:
        set when the service is asked to stop (an upgrade then gives way); `fail()`:
        stop the service with a failure (no bus after a failed upgrade)."""
        self._paths = paths
        self._locks = locks
        self.generation = generation
        self._table = table
        self._keeper = keeper
        self._control = control
        self._attach = attach
        self._supervisor = supervisor
        self._status = status
        self._stopping = stopping
        self._fail = fail
        self.state = UpgradeState.IDLE
        self._task: asyncio.Task[None] | None = None

    async def upgrade(self) -> None:
        """Upgrade's D-Bus side: refuse now (Unavailable) or prove the new program
        starts; the drain and the exec follow once the reply is on its way."""
        if self.state is not UpgradeState.IDLE:
            raise Unavailable("an upgrade is already under way")
        self.state = UpgradeState.PREFLIGHT
        try:
            # The new program reads the state it would be given: a format or schema
            # it does not understand refuses the upgrade here, not after the exec.
            trial = self.handover().model_dump_json()
            await preflight(muxd_argv(), self._table.exits, trial)
        except UpgradeError as e:
            self.state = UpgradeState.IDLE
            log.error("upgrade refused: %s", e)
            raise Unavailable(f"upgrade refused, mux keeps running: {e}") from None
        except BaseException:
            self.state = UpgradeState.IDLE
            raise
        self.state = UpgradeState.DRAINING
        # On the next turn: this method's reply is sent first. The task is kept:
        # the loop holds only a weak reference to it.
        asyncio.get_running_loop().call_soon(self._start_exec)

    def _start_exec(self) -> None:
        self._task = asyncio.ensure_future(self._drain_and_exec())

    @property
    def in_progress(self) -> "asyncio.Task[None] | None":
        """The drain-and-exec under way, if any (kept referenced until it ends)."""
        return self._task if self._task is not None and not self._task.done() else None

    def handover(self, history_bytes: int | None = None) -> Handover:
        """Everything the next muxd needs, each part from its owner; `history_bytes`:
        how much of each pane's history (None: all; the crash record keeps less)."""
        instance_lock, state_lock = self._locks
        attach = self._attach.inherited
        return Handover(
            format=HANDOVER_FORMAT,
            generation=self.generation + 1,
            snapshot_generation=self._keeper.generation,
            lock_fd=instance_lock.fileno(),
            state_lock_fd=state_lock.fileno(),
            attach_fd=attach[0] if attach is not None else None,
            attach_owned_path=attach[1] if attach is not None else None,
            private_bus_pid=self._control.private_bus_pid,
            table=handover_record(self._table, history_bytes),
            unrestored=[
                KeptPane(pane=problem.pane, window=problem.window, reason=problem.reason)
                for problem in self._keeper.problems
            ],
            session_problem=self._keeper.session_problem,
            saving_disabled=self._keeper.saving_disabled,
            hub_id=self._control.hub.hub_id,
            relayed=self._control.hub.ledger.records(),
            children_open_files=SERVICE_OPEN_FILES.for_children(),
        )

    def _inherited_fds(self, handover: Handover) -> list[int]:
        """What the next muxd inherits, each part's own: the locks, the panes'
        terminals and endpoints, the attach socket."""
        keep = [lock.fileno() for lock in self._locks]
        keep += handover_fds(self._table)
        if handover.attach_fd is not None:
            keep.append(handover.attach_fd)
        return keep

    async def _drain_and_exec(self) -> None:
        try:
            if self._stopping.is_set():
                raise RuntimeError("the service is stopping")
            # Exits from now on are the next muxd's to report (ExitWatcher.pause); the
            # round trip below writes those reported so far.
            self._table.exits.pause()
            await self._control.flush()
            await self._keeper.hold_for_upgrade()
            self._supervisor.reloading()
            self._supervisor.stop_watchdog()
            await self._attach.end_sessions_for_upgrade()
            await self._control.close_for_upgrade()
            if self._stopping.is_set():
                raise RuntimeError("the service is stopping")
            self.state = UpgradeState.EXECUTING
            # From here to the exec nothing yields to the loop.
            self._table.end_closing_sessions()
            handover = self.handover()
            exec_with(handover, self._inherited_fds(handover))  # returns only if it failed
        except Exception as e:
            log.exception("upgrade failed, this muxd goes on serving")
            await self._recover(str(e))

    async def _recover(self, reason: str) -> None:
        self.state = UpgradeState.RECOVERING
        write_outcome(self._paths.upgrade_outcome, self.generation, f"upgrade failed: {reason}")
        self._table.exits.resume()
        self._keeper.release()
        self._attach.resume()
        try:
            await self._control.reopen_after_failed_upgrade()
        except StartupError as e:
            log.error("no bus after the failed upgrade (%s); stopping", e)
            self._fail()
            return
        self.state = UpgradeState.IDLE
        self._supervisor.ready(f"upgrade failed ({reason}); {self._status.line()}")
        self._supervisor.start_watchdog(asyncio.get_running_loop())
