"""Who owns a bus name now: the only connection whose signals for that name mux obeys.

A signal's sender field is set by the bus daemon to the unique name of the
connection that sent it, so it cannot be forged; but any connection may emit a
signal with any interface and member, and send it to muxd directly whatever
muxd's match rules say. An `ActionInvoked` from a program that is not the
notification server, or a `PrepareForSleep` from one that is not logind, would
otherwise open a terminal or release the inhibitor. The owner is asked once
(`GetNameOwner`) and then followed through the daemon's `NameOwnerChanged`.
"""

import logging

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from mux.system.bus_daemon import BUS_DAEMON, bus_daemon_message

log = logging.getLogger(__name__)


class BusNameOwner:
    def __init__(self, name: str) -> None:
        self.name = name
        self.owner: str | None = None  # a unique name such as ":1.42"
        self._changes = 0  # NameOwnerChanged seen: a later one outdates a pending answer

    @property
    def match_rule(self) -> str:
        """The rule that brings this name's NameOwnerChanged (and nothing else)."""
        return (
            f"type='signal',sender='{BUS_DAEMON}',interface='{BUS_DAEMON}',"
            f"member='NameOwnerChanged',arg0='{self.name}'"
        )

    def signal_rule(self, interface: str, member: str | None = None) -> str:
        """A match rule for `interface`'s signals sent by the name's owner only."""
        rule = f"type='signal',sender='{self.name}',interface='{interface}'"
        return rule if member is None else f"{rule},member='{member}'"

    async def follow(self, bus: MessageBus) -> None:
        """Start following the owner on `bus` (after `handle` is a message handler of
        `bus`): the match rule first, then the current owner, so no change is missed."""
        await bus.call(bus_daemon_message("AddMatch", "s", [self.match_rule]))
        changes = self._changes
        reply = await bus.call(bus_daemon_message("GetNameOwner", "s", [self.name]))
        if changes != self._changes:
            return  # a NameOwnerChanged came after this answer was made: it is newer
        if reply is not None and reply.message_type is MessageType.METHOD_RETURN:
            self.owner = str(reply.body[0])
        else:
            self.owner = None  # NameHasNoOwner: nobody yet

    def handle(self, message: Message) -> None:
        """A message handler: follows NameOwnerChanged for the name."""
        if (
            message.message_type is MessageType.SIGNAL
            and message.sender == BUS_DAEMON
            and message.interface == BUS_DAEMON
            and message.member == "NameOwnerChanged"
            and message.signature == "sss"
            and message.body[0] == self.name
        ):
            self._changes += 1
            self.owner = str(message.body[2]) or None

    def sent(self, message: Message) -> bool:
        """Whether the name's current owner sent `message`; a line in the log if not."""
        if self.owner is not None and message.sender == self.owner:
            return True
        log.info(
            "ignored %s.%s from %s: not the owner of %s",
            message.interface,
            message.member,
            message.sender or "an unknown sender",
            self.name,
        )
        return False
