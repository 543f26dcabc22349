"""One dial of a link (docs/federation.md#links): the ssh master connection, `muxctl
where --json` through it, the satellite's bus and attach socket forwarded into the
host's runtime dir, D-Bus through the forwarded bus, the satellite's `Features`,
and `RegisterLink` with the hub's id."""

import logging
import os
from pathlib import Path

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.auth import UID_NOT_SPECIFIED, AuthExternal

from mux.federation.host_book import Host
from mux.federation.ssh import Failure, LinkFailure
from mux.federation.ssh_master import SshMaster
from mux.protocol.hosts import unix_socket_path
from mux.protocol.names import BUS_NAME, FEATURE_LINKS, MANAGER_INTERFACE, ROOT_PATH
from mux.system.bus_daemon import BUS_DAEMON, bus_daemon_message
from mux.system.socket_trust import UntrustedSocket, connect_trusted_async

log = logging.getLogger(__name__)

# A new muxd there (an upgrade, a restart) knows no link: the link registers again.
OWNER_RULE = f"type='signal',sender='{BUS_DAEMON}',member='NameOwnerChanged',arg0='{BUS_NAME}'"


async def dial(host: Host, master: SshMaster, hub_id: bytes) -> tuple[MessageBus, int]:
    """The bus connection through the link, and the satellite's features; LinkFailure
    saying what failed. The caller stops `master` whatever happens."""
    directory = master.control.parent
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    bus_socket, attach_socket = directory / "bus", directory / "attach"
    for leftover in (master.control, bus_socket, attach_socket):
        leftover.unlink(missing_ok=True)  # ssh leaves its sockets behind
    await master.start()
    where = await master.where(host.muxctl)
    remote_bus = unix_socket_path(where.bus)
    if remote_bus is None:
        why = f"the bus of mux on {host.destination} is not a socket file"
        raise LinkFailure(Failure(why, False))
    await master.forward([(str(bus_socket), remote_bus), (str(attach_socket), where.attach)])
    bus = await _connect(host, bus_socket)
    try:
        features = await _features(bus, host.destination)
        if features & FEATURE_LINKS:
            match = bus_daemon_message("AddMatch", "s", [OWNER_RULE])
            await _answer(bus, host.destination, match)
            await satellite_call(bus, host.destination, "RegisterLink", "ay", [hub_id])
    except BaseException:
        bus.disconnect()
        raise
    return bus, features


async def _check_forward(host: Host, bus_socket: Path) -> None:
    """The forwarded bus socket is the hub's own ssh's, in a directory of the user's
    (mux.system.socket_trust): a connection made and closed before dbus-fast connects,
    as dbus-fast sends as soon as it has connected. Between the two only the user could
    change the socket: its directory is the user's alone."""
    try:
        (await connect_trusted_async(bus_socket)).close()
    except UntrustedSocket as refusal:
        log.warning("host %s: %s", host.name, refusal)
        why = "the socket the link forwards mux's bus to is not this user's (see muxd's log)"
        raise LinkFailure(Failure(why, False)) from None
    except OSError:
        pass  # nothing listens: said as dbus-fast finds it (_connect)


async def _connect(host: Host, bus_socket: Path) -> MessageBus:
    await _check_forward(host, bus_socket)
    bus = MessageBus(
        bus_address=f"unix:path={bus_socket}",
        negotiate_unix_fd=False,  # fds do not cross ssh
        auth=AuthExternal(UID_NOT_SPECIFIED),  # the satellite's account may have another uid
    )
    try:
        return await bus.connect()
    except Exception as e:  # dbus-fast raises several kinds here
        log.debug("host %s: bus connect: %r", host.name, e)
        # `muxctl where` has just found mux serving there, so a connection the
        # forward resets is one sshd refused: ssh says no more than "open failed"
        # (nothing at all at LogLevel ERROR), the same as for a missing socket.
        why = (
            f"the sshd of {host.destination} refuses to forward mux's sockets: "
            "allow it with AllowStreamLocalForwarding (and AllowTcpForwarding) yes or "
            "local in its sshd_config"
        )
        raise LinkFailure(Failure(why, False)) from None


async def _features(bus: MessageBus, destination: str) -> int:
    properties = "org.freedesktop.DBus.Properties"
    reply = await satellite_call(
        bus, destination, "Get", "ss", [MANAGER_INTERFACE, "Features"], interface=properties
    )
    value = reply.body[0]
    return int(value.value) if isinstance(value, Variant) else 0


async def satellite_call(
    bus: MessageBus,
    destination: str,
    member: str,
    signature: str,
    body: list[object],
    *,
    interface: str = MANAGER_INTERFACE,
) -> Message:
    """A call to mux on the satellite; an error reply fails the dial."""
    message = Message(
        destination=BUS_NAME,
        path=ROOT_PATH,
        interface=interface,
        member=member,
        signature=signature,
        body=body,
    )
    return await _answer(bus, destination, message)


async def _answer(bus: MessageBus, destination: str, message: Message) -> Message:
    reply = await bus.call(message)
    assert reply is not None
    if reply.message_type is MessageType.ERROR:
        detail = reply.body[0] if reply.body else ""
        why = f"mux on {destination}: {message.member}: {detail or reply.error_name}"
        raise LinkFailure(Failure(why, False))
    return reply
