"""Talking to the service: finding its bus, starting it when nothing else will, calling it.

Calls are plain, blocking D-Bus method calls (jeepney; no introspection round
trip, no event loop: a verb costs little more than the interpreter's start). When
the service is not on the bus and cannot be activated, muxctl starts `muxd` in the
background itself, the way a tmux client starts its server.
"""

import functools
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jeepney import DBusAddress, Message, MessageFlag, MessageType, message_bus, new_method_call
from jeepney.io.blocking import DBusConnection, open_dbus_connection
from jeepney.low_level import HeaderFields

from mux.protocol.dbus_methods import MANAGER_METHODS
from mux.protocol.names import (
    BUS_NAME,
    ERROR_PREFIX,
    HOST_PATH_PREFIX,
    MANAGER_INTERFACE,
    ROOT_PATH,
)
from mux.system.busaddr import BusChoice, BusKind, choose_bus_for, socket_answers
from mux.system.locks import holder_alive
from mux.system.paths import (
    PRIVATE_BUS,
    Paths,
    RuntimeDirError,
    check_private_dir,
    resolve_paths,
    runtime_dir,
)
from muxctl.errors import CtlError, NotRunning, RemoteError, SocketRefused
from muxctl.wire import from_wire, to_wire

if TYPE_CHECKING:
    from muxctl.starter import Starter

START_TIMEOUT_SECONDS = 15.0
# A muxd that runs but is not on its bus (it lost it and is reconnecting, or is still
# starting) is waited for this long; no second muxd is started beside it.
RECONNECT_WAIT_SECONDS = 10.0
RECONNECTING = "mux is reconnecting to its bus; try again in a moment"
POLL_SECONDS = 0.02

# Replies that mean "nobody owns the name and the bus could not activate it".
NOT_RUNNING_ERRORS = frozenset(
    {
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
    }
)


class MuxClient:
    def __init__(self, connection: DBusConnection, choice: BusChoice) -> None:
        self.connection = connection
        self.choice = choice
        # Where Manager calls go: the root object, or a host's (muxctl --host).
        self.manager_path = ROOT_PATH
        # False: every call carries NO_AUTO_START, so that a verb that must not start
        # mux (a read-only one, --no-start) cannot have the bus activate it if mux stops
        # between connect's check and the call (docs/muxctl.md#starting-the-service).
        self.auto_start = True

    def call(
        self,
        member: str,
        signature: str | None = None,
        body: list[Any] | None = None,
        *,
        interface: str = MANAGER_INTERFACE,
        path: str | None = None,
        destination: str = BUS_NAME,
    ) -> list[Any]:
        """Call `member` (on `manager_path` unless `path` is given); a Manager method's
        signature comes from MANAGER_METHODS (a signature given for one must be the
        same), any other method's is `signature`."""
        signature = _call_signature(interface, member, signature)
        reply = self._reply(
            member, signature, body or [], interface=interface, path=path, destination=destination
        )
        return from_wire(reply.header.fields.get(HeaderFields.signature, ""), reply.body)

    def _reply(
        self,
        member: str,
        signature: str,
        body: list[Any],
        *,
        interface: str = MANAGER_INTERFACE,
        path: str | None = None,
        destination: str = BUS_NAME,
    ) -> Message:
        """The reply to one call, as jeepney reads it; RemoteError for an error reply."""
        path = path if path is not None else self.manager_path
        message = new_method_call(
            DBusAddress(path, destination, interface),
            member,
            signature or None,
            to_wire(signature, body),
        )
        if not self.auto_start:
            message.header.flags |= MessageFlag.no_auto_start
        reply = self.connection.send_and_get_reply(message)
        if reply.header.message_type is MessageType.error:
            raise _remote_error(reply, path)
        return reply

    def open_attach(self, pane_id: int) -> int:
        """OpenAttach: the fd of a connection already attached to the pane, now ours."""
        reply = self._reply("OpenAttach", "t", [pane_id])
        fds = [value for value in reply.body if hasattr(value, "to_raw_fd")]
        if not fds:
            raise CtlError("this bus cannot pass file descriptors: no attach through the hub")
        for extra in fds[1:]:
            extra.close()
        return int(fds[0].to_raw_fd())

    def ask_bus(self, member: str, signature: str = "", body: list[Any] | None = None) -> Any:
        """The bus daemon's own answer (org.freedesktop.DBus); RemoteError if it refuses."""
        answer = self.call(
            member,
            signature,
            body,
            interface=message_bus.interface,
            path=message_bus.object_path,
            destination=message_bus.bus_name,
        )
        return answer[0] if answer else None

    def get_property(self, name: str, interface: str = MANAGER_INTERFACE) -> Any:
        (variant,) = self.call(
            "Get", "ss", [interface, name], interface="org.freedesktop.DBus.Properties"
        )
        return variant.value

    def close(self) -> None:
        self.connection.close()


