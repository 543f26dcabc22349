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
- `StatusReporter` (mux.lifecycle.status): STATUS= for the service manager.
"""

import argparse
import asyncio
import logging
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

from mux import __version__
from mux.config import ConfigError, Settings, load_settings
from mux.lifecycle.attach_plane import AttachPlane
from mux.lifecycle.control_plane import ControlPlane
from mux.lifecycle.session_keeper import SessionKeeper
from mux.lifecycle.startup import AlreadyRunning, StartupError
from mux.lifecycle.status import StatusReporter, status_line
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
from mux.panes.pane import Pane
from mux.panes.table import PaneTable
from mux.panes.table_resume import resume_into
from mux.protocol.exit_status import EX_CONFIG, EX_UNAVAILABLE
from mux.protocol.restore_problems import UnrestoredPane
from mux.resurrection.checkpoints import CheckpointStore
from mux.resurrection.endpoint import Endpoints
from mux.state.restore import RestoreProblem
from mux.system.fds import make_inherited_fds_close_on_exec
from mux.system.locks import AlreadyLocked, take_instance_lock, take_state_lock
from mux.system.notify import Supervisor
from mux.system.paths import Paths, RuntimeDirError, ensure_runtime_dir, resolve_paths

log = logging.getLogger("mux")

# After the hang-up, how long the panes' processes get to go before the stop goes on.
LAST_EXITS_SECONDS = 2.0


@dataclass(frozen=True)
class MuxdService:
    """The Manager's view of the lifecycle (mux.dbus.service.ManagerService)."""

    keeper: SessionKeeper
    upgrader: Upgrader

    async def snapshot(self) -> tuple[str, int]:
        return await self.keeper.snapshot()

    async def upgrade(self) -> None:
        await self.upgrader.upgrade()

    def unrestored_panes(self) -> list[UnrestoredPane]:
        return self.keeper.unrestored_panes()


class TableChanges:
    """Any change to the pane table: the snapshot and the status line follow it."""

    def __init__(self, keeper: SessionKeeper, status: StatusReporter) -> None:
        self._keeper = keeper
        self._status = status

    def _changed(self) -> None:
        self._keeper.table_changed()
        self._status.changed()

    def pane_added(self, pane: Pane) -> None:
        self._changed()

    def pane_removed(self, pane: Pane) -> None:
        self._changed()

    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None:
        self._changed()

    def pane_exited(self, pane: Pane) -> None:
        self._changed()


class Daemon:
    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        locks: tuple[IO[bytes], IO[bytes]],
        resume: Handover | None,
    ) -> None:
        """`locks`: the instance lock (runtime dir) and the state-directory lock;
        `resume`: what the muxd this one replaced in an upgrade handed over."""
        self.settings = settings
        self.paths = paths
        self.supervisor = Supervisor()
        self._locks = locks
        self._resume = resume
        self._stopping = asyncio.Event()
        self._exit_status = 0

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        resume, self._resume = self._resume, None  # its fds become the parts' own
        attach = AttachPlane(self.settings, self.paths)
        attach.open(loop, _inherited_attach(resume))
        if resume is None:
            _remove_launch_directories(self.paths)
        checkpoints = CheckpointStore(self.paths.checkpoints)
        table = self._make_table(loop, resume, checkpoints)
        table.start()
        attach.serve(loop, table)
        # The status line reads the parts made below, once they exist.
        status = StatusReporter(self.supervisor, lambda: _status(table, control, keeper))
        control = ControlPlane(
            self.paths,
            self.supervisor,
            table,
            attach.hub,
            private_bus_pid=resume.private_bus_pid if resume is not None else None,
            status_changed=status.changed,
        )
        control.choose_bus()
        keeper = SessionKeeper(
            self.settings,
            self.paths,
            table,
            checkpoints,
            resumed_generation=resume.snapshot_generation if resume is not None else None,
            saved=control.snapshot_saved,
            failed=status.changed,
        )
        if resume is not None:
            keeper.resume(
                [RestoreProblem(kept.pane, kept.window, kept.reason) for kept in resume.unrestored],
                resume.session_problem,
                saving_disabled=resume.saving_disabled,
            )
        saved = keeper.load() if resume is None else None
        if saved is not None:
            keeper.restore(saved, self.supervisor)
        keeper.start_saving(loop, saved)
        table.add_observer(TableChanges(keeper, status))
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
        await control.connect(MuxdService(keeper, upgrader))
        table.start_watching_exits()
        self._handle_signals(loop)
        self.supervisor.ready(status.line())
        self.supervisor.start_watchdog(loop)
        if resume is not None:
            write_outcome(self.paths.upgrade_outcome, upgrader.generation, "")
        how = "resumed after an upgrade" if resume is not None else "ready"
        log.info("mux %s %s: %d panes, pid %d", __version__, how, len(table), os.getpid())
        keeper.save_carried_over_session()

        await control.serve(self._stopping)
        self.supervisor.stopping()
        # The final snapshot first: closing the panes below must not be saved.
        await keeper.final()
        await attach.close()
        await _hang_up_panes(table, self.settings.kill_grace_seconds)
        self.supervisor.stop_watchdog()
        control.disconnect()
        control.stop_private_bus()
        return self._exit_status

    def _make_table(
        self,
        loop: asyncio.AbstractEventLoop,
        resume: Handover | None,
        checkpoints: CheckpointStore,
    ) -> PaneTable:
        shell_dirs = self.paths.runtime / "shell"
        endpoints = Endpoints(
            self.paths.runtime / "launch",
            checkpoints,
            loop,
            self.settings.resurrection_hello_seconds,
        )
        table = PaneTable(
            self.settings, os.environ, loop, shell_dirs=shell_dirs, resurrection=endpoints
        )
        if resume is not None:
            resume_into(table, resume.table)
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


