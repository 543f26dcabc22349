"""The pane table: the panes and windows of this instance, spawn and close.

This is the core the D-Bus layer and the attach socket drive; it knows nothing
of D-Bus. Observers hear about panes appearing, changing, exiting and being
removed. Its parts: the id space (ids.py), the spawn preparation (launcher.py),
the spawn ledger and conditional kill (ledger.py), the closed panes in their
grace period (closing.py), a pane's handover (pane_handover.py), the screen
sweeper (screen_sweeper.py), the cells budget (cells_budget.py). Construction
does no I/O beyond what it is given; `start` starts the timers, once.
"""

import asyncio
import dataclasses
import logging
import socket
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from mux.config import Settings
from mux.panes.cells_budget import CellsBudget
from mux.panes.closing import ClosingPanes
from mux.panes.cwd_sampler import CwdSampler
from mux.panes.exited import close_when_exited
from mux.panes.exits import ExitWatcher
from mux.panes.held import HeldPanes, PendingStart
from mux.panes.ids import IdSpace
from mux.panes.launch_endpoint import EndpointFactory
from mux.panes.launcher import Launcher, PreparedLaunch, abandon, launched_pane
from mux.panes.ledger import KillRequest, check_kill
from mux.panes.pane import Pane
from mux.panes.placeholder import NotStarted, placeholder_pane
from mux.panes.process import StartedProcess
from mux.panes.screen_sweeper import ScreenSweeper
from mux.panes.windows import Placement, WindowObserver, Windows
from mux.protocol.errors import InvalidArgument, NoSuchPane, PreconditionFailed
from mux.protocol.layout import Direction, split_room
from mux.protocol.notices import Notice
from mux.protocol.spawn_options import SpawnRequest
from mux.system.shared_reader import SharedReader

log = logging.getLogger(__name__)


class TableObserver(Protocol):
    """Hears of every pane's life (what a pane tells its user goes to the
    `notice_listeners` instead)."""

    def pane_added(self, pane: Pane) -> None: ...
    def pane_removed(self, pane: Pane) -> None: ...
    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None: ...
    def pane_exited(self, pane: Pane) -> None: ...


