"""Who is calling: the unique bus name of the connection whose method call is dispatched.

dbus-fast hands a method only its arguments. It runs the bus's message handlers
first, then dispatches the same message on the same stack; so a message
handler (`note_sender`) notes the sender, and the method reads it
(`current_caller`). The note is a context variable: a synchronous method reads
it on that stack, and an async method runs in a task that copied the context
when it was created, so it keeps seeing its own caller however many other
calls are dispatched while it awaits.
"""

from contextvars import ContextVar

from dbus_fast import Message, MessageType

_CALLER: ContextVar[str | None] = ContextVar("mux_dbus_caller", default=None)


def note_sender(message: Message) -> None:
    """A bus message handler (returns None: the message goes on to its method)."""
    if message.message_type is MessageType.METHOD_CALL:
        _CALLER.set(message.sender)


def current_caller() -> str | None:
    return _CALLER.get()
