"""One satellite's link: dial it over ssh, keep it up, heal it (docs/federation.md#links).

A dial: the ssh master connection (mux.federation.ssh), `muxctl where --json`
through it, the forwards of the satellite's bus and attach socket into the
host's runtime dir, a D-Bus connection through the forwarded bus (no fd
passing: fds do not cross ssh; any uid: the satellite's account may have
another), its `Features`, and `RegisterLink` with the hub's id. The link is up
until the master exits, the bus connection drops or a check (`check_now`, on a
network change) gets no answer within a second; then it redials, at once the
first time and then with backoff (0.25 s doubling to 30 s, with jitter). A
refused login or host key stops redialing: the host is "refused" until its
configuration changes (then it is a new Link). Nothing here blocks the panes:
every wait is the link's own task's.
"""

import asyncio
import contextlib
import logging
import os
import random
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dbus_fast import DBusError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.auth import UID_NOT_SPECIFIED, AuthExternal

from mux.federation.host_book import Host
from mux.federation.ssh import Failure, LinkFailure
from mux.federation.ssh_master import SshMaster
from mux.protocol.errors import Unavailable
from mux.protocol.hosts import HostState, unix_socket_path
from mux.protocol.names import BUS_NAME, FEATURE_LINKS, MANAGER_INTERFACE, ROOT_PATH

log = logging.getLogger(__name__)

FIRST_DELAY_SECONDS = 0.25
MAX_DELAY_SECONDS = 30.0
DIAL_SECONDS = 30.0  # the whole dial, ssh's own connect timeout included
CHECK_SECONDS = 1.0
OWNER_RULE = (
    f"type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='{BUS_NAME}'"
)


