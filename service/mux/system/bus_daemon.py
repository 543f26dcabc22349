"""Calls to the bus daemon itself (`org.freedesktop.DBus`), addressed in one place."""

from dbus_fast import Message, MessageFlag

BUS_DAEMON = "org.freedesktop.DBus"
BUS_DAEMON_PATH = "/org/freedesktop/DBus"


def bus_daemon_message(
    member: str,
    signature: str = "",
    body: list[object] | None = None,
    *,
    interface: str = BUS_DAEMON,
    flags: MessageFlag = MessageFlag.NONE,
) -> Message:
    """A call of `member` on the bus daemon (a new message each time: dbus-fast
    numbers a message when it sends it)."""
    return Message(
        destination=BUS_DAEMON,
        path=BUS_DAEMON_PATH,
        interface=interface,
        member=member,
        signature=signature,
        body=body or [],
        flags=flags,
    )
