"""A snapshot before suspend and shutdown (docs/desktop.md#before-suspend-and-shutdown).

muxd holds a logind *delay* inhibitor (`Inhibit("shutdown:sleep", "mux", ...,
"delay")` on the system bus): logind then waits, up to its InhibitDelayMaxSec,
before it suspends or powers off. On `PrepareForSleep(true)` or
`PrepareForShutdown(true)` muxd takes a snapshot, durable on disk, and only then
lets go of the inhibitor; on `PrepareForSleep(false)` (resumed) it takes one
again. Those signals are obeyed only from the current owner of
`org.freedesktop.login1`: another connection may send them to muxd too. No
system bus or no logind: one log line, and mux runs as before.
"""

import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

from mux.desktop.bus_name_owner import BusNameOwner
from mux.system.bus_daemon import bus_daemon_message
from mux.system.tasks import BackgroundTasks

log = logging.getLogger(__name__)

LOGIND = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
LOGIND_MANAGER = "org.freedesktop.login1.Manager"
WHY = "saving the terminal session first"
SIGNALS = ("PrepareForSleep", "PrepareForShutdown")


class SleepGuard:
    def __init__(
        self, snapshot: Callable[[], Awaitable[tuple[str, int]]], changed: Callable[[], None]
    ) -> None:
        """`snapshot()`: save now, durably; `changed()`: the status line has news."""
        self._snapshot = snapshot
        self._changed = changed
        self._bus: MessageBus | None = None
        self._logind = BusNameOwner(LOGIND)
        self._inhibitor: int | None = None
        self._tasks = BackgroundTasks()
        # For the status line: "" while the inhibitor is held or there is none.
        self.note = ""

    async def start(self) -> None:
        try:
            bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
        except Exception as e:  # dbus-fast raises several kinds; none stops mux
            log.info("no system bus (%s): no snapshot before suspend or shutdown", e)
            return
        self._bus = bus
        bus.add_message_handler(self._signal)
        for member in SIGNALS:
            rule = self._logind.signal_rule(LOGIND_MANAGER, member)
            await _call(bus, bus_daemon_message("AddMatch", "s", [rule]))
        try:
            await self._logind.follow(bus)
        except (OSError, EOFError) as e:
            log.info("the system bus went away (%s)", e)
            return
        await self._take()

    async def close(self) -> None:
        self._tasks.cancel_all()
        self._release()
        if self._bus is not None:
            self._bus.disconnect()
            self._bus = None

    async def _take(self) -> None:
        bus = self._bus
        if bus is None or self._inhibitor is not None:
            return
        inhibit = _logind("Inhibit", "ssss", ["shutdown:sleep", "mux", WHY, "delay"])
        reply = await _call(bus, inhibit)
        if reply is None or reply.message_type is MessageType.ERROR or not reply.unix_fds:
            detail = reply.body[0] if reply is not None and reply.body else "no answer"
            log.info("logind gives no inhibitor (%s): no snapshot before suspend", detail)
            for fd in reply.unix_fds if reply is not None else []:
                os.close(fd)
            return
        self._inhibitor = reply.unix_fds[0]
        # Received fds are inheritable: a pane started now would hold off suspend too.
        os.set_inheritable(self._inhibitor, False)
        for extra in reply.unix_fds[1:]:
            os.close(extra)
        log.info("holding a delay inhibitor: a snapshot is taken before suspend and shutdown")
        self._set_note("")

    def _release(self) -> None:
        fd, self._inhibitor = self._inhibitor, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _signal(self, message: Message) -> None:
        self._logind.handle(message)
        if (
            message.message_type is not MessageType.SIGNAL
            or message.interface != LOGIND_MANAGER
            or message.member not in SIGNALS
            or message.signature != "b"
            or not self._logind.sent(message)
        ):
            return
        log.debug("logind: %s(%s)", message.member, message.body[0])
        going = bool(message.body[0])
        what = "suspend" if message.member == "PrepareForSleep" else "shutdown"
        if going:
            self._tasks.spawn(self._before(what))
        elif what == "suspend":
            log.info("resumed: taking the inhibitor again")
            self._tasks.spawn(self._take())

    async def _before(self, what: str) -> None:
        try:
            _path, generation = await self._snapshot()
        except Exception as e:  # whatever failed, logind must not wait on us
            log.error("the snapshot before %s failed: %s", what, e)
            self._set_note(f"no snapshot before {what}")
        else:
            log.info("snapshot %d taken before %s; the inhibitor is released", generation, what)
            self._set_note(f"saved before {what}")
        self._release()

    def _set_note(self, note: str) -> None:
        if note != self.note:
            self.note = note
            self._changed()


def _logind(member: str, signature: str = "", body: list[Any] | None = None) -> Message:
    return Message(
        destination=LOGIND,
        path=LOGIND_PATH,
        interface=LOGIND_MANAGER,
        member=member,
        signature=signature,
        body=body or [],
    )


async def _call(bus: MessageBus, message: Message) -> Message | None:
    try:
        return await bus.call(message)
    except (OSError, EOFError) as e:
        log.info("the system bus went away (%s)", e)
        return None