class PaneTable:
    def __init__(
        self,
        settings: Settings,
        service_env: Mapping[str, str],
        loop: asyncio.AbstractEventLoop,
        *,
        shell_dirs: Path | None = None,
        resurrection: EndpointFactory | None = None,
        clock: Callable[[], float] = time.monotonic,
        shared_reader: SharedReader | None = None,
    ) -> None:
        """`shell_dirs`: where shell launches get their integration directories
        (<runtime>/shell); None: shells start without integration. `resurrection`:
        what opens launches' endpoints; None: no endpoints at all. `clock`: now, for
        the screen sweeper (the clock of a screen's last use); the timers run on the
        loop's clock. `shared_reader`: the one that reads the panes' terminals and
        watches their exits (None: one of the table's own)."""
        self.settings = settings
        self.shell_dirs = shell_dirs
        self.resurrection = resurrection
        self.ids = IdSpace()
        self._launcher = Launcher(
            settings, service_env, shell_dirs=shell_dirs, resurrection=resurrection
        )
        self.loop = loop
        # Busy panes' output is read in turn, a bounded number a loop turn.
        self.shared_reader = SharedReader(loop) if shared_reader is None else shared_reader
        self._panes: dict[int, Pane] = {}
        self.cells = CellsBudget(settings.emulator_cells_budget)
        self.held = HeldPanes(self, loop)  # panes restored without their programs, for now
        self._use_count = 0
        self.closing = ClosingPanes(loop, settings.kill_grace_seconds)
        self.windows = Windows(self._size_of)
        self.exits = ExitWatcher(loop, self.shared_reader)
        self._observers: list[TableObserver] = []
        # Who hears what panes' programs want to tell their user (mux.desktop).
        self.notice_listeners: list[Callable[[Pane, Notice], None]] = []
        self._sweeper = ScreenSweeper(
            loop, settings.screen_idle_seconds, lambda: list(self._panes.values()), clock
        )
        self.cwd_sampler = CwdSampler(
            loop, settings.cwd_sample_seconds, lambda: list(self._panes.values())
        )
        # The names a shell's OSC 7 may give this machine.
        self.local_hosts = frozenset({socket.gethostname().lower()})

    def start(self) -> None:
        """Start the timers: once, after construction (and `resume_into`)."""
        self.cwd_sampler.start()
        self._sweeper.start()

    # -- observers ------------------------------------------------------------

    def add_observer(self, observer: TableObserver) -> None:
        """`observer` hears of every pane, and of every window when it is a WindowObserver."""
        self._observers.append(observer)
        if isinstance(observer, WindowObserver):
            self.windows.observers.append(observer)

    def replace_observer(self, kind: type, observer: TableObserver) -> None:
        """Swap the observer of this kind (a new bus connection's publisher, say)."""
        self.remove_observers(kind)
        self.add_observer(observer)

    def remove_observers(self, kind: type) -> None:
        """Stop telling observers of this kind (a lost bus connection's publisher)."""
        self._observers = [o for o in self._observers if not isinstance(o, kind)]
        self.windows.remove_observers(kind)

    def pane_resizing(self, pane: Pane, rows: int, cols: int) -> None:
        self.cells.check_resize(pane, rows, cols)

    def pane_held_wanted(self, pane: Pane, data: bytes | None) -> None:
        self.held.wanted(pane, data)

    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None:
        if "Rows" in properties or "Cols" in properties:
            self.cells.count(pane)
        for observer in self._observers:
            observer.pane_changed(pane, properties)

    def pane_notice(self, pane: Pane, notice: Notice) -> None:
        for listener in self.notice_listeners:
            listener(pane, notice)

    def pane_exited(self, pane: Pane) -> None:
        if self._panes.get(pane.id) is not pane:
            log.info("closed pane %d: pid %d ended (%d)", pane.id, pane.pid, pane.exit_status)
            return
        log.info("pane %d (pid %d) exited with status %d", pane.id, pane.pid, pane.exit_status)
        for observer in self._observers:
            observer.pane_exited(pane)
        close_when_exited(self, pane)

    # -- queries --------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._panes)

    def __iter__(self) -> Iterator[Pane]:
        return iter(list(self._panes.values()))

    def get(self, pane_id: int) -> Pane:
        pane = self._panes.get(pane_id)
        if pane is None:
            raise NoSuchPane(pane_id)
        return pane

    def mark_used(self, pane: Pane) -> None:
        """A client started, attached to or typed into `pane` (for "the last used")."""
        self._use_count += 1
        pane.use_order = self._use_count

    def mark_use(self, pane: Pane, user: str | None) -> None:
        """Someone is about to drive, read or subscribe to `pane` (the spawn ledger); what
        it asked to tell is seen now."""
        if pane.spawn_record is not None:
            pane.spawn_record.mark_use(user)
        if pane.unseen_notice:
            pane.unseen_notice = ""
            self.pane_changed(pane, ["Notice"])

    def kill_if(
        self, pane_id: int, instance: bytes, conditions: Sequence[str], attached_clients: int
    ) -> None:
        """Close the pane if `instance` is this id space's token and the conditions hold;
        otherwise PreconditionFailed naming what failed, and nothing is killed. Check
        and kill happen in one synchronous step: nothing runs in between
        (docs/dbus-api.md#conditional-kill)."""
        pane = self.get(pane_id)
        request = KillRequest(pane_id, instance, conditions)
        check_kill(request, self.ids.token, pane.spawn_record, attached_clients)
        self.close(pane_id)

    def most_recently_used(self, excluding: Pane | None = None) -> Pane:
        """The running pane a client used last (spawn, attach, typing)."""
        running = [p for p in self._panes.values() if p.is_running and p is not excluding]
        if not running:
            raise NoSuchPane(0, "there is no running pane")
        return max(running, key=lambda p: (p.use_order, p.id))

    # -- spawn ----------------------------------------------------------------

    def spawn(
        self,
        request: SpawnRequest,
        notice: str | None = None,
        spawner: str | None = None,
        offer: str | None = None,
        placement: Placement | None = None,
        *,
        budgeted: bool = True,
        kept: tuple[int, int] | None = None,
        into: Pane | None = None,
    ) -> Pane:
        """Start a pane; `notice` is shown on its screen before anything the program prints.
        `spawner`: the bus connection that called Spawn (None: not from Spawn); `offer`:
        the reference the launch's application gets back (a restore); `placement`: where
        in its window (None: beside the focused pane, mux.panes.windows); `budgeted`:
        False for a pane coming back in a restore, never refused by the cells budget;
        `kept`: its own (pane id, window id) from the snapshot (the window is made if
        there is none); `into`: a held pane whose program this is (mux.panes.held)."""
        if kept is None and into is None:
            self._check_room(request.window, placement)
        if budgeted:
            self.cells.check_new(*self._launcher.size_of(request))
        # The env names the pane before it exists.
        pane_id = into.id if into else kept[0] if kept else self.ids.next_pane_id
        prepared = self._launcher.prepare(request, pane_id=pane_id, offer=offer)
        started = prepared.start()
        try:
            pane = self._adopt(started, prepared, spawner, kept, into)
        except BaseException:
            prepared.undo()
            abandon(started)
            raise
        assert pane.id == pane_id
        if notice:
            pane.show_notice(notice)
        self.mark_used(pane)
        log.info("pane %d: started %s (pid %d) in window %d", *pane.described)
        if into is not None:
            into.start()
            self.pane_changed(into, ("Pid", "State", "ExitStatus", "Argv", "Title", "Cwd"))
        else:
            self._publish(pane, placement)
        return pane

    def hold_place(
        self,
        held: NotStarted,
        window: int,
        kept: tuple[int, int] | None = None,
        pending: PendingStart | None = None,
    ) -> Pane:
        """A pane with no process in `window` (0: a new one), for a saved pane that could
        not be started again (mux.panes.placeholder), or, with `pending`, one that waits
        to be started (mux.panes.held); `kept` as for `spawn`."""
        if kept is None:
            self._check_room(window)
        pane = placeholder_pane(
            held,
            pending,
            pane_id=kept[0] if kept else self.ids.new_pane_id(),
            window=kept[1] if kept else window or self.ids.new_window_id(),
            settings=self.settings,
            shared_reader=self.shared_reader,
            observer=self,
        )
        log.debug("pane %d holds the place of %s in window %d", pane.id, pane.argv[0], pane.window)
        if pending is not None:
            self.held.add(pane, pending)
        self._publish(pane)
        return pane

    def _check_room(self, window: int, placement: Placement | None = None) -> None:
        """InvalidArgument unless a new pane can go into `window` (0: a new one)."""
        if window and window not in self.windows:
            raise InvalidArgument(
                f"there is no window {window}; omit 'window' (or pass 0) for a new one"
            )
        self.windows.check_room(window, placement)

    def _publish(self, pane: Pane, placement: Placement | None = None) -> None:
        """A new pane in the table, read from now on, announced, then placed in its window
        (the window's news names a pane already announced)."""
        self._panes[pane.id] = pane
        self.cells.count(pane)
        pane.start()
        for observer in self._observers:
            observer.pane_added(pane)
        self.windows.place(pane.id, pane.window, placement)

    def _adopt(
        self,
        started: StartedProcess,
        prepared: PreparedLaunch,
        spawner: str | None,
        kept: tuple[int, int] | None,
        into: Pane | None,
    ) -> Pane:
        """The Pane for a started process, watched for its exit; not yet published
        (`into`: the held pane that takes it over; `kept` as for `spawn`)."""
        pane_id, window = (into.id, into.window) if into else kept or (0, 0)
        pane = launched_pane(
            prepared,
            started,
            pane_id=pane_id or self.ids.new_pane_id(),
            window=window or prepared.request.window or self.ids.new_window_id(),
            settings=self.settings,
            shared_reader=self.shared_reader,
            observer=self,
            local_hosts=self.local_hosts,
            spawner=spawner,
        )
        if into is not None:
            into.take_over(pane)
            pane = into
        self.exits.watch(started.process, pane.process_exited)
        return pane

    def _size_of(self, pane_id: int) -> tuple[int, int]:
        return self._panes[pane_id].rows, self._panes[pane_id].cols

    def split(
        self, pane_id: int, direction: Direction, share: float, request: SpawnRequest, **how: Any
    ) -> Pane:
        """A new pane beside `pane_id`, in its window, taking `share` of its space
        (`how`: as for `spawn`)."""
        beside = self.get(pane_id)
        size = beside.cols if direction == "horizontal" else beside.rows
        if (cramped := split_room(size, direction, share)) is not None:
            raise PreconditionFailed(f"pane {pane_id} is too small to split that way: {cramped}")
        request = dataclasses.replace(request, window=beside.window)
        return self.spawn(request, placement=Placement(beside.id, direction, share), **how)

    # -- close ----------------------------------------------------------------

    def close(self, pane_id: int, *, graced: bool = True) -> None:
        """Close a pane unconditionally: hang up its terminal, forget it; what is left
        of its session is ended after a grace period (closing.py), or, `graced` false,
        by whoever calls `end_closing_sessions`."""
        pane = self.get(pane_id)
        del self._panes[pane_id]
        self.cells.forget(pane_id)
        self.held.forget(pane_id)
        pane.hang_up()
        if pane.has_process:
            self.closing.add(pane, graced=graced)
        for observer in self._observers:
            observer.pane_removed(pane)
        self.windows.remove(pane_id)  # (after the pane: its window's news comes last)

    def close_all(self) -> None:
        """At stop: every pane hung up; the stop waits out the grace itself and then
        ends what is left (`end_closing_sessions`), all at once."""
        self._sweeper.stop()
        self.cwd_sampler.stop()
        for pane in list(self._panes.values()):
            self.close(pane.id, graced=False)

    # -- graceful upgrade (the record: table_resume.py) -----------------------

    def adopt_resumed(self, pane: Pane) -> None:
        """A pane the previous muxd handed over (see table_resume.py): in place, its exit
        watched from `start_watching_exits` (or, exited already, lingering), reading."""
        self._panes[pane.id] = pane
        self.cells.count(pane)
        self.windows.place(pane.id, pane.window)
        if pane.is_running:
            self.exits.watch_later(pane.process, pane.process_exited)
        else:
            close_when_exited(self, pane, just_now=False)
        pane.start()

    async def quiesce_checkpoints(self) -> None:
        """Before the final snapshot: every application's checkpoint that was acknowledged
        is on disk and in its pane, and no new one is taken."""
        endpoints = [pane.endpoint for pane in self._panes.values() if pane.endpoint is not None]
        await asyncio.gather(*(endpoint.quiesce() for endpoint in endpoints))

    def prepare_final_snapshot(self) -> None:
        """Participant of the final snapshot: from now on no output is read and no
        exit changes a pane, so the capture is of one moment."""
        for pane in self._panes.values():
            pane.freeze()

    def start_watching_exits(self) -> None:
        """After a resume, once every observer is in place: an exit in the gap is
        then reported like any other (PaneExited, PropertiesChanged)."""
        self.exits.watch_deferred()

    def end_closing_sessions(self) -> None:
        """At stop: end the sessions of closed panes without waiting out their grace."""
        self.closing.end_all()

    def lingering_processes(self) -> int:
        """Processes of panes, open or closing, that have not ended yet (closing.py)."""
        return self.closing.lingering_processes(self._panes.values())
