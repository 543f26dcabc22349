"""Who is calling: the connection whose method call is dispatched, and whom it speaks for.

dbus-fast hands a method only its arguments. It runs the bus's message handlers
first, then dispatches the same message on the same stack; so a message
handler (`CallerNotes.note_sender`) notes the sender, and the method reads it
(`current_caller`). The note is a context variable: a synchronous method reads
it on that stack, and an async method runs in a task that copied the context
when it was created, so it keeps seeing its own caller however many other
calls are dispatched while it awaits.

A connection that registered as a hub's link (RegisterLink) is noted as the
hub's `link:<hex>`: every connection of that hub, the redials of a link among
them, is then one caller for spawns and uses (docs/federation.md#links).
"""

from collections import OrderedDict
from contextvars import ContextVar

from dbus_fast import Message, MessageType

from mux.protocol.hosts import check_hub_id, link_identity

# (the sender's unique name, whom it speaks for)
_CALLER: ContextVar[tuple[str, str] | None] = ContextVar("mux_dbus_caller", default=None)
# Connections are registered once per link dial; the oldest are forgotten first.
MAX_LINKS = 1024


class CallerNotes:
    def __init__(self) -> None:
        self._links: OrderedDict[str, str] = OrderedDict()

    def note_sender(self, message: Message) -> None:
        """A bus message handler (returns None: the message goes on to its method)."""
        if message.message_type is MessageType.METHOD_CALL and message.sender:
            sender = message.sender
            _CALLER.set((sender, self._links.get(sender, sender)))

    def register_link(self, connection: str, hub_id: bytes) -> None:
        """From now on `connection` speaks for the hub `hub_id` (InvalidArgument if
        that is no hub id)."""
        self._links[connection] = link_identity(check_hub_id(hub_id))
        self._links.move_to_end(connection)
        while len(self._links) > MAX_LINKS:
            self._links.popitem(last=False)

    def new_bus(self) -> None:
        """Connected to a bus (again): unique names are that bus's, and a new bus
        daemon hands out the old ones again."""
        self._links.clear()


def current_caller() -> str | None:
    """Whom the call being dispatched comes from: a hub's link identity, or the
    connection's unique name; None outside a method call."""
    noted = _CALLER.get()
    return noted[1] if noted is not None else None


def current_sender() -> str | None:
    """The unique name of the connection whose call is being dispatched."""
    noted = _CALLER.get()
    return noted[0] if noted is not None else None
