"""muxd: the service process. One asyncio loop; D-Bus control plane; PTY panes.

`main` prepares what must exist before anything runs (configuration, runtime
dir, the instance lock) and `Daemon` serves: it connects to the bus, exports
the interfaces, tells the service manager it is ready, and on `Upgrade`
re-executes itself in place (mux.lifecycle.upgrade).
"""

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from typing import IO, TYPE_CHECKING

from mux import __version__
from mux.config import ConfigError, Settings, load_settings
from mux.lifecycle.status import status_line
from mux.lifecycle.upgrade import BLOCKED_ACROSS_EXEC
from mux.protocol.errors import Unavailable
from mux.protocol.exit_status import EX_ALREADY_RUNNING, EX_CONFIG, EX_UNAVAILABLE
from mux.system.busaddr import BusKind, choose_bus, socket_answers
from mux.system.fds import make_inherited_fds_close_on_exec
from mux.system.locks import AlreadyLocked, take_instance_lock, take_state_lock
from mux.system.notify import Supervisor
from mux.system.paths import Paths, RuntimeDirError, ensure_runtime_dir, resolve_paths

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from mux.attach.hub import AttachHub
    from mux.attach.listener import AttachListener
    from mux.dbus.manager_iface import ManagerInterface
    from mux.dbus.publisher import MuxMessageBus
    from mux.lifecycle.upgrade import Handover
    from mux.panes.exits import Reapable
    from mux.panes.pane import Pane
    from mux.panes.table import PaneTable
    from mux.protocol.restore_problems import UnrestoredPane
    from mux.state.autosaver import Autosaver
    from mux.state.restore import RestoreProblem
    from mux.state.schema import Session

log = logging.getLogger("mux")


class StartupError(Exception):
    """Something a person must fix before the service can start; no traceback."""

    exit_status = EX_UNAVAILABLE


class AlreadyRunning(StartupError):
    exit_status = EX_ALREADY_RUNNING


def _take_instance_lock(paths: Paths) -> IO[bytes]:
    return _take_lock(take_instance_lock, paths)


def _take_lock(take: "Callable[[Paths], IO[bytes]]", paths: Paths) -> IO[bytes]:
    try:
        return take(paths)
    except AlreadyLocked as e:
        raise AlreadyRunning(str(e)) from None


# How long a stop or an upgrade waits for attached clients to be sent their last frames.
ATTACH_FAREWELL_SECONDS = 1.0