_NO_OBJECT = (
    "org.freedesktop.DBus.Error.UnknownMethod",
    "org.freedesktop.DBus.Error.UnknownObject",
)


def _remote_error(reply: Message, path: str) -> RemoteError:
    """The refusal, named; a host object that is not there is a host that is not."""
    error_name = reply.header.fields.get(HeaderFields.error_name)
    if error_name in _NO_OBJECT and path.startswith(HOST_PATH_PREFIX):
        name = path.removeprefix(HOST_PATH_PREFIX)
        return RemoteError(
            ERROR_PREFIX + "InvalidArgument",
            f"there is no host {name!r} (muxctl hosts lists them)",
        )
    text = str(reply.body[0]) if reply.body else (error_name or "error")
    return RemoteError(error_name or "org.freedesktop.DBus.Error.Failed", text)


def _call_signature(interface: str, member: str, given: str | None) -> str:
    method = MANAGER_METHODS.get(member) if interface == MANAGER_INTERFACE else None
    if method is None:  # not a Manager method this muxctl knows: the service will say
        return given or ""
    declared = method.takes
    if given is not None and given != declared:
        raise ValueError(f"{member} takes {declared!r}, not {given!r}")
    return declared


def open_bus(choice: BusChoice) -> DBusConnection:
    """A connection to the chosen bus; CtlError naming the bus when there is none."""
    from jeepney.auth import AuthenticationError

    try:
        try:  # fds, for OpenAttach; a bus that cannot pass them serves the rest
            return open_dbus_connection(bus=choice.address, enable_fds=True)
        except AuthenticationError:  # FDNegotiationError among them
            return open_dbus_connection(bus=choice.address)
    except Exception as e:  # OSError, AuthenticationError, ValueError...
        raise CtlError(f"cannot connect to the {choice.kind} bus ({choice.address}): {e}") from None


def name_has_owner(connection: DBusConnection) -> bool:
    """Whether org.mux.Mux1 is owned: asks the bus daemon, never activates mux."""
    reply = connection.send_and_get_reply(
        new_method_call(message_bus, "NameHasOwner", "s", (BUS_NAME,))
    )
    return reply.header.message_type is MessageType.method_return and bool(reply.body[0])


def _ping(connection: DBusConnection, *, activate: bool) -> str | None:
    """None when the service answers (activated by the bus if allowed); else the error name."""
    message = new_method_call(DBusAddress(ROOT_PATH, BUS_NAME, "org.freedesktop.DBus.Peer"), "Ping")
    if not activate:
        message.header.flags |= MessageFlag.no_auto_start
    reply = connection.send_and_get_reply(message)
    if reply.header.message_type is MessageType.error:
        return str(reply.header.fields.get(HeaderFields.error_name, "error"))
    return None


def _first_answer(connection: DBusConnection, autostart: bool) -> str | None:
    """None when mux owns its name on the bus; else why not, as an error name."""
    if autostart:
        return _ping(connection, activate=False)
    return None if name_has_owner(connection) else "org.freedesktop.DBus.Error.NameHasNoOwner"


def _start_muxd(paths: Paths) -> "Starter":
    from muxctl.starter import Starter  # (only when starting: it loads subprocess)

    return Starter(paths)


def _wait_for(condition: Callable[[], bool]) -> bool:
    """Whether `condition` came true within RECONNECT_WAIT_SECONDS."""
    deadline = time.monotonic() + RECONNECT_WAIT_SECONDS
    while True:
        if condition():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_SECONDS * 5)