def _status(table: PaneTable, control: ControlPlane, keeper: SessionKeeper) -> str:
    line = status_line(list(table), control.bus_kind, keeper.not_restored)
    outage = [control.outage] if control.outage else []
    return "; ".join([*outage, *keeper.notes, line])


def _remove_launch_directories(paths: Paths) -> None:
    """A cold start: what earlier launches left in <runtime> (their programs are gone
    with the muxd that ran them) is removed."""
    for name in ("shell", "launch"):
        shutil.rmtree(paths.runtime / name, ignore_errors=True)


async def _hang_up_panes(table: PaneTable, grace_seconds: float) -> None:
    """Hang up every pane like closed terminal windows, then wait for them to go."""
    table.close_all()
    await _wait_for_exits(table, grace_seconds)
    table.end_closing_sessions()
    await _wait_for_exits(table, LAST_EXITS_SECONDS)


async def _wait_for_exits(table: PaneTable, seconds: float) -> None:
    # Our children's exits arrive through the loop (pidfd readers): keep it turning.
    deadline = time.monotonic() + seconds
    while table.lingering_processes() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


def _take_lock(take: Callable[[Paths], IO[bytes]], paths: Paths) -> IO[bytes]:
    try:
        return take(paths)
    except AlreadyLocked as e:
        raise AlreadyRunning(str(e)) from None


def _stderr_is_the_journal() -> bool:
    """JOURNAL_STREAM names the journal's socket as dev:inode (systemd.exec(5))."""
    try:
        device, inode = (int(part) for part in os.environ["JOURNAL_STREAM"].split(":"))
        st = os.fstat(sys.stderr.fileno())
    except (KeyError, ValueError, OSError):
        return False
    return (st.st_dev, st.st_ino) == (device, inode)


def _check() -> int:
    """--check: everything the service imports loads (this module imports every part
    at its top), and the configuration is valid (checked before)."""
    print(f"muxd {__version__}: ok")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="muxd", description="the mux terminal session service")
    parser.add_argument("--version", action="version", version=f"muxd {__version__}")
    parser.add_argument("--check", action="store_true", help="check the installation and config")
    parser.add_argument(RESUME_FLAG, type=int, metavar="FD", help=argparse.SUPPRESS)
    # --check, plus: the handover state on stdin is one this program can resume from.
    parser.add_argument(CHECK_HANDOVER_FLAG, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    resume_fd: int | None = args.resume_from

    if resume_fd is None:
        make_inherited_fds_close_on_exec()
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
    # The journal stamps each line itself; a log file needs the time written.
    stamp = "" if _stderr_is_the_journal() else "%(asctime)s "
    logging.basicConfig(
        level=settings.log_level,
        format=stamp + "%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    resume: Handover | None = None
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
    try:
        return asyncio.run(Daemon(settings, paths, (lock, state_lock), resume).run())
    except StartupError as e:
        print(f"muxd: {e}", file=sys.stderr)
        return e.exit_status
    finally:
        lock.close()
        state_lock.close()
