"""A bus connection that waits when the socket is full, and passes fds safely.

dbus-fast 5.2's writer treats EAGAIN from send() as a fatal error and closes
the connection: a burst of messages larger than the socket buffer (hundreds of
InterfacesRemoved at stop, one large SendInput) would cut mux off its bus.
Answering 0 bytes written instead makes its writer do what it already does for
a short write: wait until the socket is writable and go on.

File descriptors (OpenAttach's `h`) need two more things. The writer forgets
a message's fds after its first sendmsg() whatever it returned, so a sendmsg
that would block waits here (briefly) instead of answering 0. And the fd a
method returns must stay open until it is sent, then be closed: dbus-fast
leaves that to the caller, so `close_after_sending` registers it here.
Fds a client sends us unasked are closed on arrival (`close_received_fds`).
"""

import array
import contextlib
import os
import select
import socket
from typing import Any

from dbus_fast import Message
from dbus_fast.aio import MessageBus

# How long a message carrying fds may wait for room in a full bus socket.
FD_SEND_TIMEOUT_SECONDS = 5.0


class _PatientSocket:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.close_after_send: set[int] = set()

    def send(self, data: Any, *args: Any) -> int:
        try:
            return self._sock.send(data, *args)
        except BlockingIOError:
            return 0

    def sendmsg(self, buffers: Any, ancdata: Any = (), *args: Any) -> int:
        if not ancdata:
            try:
                return self._sock.sendmsg(buffers, ancdata, *args)
            except BlockingIOError:
                return 0
        try:
            try:
                return self._sock.sendmsg(buffers, ancdata, *args)
            except BlockingIOError:
                select.select([], [self._sock], [], FD_SEND_TIMEOUT_SECONDS)
                return self._sock.sendmsg(buffers, ancdata, *args)
        finally:
            self._close_sent(ancdata)

    def _close_sent(self, ancdata: Any) -> None:
        for _level, _kind, data in ancdata:
            for fd in array.array("i", bytes(data)):
                if fd in self.close_after_send:
                    self.close_after_send.discard(fd)
                    with contextlib.suppress(OSError):
                        os.close(fd)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def tolerate_full_socket(bus: MessageBus) -> MessageBus:
    """Call after connect(); returns the bus."""
    writer: Any = bus._writer  # see the module docstring
    if writer is not None and writer.sock is not None:
        writer.sock = _PatientSocket(writer.sock)
    return bus


def close_after_sending(bus: MessageBus, fd: int) -> None:
    """`fd` goes out in a reply about to be sent; close it once it is sent."""
    writer: Any = bus._writer
    sock = writer.sock if writer is not None else None
    if not isinstance(sock, _PatientSocket):
        os.close(fd)
        raise RuntimeError("this bus connection cannot pass file descriptors")
    sock.close_after_send.add(fd)


def close_received_fds(message: Message) -> None:
    """A message handler: no method of mux takes an fd, so any that arrive are closed."""
    for fd in message.unix_fds:
        with contextlib.suppress(OSError):
            os.close(fd)