def _unless_not_running(client: MuxClient, error: str) -> None:
    """A refusal other than "nobody owns the name" is final."""
    if error not in NOT_RUNNING_ERRORS:
        client.close()
        raise CtlError(f"the mux service does not answer: {error}")


def connect(*, autostart: bool = True, environ: dict[str, str] | None = None) -> MuxClient:
    """A client connected to a bus on which the service answers.

    With autostart, a service that is not running is started: by the bus
    (D-Bus activation) where it can, else by starting muxd here. Without,
    NotRunning is raised and nothing is started: the bus is asked whether the
    name has an owner (NameHasOwner activates nothing), no private bus is
    started, and the client's calls carry NO_AUTO_START (MuxClient.auto_start).
    """
    runtime = runtime_dir(environ)
    private_bus = os.path.join(runtime, PRIVATE_BUS)
    choice = choose_bus_for(private_bus, environ)
    starter: Starter | None = None

    @functools.cache
    def paths() -> Paths:  # off the common path only: resolve_paths loads pathlib
        return resolve_paths(environ)

    if choice.kind is BusKind.PRIVATE and os.path.lexists(runtime):
        # Whoever can write there could pose as mux and read every argv, env
        # and keystroke we send: the same check muxd makes before using it.
        try:
            check_private_dir(runtime)
        except RuntimeDirError as e:
            raise CtlError(f"refusing to use the private bus: {e}") from None
    private_bus_down = choice.kind is BusKind.PRIVATE and not socket_answers(private_bus)
    if private_bus_down and holder_alive(paths()):  # muxd runs and starts its bus again
        _wait_for(lambda: socket_answers(private_bus))
    if choice.kind is BusKind.PRIVATE and not socket_answers(private_bus):
        if not autostart:
            raise NotRunning("mux is not running (no bus answers)")
        # A listening attach socket with no muxd is mux.socket's: connecting (done by
        # asking) has systemd start mux.service, which starts the private bus.
        activated = socket_answers(paths().attach_socket) and not holder_alive(paths())
        starter = None if activated else _start_muxd(paths())
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not socket_answers(private_bus):
            if starter is not None:
                starter.check_alive()
            if time.monotonic() > deadline:
                how = " (started by mux.socket: see systemctl --user status mux)"
                raise CtlError(f"muxd did not start its bus within 15 seconds{how * activated}")
            time.sleep(POLL_SECONDS)

    try:
        if choice.kind is BusKind.PRIVATE:  # mux's socket: checked before a byte is sent
            from muxctl.private_bus import check_private_bus  # (only then: its imports)

            check_private_bus(private_bus)
        connection = open_bus(choice)
    except SocketRefused:
        raise  # (whether muxd runs or not)
    except CtlError:
        if holder_alive(paths()):
            raise CtlError(f"{RECONNECTING} (the {choice.kind} bus does not answer)") from None
        raise
    client = MuxClient(connection, choice)
    client.auto_start = autostart
    # The common case costs one round trip and activates nothing: without autostart the
    # bus is asked whether the name has an owner (the bus answers that itself).
    error = _first_answer(connection, autostart)
    if error is None:
        return client
    _unless_not_running(client, error)
    if starter is None and holder_alive(paths()):
        # A muxd runs but is off its bus (reconnecting, or still starting): it comes
        # back by itself; neither activation nor a second muxd.
        if _wait_for(lambda: name_has_owner(connection)):
            return client
        client.close()
        raise CtlError(RECONNECTING)
    if starter is None and autostart:
        error = _ping(connection, activate=True)  # D-Bus activation, where the bus has it
        if error is None:
            return client
        _unless_not_running(client, error)
    if starter is None:
        if not autostart:
            client.close()
            raise NotRunning(
                f"mux is not running (nothing owns {BUS_NAME} on the {choice.kind} bus)"
            )
        starter = _start_muxd(paths())
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not name_has_owner(connection):
        try:
            starter.check_alive()
        except CtlError:
            client.close()
            raise
        if time.monotonic() > deadline:
            client.close()
            raise CtlError("muxd did not appear on the bus within 15 seconds")
        time.sleep(POLL_SECONDS)
    return client
