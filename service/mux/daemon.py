"""muxd: the service process. One asyncio loop; D-Bus control plane; PTY panes."""

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from typing import IO, TYPE_CHECKING

from mux import __version__
from mux.busaddr import BusKind, choose_bus, socket_answers
from mux.config import ConfigError, Settings, load_settings
from mux.init.fds import make_inherited_fds_close_on_exec
from mux.init.notify import Supervisor
from mux.instance_lock import AlreadyLocked, take_instance_lock
from mux.paths import Paths, RuntimeDirError, ensure_runtime_dir, resolve_paths
from mux.protocol.exit_status import EX_ALREADY_RUNNING, EX_CONFIG, EX_UNAVAILABLE
from mux.status_report import status_line

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from mux.attach.listener import AttachListener
    from mux.panes.pane import Pane
    from mux.panes.table import PaneTable

log = logging.getLogger("mux")


class StartupError(Exception):
    """Something a person must fix before the service can start; no traceback."""

    exit_status = EX_UNAVAILABLE


class AlreadyRunning(StartupError):
    exit_status = EX_ALREADY_RUNNING


def _take_instance_lock(paths: Paths) -> IO[bytes]:
    try:
        return take_instance_lock(paths)
    except AlreadyLocked as e:
        raise AlreadyRunning(str(e)) from None


class Daemon:
    def __init__(self, settings: Settings, paths: Paths) -> None:
        self.settings = settings
        self.paths = paths
        self.supervisor = Supervisor()
        self._private_bus: subprocess.Popen[bytes] | None = None
        self._stopping = asyncio.Event()
        self._bus_kind = ""
        self._status_pending = False

    def _bus_address(self) -> str:
        choice = choose_bus(self.paths)
        self._bus_kind = str(choice.kind)
        if choice.kind is BusKind.PRIVATE and not socket_answers(self.paths.private_bus):
            from mux.init.private_bus import (
                START_TIMEOUT_SECONDS,
                PrivateBusError,
                start_private_bus,
            )

            self.supervisor.extend_timeout(START_TIMEOUT_SECONDS + 5)
            try:
                self._private_bus = start_private_bus(self.paths.private_bus)
            except PrivateBusError as e:
                raise StartupError(str(e)) from None
        log.info("using the %s bus at %s", choice.kind, choice.address)
        return choice.address

    def _open_attach_socket(self, loop: asyncio.AbstractEventLoop) -> "AttachListener | None":
        from mux.attach.listener import AttachListener
        from mux.init.activation import ActivationError, attach_listener

        try:
            sock, origin = attach_listener(self.paths.attach_socket)
        except (ActivationError, OSError) as e:
            log.warning("no attach socket: %s", e)
            return None
        log.info("attach socket %s (%s)", self.paths.attach_socket, origin)
        return AttachListener(sock, loop)

    async def run(self) -> int:
        from dbus_fast import NameFlag, RequestNameReply

        from mux.dbus.manager_iface import ManagerInterface
        from mux.dbus.publisher import BusPublisher, MuxMessageBus
        from mux.panes.table import PaneTable
        from mux.protocol.names import BUS_NAME, ROOT_PATH

        loop = asyncio.get_running_loop()
        attach = self._open_attach_socket(loop)
        address = self._bus_address()
        table = PaneTable(self.settings, os.environ, loop)
        if self._private_bus is not None:
            table.exits.watch(self._private_bus, self._private_bus_exited)
        bus = MuxMessageBus(bus_address=address)
        try:
            await bus.connect()
        except Exception as e:  # dbus-fast raises several types here
            raise StartupError(f"cannot connect to the {address} bus: {e}") from None
        manager = ManagerInterface(table)
        bus.export(ROOT_PATH, manager)
        table.add_observer(BusPublisher(bus, manager))
        table.add_observer(_StatusObserver(lambda: self._report_status(table)))
        reply = await bus.request_name(BUS_NAME, NameFlag.DO_NOT_QUEUE)
        if reply not in (RequestNameReply.PRIMARY_OWNER, RequestNameReply.ALREADY_OWNER):
            bus.disconnect()
            raise StartupError(f"another service already owns {BUS_NAME} on this bus")

        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._stopping.set)
        # A handler, not SIG_IGN: an ignored SIGHUP would be inherited by panes.
        loop.add_signal_handler(signal.SIGHUP, lambda: log.info("SIGHUP ignored"))
        self.supervisor.ready(status_line(list(table), self._bus_kind))
        self.supervisor.start_watchdog(loop)
        log.info("mux %s ready: %s on the bus, pid %d", __version__, BUS_NAME, os.getpid())

        disconnected = asyncio.ensure_future(bus.wait_for_disconnect())  # type: ignore[no-untyped-call]
        stopping = asyncio.ensure_future(self._stopping.wait())
        await asyncio.wait({disconnected, stopping}, return_when=asyncio.FIRST_COMPLETED)
        status = 0
        if disconnected.done():
            log.error("lost the connection to the bus; stopping")
            status = 1
        stopping.cancel()
        self.supervisor.stopping()
        if attach is not None:
            attach.close()
        await self._shutdown(table)
        self.supervisor.stop_watchdog()
        if not disconnected.done():
            bus.disconnect()
        disconnected.cancel()
        self._stop_private_bus()
        return status

    def _report_status(self, table: "PaneTable") -> None:
        """Coalesced: many pane events in one loop turn make one STATUS= message."""
        if self._status_pending or not self.supervisor.active:
            return
        self._status_pending = True

        def send() -> None:
            self._status_pending = False
            self.supervisor.status(status_line(list(table), self._bus_kind))

        asyncio.get_running_loop().call_soon(send)

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
        if self._private_bus is None:
            return
        self._private_bus.terminate()
        try:
            self._private_bus.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._private_bus.kill()
            self._private_bus.wait()
        with contextlib.suppress(FileNotFoundError):
            self.paths.private_bus.unlink()


