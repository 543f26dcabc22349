"""muxd: the service process. One asyncio loop; D-Bus control plane; PTY panes.

`main` prepares what must exist before anything runs (configuration, runtime
dir, the locks) and `Daemon.run` composes the service from its lifecycle
parts, in order: the attach socket, the pane table, the bus, the session on
disk, then serving; and at the end the final snapshot, the farewell to
attached clients, and the panes hung up. Each part owns its state:

- `AttachPlane` (mux.lifecycle.attach_plane): the attach socket and hub;
- `ControlPlane` (mux.lifecycle.control_plane): bus choice, private bus, export, name;
- `SessionKeeper` (mux.lifecycle.session_keeper): load, restore, autosave, snapshots;
- `Upgrader` (mux.lifecycle.upgrader): the graceful upgrade's state machine;
- `StatusReporter` (mux.lifecycle.status): STATUS= for the service manager;
- `FdStore` (mux.lifecycle.fd_store) and `PaneScopes` (mux.lifecycle.pane_scopes):
  what lets the panes outlive a crash of muxd under systemd
  (docs/systemd.md#crash-survival); after a crash, `main` resumes from what the
  fd store handed back (mux.lifecycle.readoption) as from an upgrade.
"""

import argparse
import asyncio
import logging
import os
import shutil
import signal
import sys
from collections.abc import Callable
from typing import IO

from mux import __version__
from mux.config import ConfigError, Settings, load_settings
from mux.lifecycle.attach_plane import AttachPlane
from mux.lifecycle.contents_keeper import ContentsKeeper
from mux.lifecycle.control_plane import ControlPlane
from mux.lifecycle.desktop_plane import DesktopPlane
from mux.lifecycle.fd_store import FdStore
from mux.lifecycle.history_restore import HistoryRestore
from mux.lifecycle.host_objects import resumed_hub
from mux.lifecycle.manager_service import MuxdService
from mux.lifecycle.pane_scopes import PaneScopes
from mux.lifecycle.readoption import (
    CRASH_HISTORY_BYTES,
    crash_record,
    drop_leftovers,
    end_hung_up,
    readopted_state,
)
from mux.lifecycle.session_keeper import SessionKeeper
from mux.lifecycle.startup import AlreadyRunning, StartupError
from mux.lifecycle.status import StatusReporter, status_line
from mux.lifecycle.table_effects import TableChanges, hang_up_panes
from mux.lifecycle.upgrade import (
    BLOCKED_ACROSS_EXEC,
    CHECK_HANDOVER_FLAG,
    RESUME_FLAG,
    Handover,
    UpgradeError,
    parse_handover,
    read_handover,
    write_outcome,
)
from mux.lifecycle.upgrader import Upgrader
from mux.panes.table import PaneTable
from mux.panes.table_resume import Unresumed, resume_into
from mux.protocol.exit_status import EX_CONFIG, EX_UNAVAILABLE
from mux.resurrection.checkpoints import CheckpointStore
from mux.resurrection.endpoints import Endpoints
from mux.state.restore import RestoreProblem
from mux.system.fds import make_inherited_fds_close_on_exec
from mux.system.journal import log_to_stderr
from mux.system.listen_fds import ListenFds, listen_fds
from mux.system.locks import AlreadyLocked, take_instance_lock, take_state_lock
from mux.system.memory import pace_the_collector
from mux.system.notify import Supervisor
from mux.system.open_files import SERVICE_OPEN_FILES
from mux.system.paths import Paths, RuntimeDirError, ensure_runtime_dir, resolve_paths
from mux.system.record_slots import RecordSlots
from mux.system.shared_reader import SharedReader

log = logging.getLogger("mux")


