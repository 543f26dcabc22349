"""The control plane: mux on D-Bus.

It chooses the bus (docs/paths.md#bus-discovery: the session bus, else mux's own
private `dbus-daemon` at `<runtime>/bus`, started here when none answers),
connects, exports the Manager and every pane, owns `org.mux.Mux1`, and
serves until asked to stop.

Losing the bus is an outage, not a stop (docs/systemd.md#bus-outages): the
panes, the attach socket and the resurrection endpoints go on; the control
plane reconnects with backoff (starting mux's private `dbus-daemon` again at
the same address when that is the bus that went away), exports every object
again and owns the name again, with the same pane ids and instance token.
Until then the status says it is waiting for the bus. An upgrade closes the
connection on purpose; if its exec then fails, the control plane connects again
and goes on serving.
"""

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

from dbus_fast import AuthError, NameFlag, RequestNameReply

from mux.attach.hub import AttachHub
from mux.dbus.caller import CallerNotes
from mux.dbus.connection import prepare_connection
from mux.dbus.manager_iface import ManagerInterface
from mux.dbus.publisher import BusPublisher, MuxMessageBus
from mux.dbus.service import ManagerService
from mux.federation.hub import Hub
from mux.lifecycle.host_objects import HostObjects
from mux.lifecycle.private_bus import (
    START_TIMEOUT_SECONDS,
    PrivateBusError,
    left_private_bus,
    start_private_bus,
    stop_private_bus,
)
from mux.lifecycle.startup import StartupError
from mux.panes.exits import Reapable
from mux.panes.process import ChildProcess, ForeignProcess
from mux.panes.table import PaneTable
from mux.protocol.names import BUS_NAME, ROOT_PATH
from mux.system.bus_daemon import bus_daemon_message
from mux.system.busaddr import BusKind, choose_bus, socket_answers
from mux.system.dbus_adapter import close_after_sending
from mux.system.notify import Supervisor
from mux.system.paths import Paths

log = logging.getLogger(__name__)

# How long the private dbus-daemon may take to go at stop before it is killed.
# After losing the bus: the first retry, doubling up to the last (a local bus
# daemon restarts in milliseconds; a restarting user session takes seconds).
RECONNECT_FIRST_SECONDS = 0.1
RECONNECT_MAX_SECONDS = 2.0


class ConnectionListener(Protocol):
    """A part that serves on the bus connection: told of each new one (before the
    name is owned) and of its loss."""

    def connected(
        self,
        bus: MuxMessageBus,
        manager: ManagerInterface,
        hand_over_fd: Callable[[int], None] | None,
    ) -> None: ...

    def disconnected(self) -> None: ...


