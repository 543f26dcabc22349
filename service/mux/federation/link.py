"""One satellite's link: dial it over ssh, keep it up, heal it (docs/federation.md#links).

A dial (mux.federation.dial) ends with a D-Bus connection to the satellite's
bus through ssh. The link is up until the master exits, the bus connection
drops or a check (`check_now`, on a network change, or after a relayed call
went unanswered for 25 s) gets no answer from the satellite's bus daemon within
a second; then it redials: at once after a link that had been up 10 s, else
with backoff (0.25 s doubling to 30 s, with jitter). A
refused login or host key stops redialing: the host is "refused" until its
configuration changes (then it is a new Link). Nothing here blocks the panes:
every wait is the link's own task's.
"""

import asyncio
import contextlib
import logging
import random
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dbus_fast import DBusError, Message, MessageFlag, MessageType
from dbus_fast.aio import MessageBus

from mux.federation.dial import dial, satellite_call
from mux.federation.host_book import Host
from mux.federation.ssh import Failure, LinkFailure
from mux.federation.ssh_master import SshMaster
from mux.protocol.errors import Unavailable
from mux.protocol.hosts import HostState
from mux.protocol.names import BUS_NAME, FEATURE_LINKS, MANAGER_INTERFACE, ROOT_PATH
from mux.system.bus_daemon import BUS_DAEMON, bus_daemon_message
from mux.system.tasks import BackgroundTasks

log = logging.getLogger(__name__)

FIRST_DELAY_SECONDS = 0.25
MAX_DELAY_SECONDS = 30.0
DIAL_SECONDS = 30.0  # the whole dial, ssh's own connect timeout included
CHECK_SECONDS = 1.0
RELAY_SECONDS = 25.0  # below the 25 s that D-Bus clients wait for an answer by default
STABLE_SECONDS = 10.0  # a link up this long was no flap: its next redial is at once


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
        self._tasks = BackgroundTasks()

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
            with contextlib.suppress(BaseException):
                await self._task
        await self._tear_down()
        shutil.rmtree(self._dir, ignore_errors=True)

    def check_now(self) -> None:
        """The network changed: check an up link at once; redial a down one now."""
        if self.state is HostState.UP:
            self._tasks.spawn(self._check())
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
            reply = await asyncio.wait_for(bus.call(message), RELAY_SECONDS)
        except TimeoutError:
            self.check_now()  # the satellite, or the link, may be stuck
            raise Unavailable(
                f"host {self.host.name} did not answer {member} within {RELAY_SECONDS:.0f} s"
            ) from None
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
            except Exception as e:  # any failure is the link's, never the hub's
                failure = self._failure_of(e)
                log.warning("host %s: %s", self.host.name, failure.message)
                await self._tear_down()
                if failure.refused:
                    self._set(HostState.REFUSED, failure.message)
                    await asyncio.Event().wait()  # until closed: its configuration changes
                self._set(HostState.DOWN, failure.message)
                await self._pause(delay)
                delay = min(delay * 2, MAX_DELAY_SECONDS)
                continue
            self._set(HostState.UP, "")
            log.info("host %s is up (features %#x)", self.host.name, self.features)
            up_since = asyncio.get_running_loop().time()
            reason = await self._until_lost()
            log.warning("host %s: link lost (%s); redialing", self.host.name, reason)
            await self._tear_down()
            self._set(HostState.DOWN, reason)
            if asyncio.get_running_loop().time() - up_since < STABLE_SECONDS:
                # A link that keeps dropping is redialed with backoff, not in a loop.
                await self._pause(delay)
                delay = min(delay * 2, MAX_DELAY_SECONDS)
            else:
                delay = FIRST_DELAY_SECONDS

    def _failure_of(self, error: Exception) -> Failure:
        if isinstance(error, LinkFailure):
            return error.failure
        if isinstance(error, TimeoutError):
            return Failure(f"ssh {self.host.destination}: no answer within 30 s", False)
        if isinstance(error, FileNotFoundError):
            return Failure(f"the ssh command ({self._ssh[0]}) is not installed", False)
        log.warning("host %s: dial failed", self.host.name, exc_info=error)
        return Failure(f"ssh {self.host.destination}: the link failed while dialing", False)

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
        self._master = SshMaster(self._ssh, self.host.destination, self._dir, self.host.name)
        self.bus, self.features = await dial(self.host, self._master, self._hub_id)
        if self.features & FEATURE_LINKS:
            self.bus.add_message_handler(self._owner_changed)

    def _owner_changed(self, message: Message) -> None:
        if (
            message.message_type is MessageType.SIGNAL
            and message.sender == BUS_DAEMON
            and message.member == "NameOwnerChanged"
            and message.signature == "sss"
            and message.body[0] == BUS_NAME
            and message.body[2]
        ):
            self._tasks.spawn(self._register_again())

    async def _register_again(self) -> None:
        bus = self.bus
        if bus is None:
            return
        try:
            register = satellite_call(
                bus, self.host.destination, "RegisterLink", "ay", [self._hub_id]
            )
            await asyncio.wait_for(register, RELAY_SECONDS)
            log.info("host %s: mux there restarted; the link is registered again", self.host.name)
        except (LinkFailure, OSError, EOFError, TimeoutError, AssertionError) as e:
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
        """Whether the link still carries anything: a round trip to the satellite's bus
        daemon (not to mux: a busy or upgrading mux is not a dead link)."""
        bus = self.bus
        if bus is None:
            return
        ping = bus_daemon_message(
            "Ping", interface="org.freedesktop.DBus.Peer", flags=MessageFlag.NO_AUTOSTART
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
        if self._master is not None:
            await self._master.stop()  # kept until stopped: a cancel must not orphan ssh
            self._master = None
        self._lost.clear()
        for leftover in (self.bus_socket, self.attach_socket):
            leftover.unlink(missing_ok=True)
