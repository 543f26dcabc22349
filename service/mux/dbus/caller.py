"""Who is calling: the unique bus name of the connection whose method call is dispatched.

dbus-fast hands a method only its arguments. It runs the bus's message handlers
first, then dispatches the same message on the same stack, synchronously; so a
message handler notes the sender here and a (synchronous) method reads it.
Only synchronous methods may rely on it: an await would let the next message in.
"""

from dbus_fast import Message, MessageType


class _Caller:
    sender: str | None = None


_CALLER = _Caller()


def note_sender(message: Message) -> None:
    """A bus message handler (returns None: the message goes on to its method)."""
    if message.message_type is MessageType.METHOD_CALL:
        _CALLER.sender = message.sender


def current_caller() -> str | None:
    return _CALLER.sender