class Daemon:
    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        locks: tuple[IO[bytes], IO[bytes]],
        resume: "Handover | None",
    ) -> None:
        """`locks`: the instance lock (runtime dir) and the state-directory lock."""
        self.settings = settings
        self.paths = paths
        self.supervisor = Supervisor()
        self._lock, self._state_lock = locks
        self._resume = resume
        self._private_bus: Reapable | None = None
        self._attach: AttachListener | None = None
        self._hub: AttachHub | None = None
        self._bus: MuxMessageBus | None = None
        self._bus_address = ""
        self._bus_kind = ""
        self._stopping = asyncio.Event()
        self._exit_status = 0
        self._upgrading = False
        self._closed_for_upgrade: MuxMessageBus | None = None
        self._reconnected = asyncio.Event()
        self._generation = resume.generation if resume is not None else 0
        self._resume_generation = resume.snapshot_generation if resume is not None else None
        self._manager: ManagerInterface | None = None
        self._restore_problems: list[RestoreProblem] = []
        self._session_problem = ""  # the last session was refused or unreadable
        self._generation_floor = 0
        self._saving_disabled = False
        self._status_pending = False

    # -- start ------------------------------------------------------------------

    def _choose_bus(self) -> None:
        choice = choose_bus(self.paths)
        self._bus_address, self._bus_kind = choice.address, str(choice.kind)
        if choice.kind is not BusKind.PRIVATE or self._private_bus is not None:
            return
        if socket_answers(self.paths.private_bus):
            return  # left by a muxd that died: still good
        from mux.lifecycle.private_bus import (
            START_TIMEOUT_SECONDS,
            PrivateBusError,
            start_private_bus,
        )

        self.supervisor.extend_timeout(START_TIMEOUT_SECONDS + 5)
        try:
            self._private_bus = start_private_bus(self.paths.private_bus)
        except PrivateBusError as e:
            raise StartupError(str(e)) from None

    def _open_attach_socket(self, loop: asyncio.AbstractEventLoop) -> None:
        import socket

        from mux.attach.listener import AttachListener
        from mux.system.activation import BOUND_BY_MUXD, ActivationError, attach_listener

        if self._resume is not None and self._resume.attach_fd is not None:
            sock = socket.socket(fileno=self._resume.attach_fd)
            sock.set_inheritable(False)
            self._attach = AttachListener(sock, loop, self._resume.attach_owned_path)
            return
        try:
            sock, origin = attach_listener(self.paths.attach_socket)
        except (ActivationError, OSError) as e:
            log.warning("no attach socket: %s", e)
            return
        log.info("attach socket %s (%s)", self.paths.attach_socket, origin)
        owned = str(self.paths.attach_socket) if origin == BOUND_BY_MUXD else None
        self._attach = AttachListener(sock, loop, owned)

    def _start_attach_hub(self, loop: asyncio.AbstractEventLoop, table: "PaneTable") -> None:
        from mux.attach.hub import AttachHub

        self._hub = AttachHub(table, loop, self.settings.attach_client_buffer_bytes)
        if self._attach is not None:
            self._attach.hub = self._hub

    def _remove_launch_directories(self) -> None:
        """A cold start: what earlier launches left in <runtime> (their programs are gone
        with the muxd that ran them) is removed."""
        import shutil

        for name in ("shell", "launch"):
            shutil.rmtree(self.paths.runtime / name, ignore_errors=True)

    def _make_table(self, loop: asyncio.AbstractEventLoop) -> "PaneTable":
        from mux.panes.process import ChildProcess
        from mux.panes.table import PaneTable
        from mux.resurrection.checkpoints import CheckpointStore
        from mux.resurrection.endpoint import Endpoints

        shell_dirs = self.paths.runtime / "shell"
        self._checkpoints = CheckpointStore(self.paths.checkpoints)
        resurrection = Endpoints(
            self.paths.runtime / "launch",
            self._checkpoints,
            loop,
            self.settings.resurrection_hello_seconds,
        )
        if self._resume is None:
            return PaneTable(
                self.settings, os.environ, loop, shell_dirs=shell_dirs, resurrection=resurrection
            )
        table = PaneTable.resume(
            self._resume.table,
            self.settings,
            os.environ,
            loop,
            shell_dirs=shell_dirs,
            resurrection=resurrection,
        )
        if self._resume.private_bus_pid is not None:
            self._private_bus = ChildProcess(self._resume.private_bus_pid)
        return table

    async def _connect_bus(
        self, kind: "type[MuxMessageBus]", *, negotiate_unix_fd: bool
    ) -> "MuxMessageBus":
        from dbus_fast import AuthError

        bus = kind(bus_address=self._bus_address, negotiate_unix_fd=negotiate_unix_fd)
        try:
            await bus.connect()
        except AuthError:
            if negotiate_unix_fd:
                raise
            raise StartupError(f"cannot connect to the {self._bus_kind} bus: refused") from None
        except Exception as e:  # dbus-fast raises several types here
            raise StartupError(f"cannot connect to the {self._bus_kind} bus: {e}") from None
        return bus

    async def _connect(self, table: "PaneTable") -> None:
        """Connect to the bus, publish the manager and every pane, own the name."""
        from dbus_fast import AuthError, NameFlag, RequestNameReply

        from mux.dbus.caller import note_sender
        from mux.dbus.manager_iface import ManagerInterface
        from mux.dbus.publisher import BusPublisher, MuxMessageBus
        from mux.protocol.names import BUS_NAME, ROOT_PATH
        from mux.system.dbus_adapter import (
            close_after_sending,
            close_received_fds,
            tolerate_full_socket,
        )

        # Unix fds: OpenAttach answers with a socket. A bus that cannot pass fds
        # (not a Unix socket) still serves everything else.
        try:
            bus = await self._connect_bus(MuxMessageBus, negotiate_unix_fd=True)
            passes_fds = True
        except AuthError:
            bus = await self._connect_bus(MuxMessageBus, negotiate_unix_fd=False)
            passes_fds = False
            log.warning("the %s bus cannot pass file descriptors: no OpenAttach", self._bus_kind)
        tolerate_full_socket(bus)
        bus.add_message_handler(close_received_fds)
        bus.add_message_handler(note_sender)
        self._table = table
        manager = ManagerInterface(
            table,
            service=self,
            attach=self._hub,
            hand_over_fd=(lambda fd: close_after_sending(bus, fd)) if passes_fds else None,
        )
        self._manager = manager
        bus.export(ROOT_PATH, manager)
        publisher = BusPublisher(bus, manager)
        for pane in table:
            publisher.pane_added(pane)
        table.replace_observer(BusPublisher, publisher)
        reply = await bus.request_name(BUS_NAME, NameFlag.DO_NOT_QUEUE)
        if reply not in (RequestNameReply.PRIMARY_OWNER, RequestNameReply.ALREADY_OWNER):
            bus.disconnect()
            raise StartupError(f"another service already owns {BUS_NAME} on this bus")
        self._bus = bus

    # -- serve ------------------------------------------------------------------

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self._open_attach_socket(loop)
        if self._resume is None:
            self._remove_launch_directories()
        table = self._make_table(loop)
        self._start_attach_hub(loop, table)
        self._choose_bus()
        if self._private_bus is not None:
            table.exits.watch(self._private_bus, self._private_bus_exited)
        saved = self._load_saved_session() if self._resume is None else None
        if saved is not None and self.settings.restore:
            self._restore(table, saved)
        elif saved is not None:
            self._keep_unrestored_session(saved)
        self._autosaver = self._make_autosaver(loop, table, saved)
        table.add_observer(_TableChanges(lambda: self._table_changed(table)))
        await self._connect(table)
        table.start_watching_exits()

        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._stopping.set)
        # A handler, not SIG_IGN: an ignored SIGHUP would be inherited by panes.
        loop.add_signal_handler(signal.SIGHUP, lambda: log.info("SIGHUP ignored"))
        # An upgrade blocks them across the exec; with handlers in place, let them in.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, BLOCKED_ACROSS_EXEC)
        self.supervisor.ready(self._status_line(table))
        self.supervisor.start_watchdog(loop)
        if self._resume is not None:
            from mux.lifecycle.upgrade import write_outcome

            write_outcome(self.paths.upgrade_outcome, self._generation, "")
        how = "resumed after an upgrade" if self._resume else "ready"
        log.info("mux %s %s: %d panes, pid %d", __version__, how, len(table), os.getpid())
        self._resume = None  # its fds are ours now

        if self._resume_generation is not None or (saved is not None and self.settings.restore):
            self._autosaver.mark_dirty()  # the resumed or restored state, saved by this muxd
        status = await self._serve()
        self.supervisor.stopping()
        # The final snapshot first: closing the panes below must not be saved.
        await table.quiesce_checkpoints()
        await self._autosaver.final(participants=[table])
        if self._hub is not None:
            from mux.attach.session import SERVICE_STOPPING

            self._hub.close_all(SERVICE_STOPPING, "mux is stopping")
            await self._hub.wait_all_closed(ATTACH_FAREWELL_SECONDS)
        if self._attach is not None:
            self._attach.close()
        await self._shutdown(table)
        self.supervisor.stop_watchdog()
        if self._bus is not None and self._bus.connected:
            self._bus.disconnect()
        self._stop_private_bus()
        return status

    async def _serve(self) -> int:
        """Until asked to stop, or the bus goes away (1). A connection an upgrade closed
        on purpose is no loss: the next one (after a failed exec) is waited for."""
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            while True:
                assert self._bus is not None
                bus = self._bus
                lost = asyncio.ensure_future(bus.wait_for_disconnect())  # type: ignore[no-untyped-call]
                await asyncio.wait({lost, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if stopping.done():
                    lost.cancel()
                    return self._exit_status
                with contextlib.suppress(Exception):
                    lost.result()
                if bus is not self._closed_for_upgrade:
                    log.error("lost the connection to the bus; stopping")
                    return 1
                reconnected = asyncio.ensure_future(self._reconnected.wait())
                await asyncio.wait({reconnected, stopping}, return_when=asyncio.FIRST_COMPLETED)
                reconnected.cancel()
                self._reconnected.clear()
        finally:
            stopping.cancel()

    # -- upgrade ----------------------------------------------------------------

    async def _upgrade(self, table: "PaneTable") -> None:
        """Upgrade's D-Bus side: everything that can be refused is refused here, before
        the reply; the exec follows on the next turn of the loop."""
        from mux.lifecycle.upgrade import UpgradeError, muxd_argv, preflight

        if self._upgrading:
            raise Unavailable("an upgrade is already under way")
        self._upgrading = True
        try:
            # The new program reads the state it would be given: a format or schema
            # it does not understand refuses the upgrade here, not after the exec.
            trial = self._handover(table).model_dump_json()
            await preflight(muxd_argv(), table.exits, trial)
        except UpgradeError as e:
            self._upgrading = False
            log.error("upgrade refused: %s", e)
            raise Unavailable(f"upgrade refused, mux keeps running: {e}") from None
        except BaseException:
            self._upgrading = False
            raise
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self._reexec(table)))

    def _handover(self, table: "PaneTable") -> "Handover":
        from mux.lifecycle.upgrade import HANDOVER_FORMAT, Handover

        return Handover(
            format=HANDOVER_FORMAT,
            generation=self._generation + 1,
            snapshot_generation=self._autosaver.generation,
            lock_fd=self._lock.fileno(),
            state_lock_fd=self._state_lock.fileno(),
            attach_fd=self._attach.socket.fileno() if self._attach is not None else None,
            attach_owned_path=self._attach.owned_path if self._attach is not None else None,
            private_bus_pid=self._private_bus.pid if self._private_bus is not None else None,
            table=table.handover_record(),
        )

    async def _reexec(self, table: "PaneTable") -> None:
        from dbus_fast import Message

        from mux.lifecycle.upgrade import exec_with

        assert self._bus is not None
        bus = self._bus
        try:
            if self._stopping.is_set():
                raise RuntimeError("the service is stopping")
            # A round trip to the bus daemon: everything sent before it, the Upgrade
            # reply among it, has been written once its answer is back.
            await bus.call(
                Message(
                    destination="org.freedesktop.DBus",
                    path="/org/freedesktop/DBus",
                    interface="org.freedesktop.DBus",
                    member="GetId",
                )
            )
            # The session on disk is current, and no write is in flight across the exec.
            await self._autosaver.save_now()
            await self._autosaver.hold()
            self.supervisor.reloading()
            self.supervisor.stop_watchdog()
            await self._end_attach_sessions_for_upgrade()
            self._closed_for_upgrade = bus
            bus.disconnect()
            with contextlib.suppress(Exception):
                await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]
            if self._stopping.is_set():
                raise RuntimeError("the service is stopping")
            # From here to the exec nothing yields to the loop: no output is read
            # after the state was captured.
            table.end_closing_sessions()
            handover = self._handover(table)
            keep = [self._lock.fileno(), self._state_lock.fileno()]
            keep += [p.master_fd for p in table if p.master_fd is not None]
            keep += [p.endpoint.fileno() for p in table if p.endpoint is not None]
            if handover.attach_fd is not None:
                keep.append(handover.attach_fd)
            exec_with(handover, keep)  # returns only if the exec failed
        except Exception as e:
            log.exception("upgrade failed, this muxd goes on serving")
            await self._recover_from_failed_upgrade(table, str(e))

    async def _end_attach_sessions_for_upgrade(self) -> None:
        """Tell attached clients to reconnect, and let them go before the exec.

        No new connection is accepted meanwhile (the new muxd accepts them, on
        the same socket); each session's queued frames get a moment to reach
        the client, so the ServiceUpgrading ERROR is seen, not just an EOF.
        """
        if self._attach is not None:
            self._attach.pause()
        if self._hub is not None:
            from mux.attach.session import SERVICE_UPGRADING

            # Clients reconnect to the same panes: ids survive the upgrade.
            self._hub.close_all(SERVICE_UPGRADING, "mux is being upgraded in place")
            await self._hub.wait_all_closed(ATTACH_FAREWELL_SECONDS)

    async def _recover_from_failed_upgrade(self, table: "PaneTable", reason: str) -> None:
        from mux.lifecycle.upgrade import write_outcome

        write_outcome(self.paths.upgrade_outcome, self._generation, f"upgrade failed: {reason}")
        self._autosaver.release()
        if self._attach is not None:
            self._attach.resume()
        if self._bus is None or not self._bus.connected:
            try:
                await self._connect(table)
            except StartupError as e:
                log.error("no bus after the failed upgrade (%s); stopping", e)
                self._exit_status = 1
                self._stopping.set()
                return
            finally:
                self._reconnected.set()
        self._upgrading = False
        status = self._status_line(table)
        self.supervisor.ready(f"upgrade failed ({reason}); {status}")
        self.supervisor.start_watchdog(asyncio.get_running_loop())

    # -- status -----------------------------------------------------------------

    def _restore(self, table: "PaneTable", saved: "Session") -> None:
        from mux.state.restore import restore_session

        self.supervisor.extend_timeout(60)  # many panes take a while to start
        home = os.environ.get("HOME") or os.path.expanduser("~")
        self._restore_problems = restore_session(table, saved, home, self._checkpoints)
        log.info(
            "restored %d of %d panes from snapshot generation %d",
            len(table),
            len(saved.panes),
            saved.generation,
        )

    def _keep_unrestored_session(self, saved: "Session") -> None:
        """restore = false: the last session is not relaunched, but not thrown away
        either: it stays as session.previous.json before anything replaces it."""
        from mux.system.durable import DurableWriteError, durable_write

        previous = self.paths.session_file.with_name("session.previous.json")
        try:
            durable_write(previous, saved.model_dump_json(indent=1).encode() + b"\n")
        except DurableWriteError as e:
            log.error("the unrestored session could not be kept: %s", e)
            return
        log.info("restore is off; the last session is kept as %s", previous)

    def unrestored_panes(self) -> "list[UnrestoredPane]":
        from mux.protocol.restore_problems import UnrestoredPane

        # The whole session refused (quarantined, unreadable): one entry with id 0.
        whole = [UnrestoredPane(0, (), "", "", self._session_problem)]
        return (whole if self._session_problem else []) + [
            UnrestoredPane(p.pane.id, tuple(p.pane.argv), p.pane.cwd.path, p.pane.title, p.reason)
            for p in self._restore_problems
        ]

    async def upgrade(self) -> None:
        await self._upgrade(self._table)

    async def snapshot(self) -> tuple[str, int]:
        return await self._snapshot()

    def _capture(self, table: "PaneTable", generation: int) -> "Session":
        from mux.state.capture import capture_session

        table.sample_cwds()  # where each program is right now, not up to 10 s ago
        kept = [(problem.pane, problem.window) for problem in self._restore_problems]
        return capture_session(table, generation, kept, self.settings.replay_commands)

    def _make_autosaver(
        self, loop: asyncio.AbstractEventLoop, table: "PaneTable", saved: "Session | None"
    ) -> "Autosaver":
        from mux.state.autosaver import Autosaver

        if self._resume_generation is not None:
            generation = self._resume_generation
        else:
            generation = saved.generation if saved is not None else self._generation_floor
        return Autosaver(
            loop,
            self.paths.session_file,
            lambda g: self._capture(table, g),
            generation=generation,
            saved=self._snapshot_saved,
            failed=lambda _reason: self._report_status(table),
        )

    def _load_saved_session(self) -> "Session | None":
        """The snapshot on disk: to restore, and so that generations only grow."""
        from mux.state.session_file import SnapshotRefused, read_session
        from mux.system.durable import remove_stale_temporaries

        if stale := remove_stale_temporaries(self.paths.session_file):
            log.info("removed %d unfinished snapshot write(s) of a muxd that died", len(stale))

        try:
            session = read_session(self.paths.session_file, self.paths.quarantine)
        except SnapshotRefused as e:
            log.error("%s; it was moved to %s", e, e.quarantined_as)
            self._session_problem = f"{e}; it was moved to {e.quarantined_as.name} in quarantine"
            self._generation_floor = _generation_of(e.quarantined_as)
            return None
        except OSError as e:
            # Not readable now (EIO, EACCES) is not "absent": it must not be
            # replaced by the first autosave. Moved aside, or saving stays off.
            from mux.system.quarantine import quarantine

            reason = f"the session snapshot cannot be read ({e.strerror})"
            log.error("%s", reason)
            try:
                moved = quarantine(self.paths.session_file, self.paths.quarantine, reason)
            except OSError:
                self._session_problem = f"{reason}; saving is off until it is fixed"
                self._saving_disabled = True
                return None
            self._session_problem = f"{reason}; it was moved to {moved.name} in quarantine"
            return None
        return session

    def _snapshot_saved(self, generation: int) -> None:
        if self._manager is not None:
            self._manager.SnapshotSaved(generation)

    async def _snapshot(self) -> tuple[str, int]:
        from mux.state.autosaver import Stopped
        from mux.system.durable import DurableWriteError

        try:
            generation = await self._autosaver.save_now()
        except DurableWriteError as e:
            raise Unavailable(str(e)) from None
        except Stopped:
            raise Unavailable("mux is stopping or upgrading; that saves the session") from None
        return str(self.paths.session_file), generation

    def _status_line(self, table: "PaneTable") -> str:
        line = status_line(list(table), self._bus_kind, len(self._restore_problems))
        error = self._autosaver.last_error if hasattr(self, "_autosaver") else ""
        notes = [note for note in (error, self._session_problem) if note]
        return "; ".join([*notes, line])

    def _table_changed(self, table: "PaneTable") -> None:
        if not self._saving_disabled:
            self._autosaver.mark_dirty()
        self._report_status(table)

    def _report_status(self, table: "PaneTable") -> None:
        """Coalesced: many pane events in one loop turn make one STATUS= message."""
        if self._status_pending or not self.supervisor.active:
            return
        self._status_pending = True

        def send() -> None:
            self._status_pending = False
            self.supervisor.status(self._status_line(table))

        asyncio.get_running_loop().call_soon(send)

    # -- stop -------------------------------------------------------------------

    def _private_bus_exited(self, status: int) -> None:
        log.error("the private dbus-daemon exited with status %d", status)
        self._private_bus = None

    async def _shutdown(self, table: "PaneTable") -> None:
        """Hang up every pane like closed terminal windows, then wait for them to go."""
        table.close_all()
        await self._wait_for_exits(table, self.settings.kill_grace_seconds)
        table.end_closing_sessions()
        await self._wait_for_exits(table, 2.0)

    @staticmethod
    async def _wait_for_exits(table: "PaneTable", seconds: float) -> None:
        # Our children's exits arrive through the loop (pidfd readers): keep it turning.
        deadline = time.monotonic() + seconds
        while table.lingering_processes() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    def _stop_private_bus(self) -> None:
        process = self._private_bus
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)  # shutting down: nothing else left to serve
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(process.pid, 0)
        with contextlib.suppress(FileNotFoundError):
            self.paths.private_bus.unlink()


