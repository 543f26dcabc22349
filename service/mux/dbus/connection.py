"""What a freshly connected bus needs before mux exports anything on it."""

from dbus_fast.aio import MessageBus

from mux.dbus.caller import CallerNotes
from mux.system.dbus_adapter import close_received_fds, tolerate_full_socket


def prepare_connection(bus: MessageBus, callers: CallerNotes) -> MessageBus:
    """Call after connect(); returns the bus.

    The socket and queue adaptations of `tolerate_full_socket` (DbusFastChanged if
    the installed dbus-fast lacks what they need); fds sent unasked are closed;
    each method call's sender is noted in `callers` for `current_caller`.
    """
    tolerate_full_socket(bus)
    bus.add_message_handler(close_received_fds)
    callers.new_bus()
    bus.add_message_handler(callers.note_sender)
    return bus