class ControlPlane:
    def __init__(
        self,
        paths: Paths,
        supervisor: Supervisor,
        table: PaneTable,
        attach: AttachHub | None,
        *,
        private_bus_pid: int | None,
        hub: Hub,
        status_changed: Callable[[], None] = lambda: None,
    ) -> None:
        """`private_bus_pid`: mux's own dbus-daemon, started by the muxd this one replaced
        in an upgrade (still our child); `status_changed()`: the outage began or ended;
        `hub`: the other hosts this mux drives."""
        self._paths = paths
        self._supervisor = supervisor
        self._table = table
        self._attach = attach
        self._private_bus: Reapable | None = (
            ChildProcess(private_bus_pid) if private_bus_pid is not None else None
        )
        self.address = ""
        self.bus_kind = ""
        self._kind: BusKind | None = None
        self._bus: MuxMessageBus | None = None
        self._manager: ManagerInterface | None = None
        self._service: ManagerService | None = None
        self._closed_on_purpose: MuxMessageBus | None = None
        self._callers = CallerNotes()
        self.hub = hub
        self._hosts = HostObjects(hub)
        # Parts that serve on each new connection (the host objects, the notifier).
        self._listeners: list[ConnectionListener] = [self._hosts]
        self._reconnected = asyncio.Event()
        self._status_changed = status_changed
        # Why the bus is gone while mux waits for it ("" while connected).
        self.outage = ""

    @property
    def private_bus_pid(self) -> int | None:
        """Our own child's, for the next muxd of an upgrade (one left by a muxd that
        died is found again behind its socket)."""
        bus = self._private_bus
        return bus.pid if bus is not None and not isinstance(bus, ForeignProcess) else None

    @property
    def shared_bus(self) -> MuxMessageBus | None:
        """The connection, when it is to a bus others share (where the user's service
        manager is); None on mux's private bus or during an outage."""
        return self._bus if self._kind is not BusKind.PRIVATE else None

    # -- start ------------------------------------------------------------------------

    def choose_bus(self) -> None:
        """Which bus to serve on; starts mux's private bus when that one is chosen and
        nothing answers there."""
        choice = choose_bus(self._paths)
        self.address, self.bus_kind = choice.address, str(choice.kind)
        self._kind = choice.kind
        if choice.kind is BusKind.PRIVATE and self._private_bus is None:
            self._supervisor.extend_timeout(START_TIMEOUT_SECONDS + 5)
            self._start_private_bus()
        elif self._private_bus is not None:
            self._table.exits.watch(self._private_bus, self._private_bus_exited)

    def _start_private_bus(self) -> None:
        if socket_answers(self._paths.private_bus):
            # Left by a muxd that died: still good, and ours to stop at our stop.
            self._private_bus = left_private_bus(self._paths.private_bus)
            if self._private_bus is not None:
                self._table.exits.watch(self._private_bus, self._private_bus_exited)
            return
        try:
            self._private_bus = start_private_bus(self._paths.private_bus)
        except PrivateBusError as e:
            raise StartupError(str(e)) from None
        self._table.exits.watch(self._private_bus, self._private_bus_exited)

    async def connect(self, service: ManagerService) -> None:
        """Connect, publish the Manager and every pane, own the name."""
        self._service = service
        # Unix fds: OpenAttach answers with a socket. A bus that cannot pass fds
        # (not a Unix socket) still serves everything else.
        try:
            bus = await self._connect_bus(negotiate_unix_fd=True)
            passes_fds = True
        except AuthError:
            bus = await self._connect_bus(negotiate_unix_fd=False)
            passes_fds = False
            log.warning("the %s bus cannot pass file descriptors: no OpenAttach", self.bus_kind)
        prepare_connection(bus, self._callers)
        manager = ManagerInterface(
            self._table,
            service=service,
            attach=self._attach,
            hand_over_fd=(lambda fd: close_after_sending(bus, fd)) if passes_fds else None,
            callers=self._callers,
            hub=self.hub,
        )
        bus.export(ROOT_PATH, manager)
        publisher = BusPublisher(bus, manager)
        publisher.serve_existing(list(self._table), list(self._table.windows))
        self._table.replace_observer(BusPublisher, publisher)
        hand_over = (lambda fd: close_after_sending(bus, fd)) if passes_fds else None
        for listener in self._listeners:
            listener.connected(bus, manager, hand_over)
        reply = await bus.request_name(BUS_NAME, NameFlag.DO_NOT_QUEUE)
        if reply not in (RequestNameReply.PRIMARY_OWNER, RequestNameReply.ALREADY_OWNER):
            bus.disconnect()
            raise StartupError(f"another service already owns {BUS_NAME} on this bus")
        self._bus, self._manager = bus, manager

    async def _connect_bus(self, *, negotiate_unix_fd: bool) -> MuxMessageBus:
        bus = MuxMessageBus(bus_address=self.address, negotiate_unix_fd=negotiate_unix_fd)
        try:
            await bus.connect()
        except AuthError:
            if negotiate_unix_fd:
                raise
            raise StartupError(f"cannot connect to the {self.bus_kind} bus: refused") from None
        except Exception as e:  # dbus-fast raises several types here
            raise StartupError(f"cannot connect to the {self.bus_kind} bus: {e}") from None
        return bus

    def snapshot_saved(self, generation: int) -> None:
        if self._manager is not None:
            self._manager.SnapshotSaved(generation)

    def add_connection_listener(self, listener: ConnectionListener) -> None:
        self._listeners.append(listener)

    # -- serve ------------------------------------------------------------------------

    async def serve(self, stopping: asyncio.Event) -> None:
        """Until `stopping` is set. A lost connection is an outage: mux reconnects. One
        closed on purpose (an upgrade) is no loss: the next one, after a failed exec,
        is waited for."""
        stopped = asyncio.ensure_future(stopping.wait())
        try:
            while True:
                assert self._bus is not None
                bus = self._bus
                lost = asyncio.ensure_future(bus.wait_for_disconnect())  # type: ignore[no-untyped-call]
                await asyncio.wait({lost, stopped}, return_when=asyncio.FIRST_COMPLETED)
                if stopped.done():
                    lost.cancel()
                    return
                reason = _disconnect_reason(lost)
                if bus is self._closed_on_purpose:
                    reconnected = asyncio.ensure_future(self._reconnected.wait())
                    await asyncio.wait({reconnected, stopped}, return_when=asyncio.FIRST_COMPLETED)
                    reconnected.cancel()
                    self._reconnected.clear()
                    continue
                log.warning("lost the connection to the bus (%s); reconnecting", reason)
                self._begin_outage(f"waiting for the {self.bus_kind} bus ({reason})")
                if not await self._reconnect(stopped):
                    return
        finally:
            stopped.cancel()

    def _begin_outage(self, why: str) -> None:
        """Nothing is sent on a lost connection: the panes go on, the bus hears of them
        again once reconnected (every object exported anew)."""
        self._table.remove_observers(BusPublisher)
        for listener in self._listeners:
            listener.disconnected()
        self._bus = self._manager = None
        self.outage = why
        self._status_changed()

    async def _reconnect(self, stopped: "asyncio.Future[Any]") -> bool:
        """Connect again, with backoff, until connected (True) or asked to stop (False).
        Mux's own private bus is started again at the same address if it went away."""
        assert self._service is not None
        delay = RECONNECT_FIRST_SECONDS
        last_problem = ""
        while not stopped.done():
            try:
                if self._kind is BusKind.PRIVATE and self._private_bus_gone():
                    self._start_private_bus()
                await self.connect(self._service)
            except StartupError as e:
                if str(e) != last_problem:  # one line per kind of failure, not per try
                    log.warning("still no bus: %s", e)
                    last_problem = str(e)
                await asyncio.wait({stopped}, timeout=delay)
                delay = min(delay * 2, RECONNECT_MAX_SECONDS)
                continue
            log.info("on the %s bus again; every pane is published again", self.bus_kind)
            self.outage = ""
            self._status_changed()
            return True
        return False

    def _private_bus_gone(self) -> bool:
        process = self._private_bus
        return process is None or process.poll() is not None

    # -- upgrade ----------------------------------------------------------------------

    async def flush(self) -> None:
        """A round trip to the bus daemon: everything sent before it (an Upgrade reply
        among it) has been written once its answer is back."""
        assert self._bus is not None
        await self._bus.call(bus_daemon_message("GetId"))

    async def close_for_upgrade(self) -> None:
        """Leave the bus before the exec: the new muxd takes the name."""
        await self.hub.close()  # the next muxd dials again, with the same hub id
        bus = self._bus
        if bus is None:
            return
        self._closed_on_purpose = bus
        bus.disconnect()
        with contextlib.suppress(Exception):  # whatever it ends with, it is closed
            await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]

    async def reopen_after_failed_upgrade(self) -> None:
        """The exec failed: serve on the bus again (StartupError if that fails), and
        dial the hosts again."""
        self.hub.start()
        if self._bus is not None and self._bus.connected:
            return
        assert self._service is not None
        try:
            await self.connect(self._service)
        finally:
            self._reconnected.set()

    # -- stop -------------------------------------------------------------------------

    def disconnect(self) -> None:
        if self._bus is not None and self._bus.connected:
            self._bus.disconnect()

    def _private_bus_exited(self, status: int) -> None:
        if self._private_bus is not None:  # (None: stopped by us, at our stop)
            log.error("the private dbus-daemon exited with status %d", status)
        self._private_bus = None

    def stop_private_bus(self) -> None:
        bus, self._private_bus = self._private_bus, None
        if bus is not None:
            stop_private_bus(bus, self._paths.private_bus)


def _disconnect_reason(lost: "asyncio.Future[object]") -> str:
    """Why a connection ended, in words for the log (dbus-fast raises the cause)."""
    if lost.cancelled():
        return "cancelled"
    error = lost.exception()
    if error is None:
        return "closed by the bus"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