class Daemon:
    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        locks: tuple[IO[bytes], IO[bytes]],
        resume: Handover | None,
        *,
        inherited: ListenFds | None = None,
        record_slots: RecordSlots | None = None,
    ) -> None:
        """`locks`: the instance lock (runtime dir) and the state-directory lock;
        `resume`: what the muxd this one replaced in an upgrade handed over, or what
        the fd store kept of the muxd that crashed (then `record_slots`: where it was
        read); `inherited`: the fds systemd handed over (socket activation, the rest
        of the fd store)."""
        self.settings = settings
        self.paths = paths
        self.supervisor = Supervisor()
        self._locks = locks
        self._resume = resume
        self._inherited = inherited if inherited is not None else ListenFds()
        self._record_slots = record_slots
        self._after_crash = record_slots is not None
        self._unresumed = Unresumed()  # what the handover leaves to the snapshot
        self._stopping = asyncio.Event()
        self._exit_status = 0
        self.control: ControlPlane | None = None  # (made by `run`)

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        # First of all: a stop asked while muxd starts (its private bus, restored panes)
        # is taken once the start is done, as at any other time; by default the signal
        # would end muxd halfway and leave its bus and panes running.
        self._handle_signals(loop)
        resume, self._resume = self._resume, None  # its fds become the parts' own
        attach = AttachPlane(self.settings, self.paths)
        attach.open(loop, _inherited_attach(resume), self._inherited.activation)
        checkpoints = CheckpointStore(self.paths.checkpoints, quarantine_dir=self.paths.quarantine)
        if resume is None:  # a cold start: nothing of an earlier muxd runs or writes
            _remove_launch_directories(self.paths)
            checkpoints.remove_unfinished_writes()
        table = self._make_table(loop, resume, checkpoints)
        bus = os.environ.get("DBUS_SESSION_BUS_ADDRESS")  # (its Secret Service, if any)
        contents = ContentsKeeper(self.settings, self.paths, table, loop, bus)
        hung_up = drop_leftovers(self._inherited, self.supervisor)
        table.start()
        attach.serve(loop, table)
        # The status line reads the parts made below, once they exist.
        status = StatusReporter(self.supervisor, lambda: _status(table, control, keeper, desktop))
        control = self.control = ControlPlane(
            self.paths,
            self.supervisor,
            table,
            attach.hub,
            private_bus_pid=resume.private_bus_pid if resume is not None else None,
            status_changed=status.changed,
            hub=resumed_hub(self.settings, self.paths, resume),
        )
        control.choose_bus()
        desktop = DesktopPlane(
            self.settings, attach.hub, saved=control.snapshot_saved, failed=status.changed
        )
        keeper = SessionKeeper(
            self.settings,
            self.paths,
            table,
            checkpoints,
            contents=contents,
            resumed_generation=resume.snapshot_generation if resume is not None else None,
            saved=desktop.snapshot_saved,
            failed=desktop.autosave_failed,
        )
        if resume is not None:
            keeper.resume(
                [RestoreProblem(kept.pane, kept.window, kept.reason) for kept in resume.unrestored],
                resume.session_problem,
                saving_disabled=resume.saving_disabled,
            )
        # After a crash or an upgrade, the snapshot restores only what was not handed over.
        unresumed = self._unresumed
        saved = keeper.load() if resume is None or unresumed.ids else None
        await contents.find_key()  # (waiting a moment at most: see contents_keeper)
        if saved is not None:
            await end_hung_up(saved, hung_up, self.settings.kill_grace_seconds)
            keeper.restore(saved, self.supervisor, only=unresumed.ids or None, held=unresumed.held)
        keeper.start_saving(loop, saved if resume is None else None)
        table.add_observer(TableChanges(keeper, status))
        desktop.join(table, control)
        # The record is the upgrade's handover (the upgrader is made below).
        fd_store = FdStore(
            self.supervisor,
            loop,
            lambda: crash_record(upgrader.handover(CRASH_HISTORY_BYTES)),
            lambda: sum(pane.view.scrollback.total for pane in table),
        )
        scopes = PaneScopes(loop, lambda: control.shared_bus, table.ids.token.hex, fd_store.placed)
        table.add_observer(scopes)
        upgrader = Upgrader(
            paths=self.paths,
            locks=self._locks,
            generation=resume.generation if resume is not None else 0,
            table=table,
            keeper=keeper,
            control=control,
            attach=attach,
            supervisor=self.supervisor,
            status=status,
            stopping=self._stopping,
            fail=self._fail,
        )
        fd_store.start(list(table), attach.inherited, self._record_slots)
        table.add_observer(fd_store)
        await control.connect(
            MuxdService(
                keeper,
                upgrader,
                HistoryRestore(table, keeper, checkpoints, loop, contents),
                contents,
            )
        )
        await scopes.stop_strays()
        await scopes.place_missing(list(table))
        control.hub.start()
        desktop.started(keeper)
        table.start_watching_exits()
        self.supervisor.ready(status.line())
        self.supervisor.start_watchdog(loop)
        if resume is not None and not self._after_crash:
            write_outcome(self.paths.upgrade_outcome, upgrader.generation, "")
        how = "ready"
        if resume is not None:
            how = "re-adopted its panes" if self._after_crash else "resumed after an upgrade"
        log.info("mux %s %s: %d panes, pid %d", __version__, how, len(table), os.getpid())
        keeper.save_carried_over_session()

        await control.serve(self._stopping)
        self.supervisor.stopping()
        # The final snapshot first: closing the panes below must not be saved.
        await keeper.final()
        await attach.close()
        await hang_up_panes(table, self.settings.kill_grace_seconds)
        await scopes.stop_all()
        fd_store.stop()
        self.supervisor.stop_watchdog()
        await control.hub.close()
        await desktop.close()
        control.disconnect()
        control.stop_private_bus()
        return self._exit_status

    def _make_table(
        self,
        loop: asyncio.AbstractEventLoop,
        resume: Handover | None,
        checkpoints: CheckpointStore,
    ) -> PaneTable:
        # One reader for every pane's terminal, exit and endpoint (mux.system.shared_reader).
        reader = SharedReader(loop)
        hello = self.settings.resurrection_hello_seconds
        endpoints = Endpoints(self.paths.runtime / "launch", checkpoints, loop, hello, reader)
        shell_dirs = self.paths.runtime / "shell"
        table = PaneTable(
            self.settings,
            os.environ,
            loop,
            shell_dirs=shell_dirs,
            resurrection=endpoints,
            shared_reader=reader,
        )
        if resume is not None:
            self._unresumed = resume_into(table, resume.table, after_crash=self._after_crash)
        return table

    def _handle_signals(self, loop: asyncio.AbstractEventLoop) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._stopping.set)
        # A handler, not SIG_IGN: an ignored SIGHUP would be inherited by panes.
        loop.add_signal_handler(signal.SIGHUP, lambda: log.info("SIGHUP ignored"))
        # An upgrade blocks them across the exec; with handlers in place, let them in.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, BLOCKED_ACROSS_EXEC)

    def _fail(self) -> None:
        self._exit_status = 1
        self._stopping.set()