class Link:
    def __init__(
        self,
        host: Host,
        ssh: Sequence[str],
        directory: Path,
        hub_id: bytes,
        changed: Callable[["Link"], None],
    ) -> None:
        """`directory`: the host's runtime dir (made at each dial); `changed(link)`:
        its state or last error changed."""
        self.host = host
        self._ssh = list(ssh)
        self._dir = directory
        self._hub_id = hub_id
        self._changed = changed
        self.state = HostState.DOWN
        self.last_error = ""
        self.features = 0
        self.bus: MessageBus | None = None
        self._master: SshMaster | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._lost = asyncio.Event()

    @property
    def control(self) -> Path:
        return self._dir / "ssh"

    @property
    def attach_socket(self) -> Path:
        return self._dir / "attach"

    @property
    def bus_socket(self) -> Path:
        return self._dir / "bus"

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        """Hang up for good: the satellite's panes are untouched."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._tear_down()
        shutil.rmtree(self._dir, ignore_errors=True)

    def check_now(self) -> None:
        """The network changed: check an up link at once; redial a down one now."""
        if self.state is HostState.UP:
            asyncio.get_running_loop().create_task(self._check())
        else:
            self._wake.set()

    async def require_up(self) -> MessageBus:
        """The link's bus; Unavailable while it is not up."""
        bus = self.bus
        if self.state is not HostState.UP or bus is None:
            raise Unavailable(
                f"host {self.host.name} is not connected ({self.state}); try again once it "
                "is up (muxctl hosts, or the signal HostStateChanged)"
            )
        return bus

    async def relay(self, member: str, signature: str, body: list[Any]) -> list[Any]:
        """Call `member` of the satellite's Manager and return its answer; Unavailable
        while the link is not up; the satellite's refusals come back as they are
        (DBusError with the satellite's error name and message)."""
        bus = await self.require_up()
        message = Message(
            destination=BUS_NAME,
            path=ROOT_PATH,
            interface=MANAGER_INTERFACE,
            member=member,
            signature=signature,
            body=body,
        )
        try:
            reply = await bus.call(message)
        except (OSError, EOFError) as e:
            log.info("host %s: %s lost with the link: %s", self.host.name, member, e)
            reply = None
        if reply is None:
            raise Unavailable(f"host {self.host.name}: the link went down during {member}")
        if reply.message_type is MessageType.ERROR:
            detail = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
            raise DBusError(reply.error_name or "org.freedesktop.DBus.Error.Failed", detail)
        return list(reply.body)

    # -- the link's life ----------------------------------------------------------

    async def _run(self) -> None:
        delay = FIRST_DELAY_SECONDS
        while True:
            self._set(HostState.DIALING, self.last_error)
            # A network change from here on cuts the backoff after a failed dial short.
            self._wake.clear()
            try:
                await asyncio.wait_for(self._dial(), DIAL_SECONDS)
            except (LinkFailure, TimeoutError) as e:
                failure = (
                    e.failure
                    if isinstance(e, LinkFailure)
                    else Failure(f"ssh {self.host.destination}: no answer within 30 s", False)
                )
                log.warning("host %s: %s", self.host.name, failure.message)
                await self._tear_down()
                if failure.refused:
                    self._set(HostState.REFUSED, failure.message)
                    await asyncio.Event().wait()  # until closed: its configuration changes
                self._set(HostState.DOWN, failure.message)
                await self._pause(delay)
                delay = min(delay * 2, MAX_DELAY_SECONDS)
                continue
            delay = FIRST_DELAY_SECONDS
            self._set(HostState.UP, "")
            log.info("host %s is up (features %#x)", self.host.name, self.features)
            reason = await self._until_lost()
            log.warning("host %s: link lost (%s); redialing", self.host.name, reason)
            await self._tear_down()
            self._set(HostState.DOWN, reason)

    async def _pause(self, delay: float) -> None:
        """The backoff, with jitter; a network change (`check_now`) ends it early."""
        with contextlib.suppress(TimeoutError):
            jitter = random.uniform(0.8, 1.2)  # noqa: S311 (spreads redials, guards nothing)
            await asyncio.wait_for(self._wake.wait(), delay * jitter)

    def _set(self, state: HostState, last_error: str) -> None:
        if (state, last_error) != (self.state, self.last_error):
            self.state, self.last_error = state, last_error
            self._changed(self)

    # -- dialing ------------------------------------------------------------------

    async def _dial(self) -> None:
        self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self._dir, 0o700)
        for leftover in (self.control, self.bus_socket, self.attach_socket):
            leftover.unlink(missing_ok=True)  # ssh leaves its sockets behind
        self._master = SshMaster(self._ssh, self.host.destination, self._dir, self.host.name)
        await self._master.start()
        where = await self._master.where(self.host.muxctl)
        remote_bus = unix_socket_path(where.bus)
        if remote_bus is None:
            why = f"the bus of mux on {self.host.destination} is not a socket file"
            raise LinkFailure(Failure(why, False))
        await self._master.forward(
            [(str(self.bus_socket), remote_bus), (str(self.attach_socket), where.attach)]
        )
        self.bus = await self._connect(self._master)
        self.features = await _features(self.bus, self.host.destination)
        if self.features & FEATURE_LINKS:
            # A new muxd there (its upgrade, a restart) knows no link: register again.
            await _call(self.bus, self.host.destination, "AddMatch", "s", [OWNER_RULE], to_bus=True)
            self.bus.add_message_handler(self._owner_changed)
            await _call(self.bus, self.host.destination, "RegisterLink", "ay", [self._hub_id])

    async def _connect(self, master: SshMaster) -> MessageBus:
        bus = MessageBus(
            bus_address=f"unix:path={self.bus_socket}",
            negotiate_unix_fd=False,  # fds do not cross ssh
            auth=AuthExternal(UID_NOT_SPECIFIED),  # the satellite's account may have another uid
        )
        try:
            return await bus.connect()
        except Exception as e:  # dbus-fast raises several kinds here
            log.debug("host %s: bus connect: %r", self.host.name, e)
            # `muxctl where` has just found mux serving there, so a connection the
            # forward resets is one sshd refused: ssh says no more than "open failed"
            # (nothing at all at LogLevel ERROR), the same as for a missing socket.
            why = (
                f"the sshd of {self.host.destination} refuses to forward mux's sockets: "
                "allow it with AllowStreamLocalForwarding (and AllowTcpForwarding) yes or "
                "local in its sshd_config"
            )
            raise LinkFailure(Failure(why, False)) from None

    def _owner_changed(self, message: Message) -> None:
        if (
            message.message_type is MessageType.SIGNAL
            and message.member == "NameOwnerChanged"
            and message.body[0] == BUS_NAME
            and message.body[2]
        ):
            asyncio.get_running_loop().create_task(self._register_again())

    async def _register_again(self) -> None:
        bus = self.bus
        if bus is None:
            return
        try:
            await _call(bus, self.host.destination, "RegisterLink", "ay", [self._hub_id])
            log.info("host %s: mux there restarted; the link is registered again", self.host.name)
        except (LinkFailure, OSError, EOFError) as e:
            log.warning("host %s: registering the link again failed: %s", self.host.name, e)
            if self.bus is bus:
                self._lost.set()

    # -- while up -----------------------------------------------------------------

    async def _until_lost(self) -> str:
        assert self.bus is not None
        assert self._master is not None
        disconnected = asyncio.ensure_future(self.bus.wait_for_disconnect())  # type: ignore[no-untyped-call]
        ended = asyncio.ensure_future(self._master.ended.wait())
        lost = asyncio.ensure_future(self._lost.wait())
        try:
            await asyncio.wait({disconnected, ended, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (disconnected, ended, lost):
                waiting.cancel()
        if self._master.ended.is_set():
            return f"ssh ended ({self._master.failure().message})"
        if disconnected.done():
            return "the satellite's bus connection closed"
        return "no answer from the satellite"

    async def _check(self) -> None:
        bus = self.bus
        if bus is None:
            return
        ping = Message(
            destination=BUS_NAME,
            path=ROOT_PATH,
            interface="org.freedesktop.DBus.Peer",
            member="Ping",
        )
        try:
            await asyncio.wait_for(bus.call(ping), CHECK_SECONDS)
        except (TimeoutError, OSError, EOFError):
            if self.bus is bus:
                self._lost.set()

    async def _tear_down(self) -> None:
        bus, self.bus = self.bus, None
        if bus is not None and bus.connected:
            bus.disconnect()
        master, self._master = self._master, None
        if master is not None:
            await master.stop()
        self._lost.clear()
        for leftover in (self.bus_socket, self.attach_socket):
            leftover.unlink(missing_ok=True)


async def _features(bus: MessageBus, destination: str) -> int:
    properties = "org.freedesktop.DBus.Properties"
    reply = await _call(
        bus, destination, "Get", "ss", [MANAGER_INTERFACE, "Features"], interface=properties
    )
    value = reply.body[0]
    return int(value.value) if isinstance(value, Variant) else 0


async def _call(
    bus: MessageBus,
    destination: str,
    member: str,
    signature: str,
    body: list[object],
    *,
    interface: str = MANAGER_INTERFACE,
    to_bus: bool = False,
) -> Message:
    """A call of the dial (to mux there, or `to_bus`: to the bus daemon); an error
    reply fails the dial."""
    reply = await bus.call(
        Message(
            destination="org.freedesktop.DBus" if to_bus else BUS_NAME,
            path="/org/freedesktop/DBus" if to_bus else ROOT_PATH,
            interface="org.freedesktop.DBus" if to_bus else interface,
            member=member,
            signature=signature,
            body=body,
        )
    )
    assert reply is not None
    if reply.message_type is MessageType.ERROR:
        detail = reply.body[0] if reply.body else ""
        why = f"mux on {destination}: {member}: {detail or reply.error_name}"
        raise LinkFailure(Failure(why, False))
    return reply
