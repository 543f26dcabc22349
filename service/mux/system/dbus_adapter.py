"""A bus connection that waits when the socket is full, and passes fds safely.

dbus-fast 5.2's writer treats EAGAIN from send() as a fatal error and closes
the connection: a burst of messages larger than the socket buffer (hundreds of
InterfacesRemoved at stop, one large SendInput) would cut mux off its bus.
Answering 0 bytes written instead makes its writer do what it already does for
a short write: wait until the socket is writable and go on.

File descriptors (OpenAttach's `h`) need more. The writer forgets a
message's fds after its first sendmsg() whatever it returned, and sends the
rest with plain send(): a sendmsg that would block keeps the fds here and
attaches them to the next send instead. The fd a method returns must stay
open until it is sent, then be closed: dbus-fast leaves that to the caller,
so `close_after_sending` registers it here (and closes it anyway if the reply
never goes out: a call that asked for no reply, a connection lost). Fds a
client sends us unasked are closed on arrival (`close_received_fds`).
"""

import array
import asyncio
import contextlib
import os
import socket
from typing import Any

from dbus_fast import Message
from dbus_fast.aio import MessageBus

# An fd handed over in a reply that has not gone out after this long never will.
UNSENT_FD_EXPIRY_SECONDS = 60.0


class _PatientSocket:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.close_after_send: set[int] = set()
        self._unsent_ancdata: Any = None

    def send(self, data: Any, *args: Any) -> int:
        if self._unsent_ancdata is not None:
            return self.sendmsg([data], self._unsent_ancdata)
        try:
            return self._sock.send(data, *args)
        except BlockingIOError:
            return 0

    def sendmsg(self, buffers: Any, ancdata: Any = (), *args: Any) -> int:
        try:
            sent = self._sock.sendmsg(buffers, ancdata, *args)
        except BlockingIOError:
            if ancdata:
                self._unsent_ancdata = ancdata  # the writer will call send() next
            return 0
        if ancdata:
            self._unsent_ancdata = None
            self._close_sent(ancdata)
        return sent

    def _close_sent(self, ancdata: Any) -> None:
        for _level, _kind, data in ancdata:
            for fd in array.array("i", bytes(data)):
                self.forget(fd)

    def forget(self, fd: int) -> None:
        """Close `fd` if it was handed over for sending (and not closed yet)."""
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
    asyncio.get_running_loop().call_later(UNSENT_FD_EXPIRY_SECONDS, sock.forget, fd)


def close_received_fds(message: Message) -> None:
    """A message handler: no method of mux takes an fd, so any that arrive are closed."""
    for fd in message.unix_fds:
        with contextlib.suppress(OSError):
            os.close(fd)