class _StatusObserver:
    """Any change to the pane table updates the status line."""

    def __init__(self, changed: "Callable[[], None]") -> None:
        self._changed = changed

    def pane_added(self, pane: "Pane") -> None:
        self._changed()

    def pane_removed(self, pane: "Pane") -> None:
        self._changed()

    def pane_changed(self, pane: "Pane", properties: "Sequence[str]") -> None:
        if "State" in properties:
            self._changed()

    def pane_exited(self, pane: "Pane") -> None:
        self._changed()


def _stderr_is_the_journal() -> bool:
    """JOURNAL_STREAM names the journal's socket as dev:inode (systemd.exec(5))."""
    try:
        device, inode = (int(part) for part in os.environ["JOURNAL_STREAM"].split(":"))
        st = os.fstat(sys.stderr.fileno())
    except (KeyError, ValueError, OSError):
        return False
    return (st.st_dev, st.st_ino) == (device, inode)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="muxd", description="the mux terminal session service")
    parser.add_argument("--version", action="version", version=f"muxd {__version__}")
    parser.parse_args(argv)

    make_inherited_fds_close_on_exec()
    paths = resolve_paths()
    try:
        settings = load_settings(paths.config_file)
    except ConfigError as e:
        print(f"muxd: {e}", file=sys.stderr)
        return EX_CONFIG
    # The journal stamps each line itself; a log file needs the time written.
    stamp = "" if _stderr_is_the_journal() else "%(asctime)s "
    logging.basicConfig(
        level=settings.log_level,
        format=stamp + "%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        ensure_runtime_dir(paths)
        lock = _take_instance_lock(paths)
    except RuntimeDirError as e:
        print(f"muxd: {e}", file=sys.stderr)
        return EX_UNAVAILABLE
    except StartupError as e:
        print(f"muxd: {e}", file=sys.stderr)
        return e.exit_status
    except OSError as e:
        print(f"muxd: cannot prepare {paths.runtime}: {e.strerror}", file=sys.stderr)
        return EX_UNAVAILABLE
    try:
        return asyncio.run(Daemon(settings, paths).run())
    except StartupError as e:
        print(f"muxd: {e}", file=sys.stderr)
        return e.exit_status
    finally:
        lock.close()
