"""A bus connection that waits when the socket is full, instead of dropping.

dbus-fast 5.2's writer treats EAGAIN from send() as a fatal error and closes
the connection: a burst of messages larger than the socket buffer (hundreds of
InterfacesRemoved at stop, one large SendInput) would cut mux off its bus.
Answering 0 bytes written instead makes its writer do what it already does for
a short write: wait until the socket is writable and go on.
"""

import socket
from typing import Any

from dbus_fast.aio import MessageBus


class _PatientSocket:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def send(self, data: Any, *args: Any) -> int:
        try:
            return self._sock.send(data, *args)
        except BlockingIOError:
            return 0

    def sendmsg(self, buffers: Any, *args: Any) -> int:
        try:
            return self._sock.sendmsg(buffers, *args)
        except BlockingIOError:
            return 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def tolerate_full_socket(bus: MessageBus) -> MessageBus:
    """Call after connect(); returns the bus."""
    writer: Any = bus._writer  # see the module docstring
    if writer is not None and writer.sock is not None:
        writer.sock = _PatientSocket(writer.sock)
    return bus