def _inherited_attach(resume: Handover | None) -> tuple[int, str | None] | None:
    if resume is None or resume.attach_fd is None:
        return None
    return resume.attach_fd, resume.attach_owned_path


def _status(
    table: PaneTable, control: ControlPlane, keeper: SessionKeeper, desktop: DesktopPlane
) -> str:
    line = status_line(list(table), control.bus_kind, keeper.not_restored)
    outage = [control.outage] if control.outage else []
    return "; ".join([*outage, *keeper.notes, *desktop.notes, line])


def _remove_launch_directories(paths: Paths) -> None:
    """A cold start: what earlier launches left in <runtime> (their programs are gone
    with the muxd that ran them) is removed."""
    for name in ("shell", "launch"):
        shutil.rmtree(paths.runtime / name, ignore_errors=True)


def _take_lock(take: Callable[[Paths], IO[bytes]], paths: Paths) -> IO[bytes]:
    try:
        return take(paths)
    except AlreadyLocked as e:
        raise AlreadyRunning(str(e)) from None


def _check() -> int:
    """--check: everything the service imports loads (this module imports every part
    at its top), and the configuration is valid (checked before)."""
    print(f"muxd {__version__}: ok")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """muxd's options (man/muxd.1 is generated from them)."""
    parser = argparse.ArgumentParser(
        prog="muxd", description="Run the mux terminal session service for this user."
    )
    parser.add_argument("--version", action="version", version=f"muxd {__version__}")
    parser.add_argument("--check", action="store_true", help="check the installation and config")
    parser.add_argument(RESUME_FLAG, type=int, metavar="FD", help=argparse.SUPPRESS)
    # --check, plus: the handover state on stdin is one this program can resume from.
    parser.add_argument(CHECK_HANDOVER_FLAG, action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    resume_fd: int | None = args.resume_from

    if resume_fd is None:
        make_inherited_fds_close_on_exec()
    inherited = listen_fds() if resume_fd is None else ListenFds()
    paths = resolve_paths()
    try:
        settings = load_settings(paths.config_file)
    except ConfigError as e:
        print(f"muxd: {e}", file=sys.stderr)
        return EX_CONFIG
    if args.check_handover:
        try:
            parse_handover(sys.stdin.buffer.read())
        except UpgradeError as e:
            print(f"muxd: {e}", file=sys.stderr)
            return EX_UNAVAILABLE
    if args.check or args.check_handover:
        return _check()
    log_to_stderr(settings.log_level)
    resume: Handover | None = None
    record_slots: RecordSlots | None = None
    lock: IO[bytes] | None = None
    state_lock: IO[bytes] | None = None
    try:
        if resume_fd is not None:
            try:
                resume = read_handover(resume_fd)
            except UpgradeError as e:
                raise StartupError(str(e)) from None
            lock = os.fdopen(resume.lock_fd, "ab")  # still locked: the same open file
            if resume.state_lock_fd is not None:
                state_lock = os.fdopen(resume.state_lock_fd, "ab")
            make_inherited_fds_close_on_exec()
        else:
            ensure_runtime_dir(paths)
            lock = _take_lock(take_instance_lock, paths)
        if state_lock is None:
            state_lock = _take_lock(take_state_lock, paths)
        if resume is None:
            readopted = readopted_state(inherited, (lock.fileno(), state_lock.fileno()))
            if readopted is not None:
                resume, record_slots = readopted.handover, readopted.slots
    except RuntimeDirError as e:
        print(f"muxd: {e}", file=sys.stderr)
        return EX_UNAVAILABLE
    except StartupError as e:
        print(f"muxd: {e}", file=sys.stderr)
        return e.exit_status
    except OSError as e:
        print(f"muxd: cannot prepare {paths.runtime}: {e.strerror}", file=sys.stderr)
        return EX_UNAVAILABLE
    finally:
        if state_lock is None and lock is not None:
            lock.close()  # refused: the instance lock goes with it
    assert lock is not None and state_lock is not None
    SERVICE_OPEN_FILES.raise_for_service(resume.children_open_files if resume else None)
    try:
        daemon = Daemon(
            settings,
            paths,
            (lock, state_lock),
            resume,
            inherited=inherited,
            record_slots=record_slots,
        )
        pace_the_collector()
        try:
            return asyncio.run(daemon.run())
        finally:  # a start that failed leaves no private bus behind (a stop stopped it)
            if daemon.control is not None:
                daemon.control.stop_private_bus()
    except StartupError as e:
        print(f"muxd: {e}", file=sys.stderr)
        return e.exit_status
    finally:
        lock.close()
        state_lock.close()