class _TableChanges:
    """Any change to the pane table: the status line and the snapshot follow it."""

    def __init__(self, changed: "Callable[[], None]") -> None:
        self._changed = changed

    def pane_added(self, pane: "Pane") -> None:
        self._changed()

    def pane_removed(self, pane: "Pane") -> None:
        self._changed()

    def pane_changed(self, pane: "Pane", properties: "Sequence[str]") -> None:
        self._changed()

    def pane_exited(self, pane: "Pane") -> None:
        self._changed()


def _generation_of(path: "Path") -> int:
    """The generation a refused snapshot claims, if any: generations only grow."""
    import json

    try:
        value = json.loads(path.read_bytes()).get("generation", 0)
    except (OSError, ValueError, AttributeError):
        return 0
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _stderr_is_the_journal() -> bool:
    """JOURNAL_STREAM names the journal's socket as dev:inode (systemd.exec(5))."""
    try:
        device, inode = (int(part) for part in os.environ["JOURNAL_STREAM"].split(":"))
        st = os.fstat(sys.stderr.fileno())
    except (KeyError, ValueError, OSError):
        return False
    return (st.st_dev, st.st_ino) == (device, inode)


def _check() -> int:
    """--check: everything the service imports loads, and the configuration is valid."""
    import mux.dbus.manager_iface
    import mux.dbus.publisher
    import mux.lifecycle.upgrade
    import mux.panes.table  # noqa: F401

    print(f"muxd {__version__}: ok")
    return 0


def main(argv: list[str] | None = None) -> int:
    from mux.lifecycle.upgrade import CHECK_HANDOVER_FLAG, RESUME_FLAG

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
        from mux.lifecycle.upgrade import UpgradeError, parse_handover

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
            from mux.lifecycle.upgrade import UpgradeError, read_handover

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
            lock = _take_instance_lock(paths)
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
