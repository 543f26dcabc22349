"""mux's adapter of dbus-fast: the one module that touches dbus-fast's private parts.

Everything private of dbus-fast that mux relies on is listed in
`DBUS_FAST_PRIVATES` below, with what mux expects of it and why mux needs it;
tests/unit/test_dbus_adapter.py checks each against the installed dbus-fast,
and `tolerate_full_socket` checks them again on every connection: a dbus-fast
that changed fails loudly (`DbusFastChanged`, naming the part), never quietly.

What the adapter adds to a connection (`tolerate_full_socket`):

* A full socket is no error. dbus-fast 5.2's writer treats EAGAIN from send()
  as fatal and closes the connection: a burst of messages larger than the
  socket buffer (hundreds of InterfacesRemoved at stop, one large SendInput)
  would cut mux off its bus. Answering 0 bytes written instead makes its writer
  do what it already does for a short write: wait until the socket is writable
  and go on.
* File descriptors (OpenAttach's `h`) survive a full socket. The writer forgets
  a message's fds after its first sendmsg() whatever it returned, and sends the
  rest with plain send(): a sendmsg that would block keeps the fds here and
  attaches them to the next send instead. The fd a method returns must stay
  open until it is sent, then be closed: dbus-fast leaves that to the caller,
  so `close_after_sending` registers it here (and closes it anyway if the reply
  never goes out: a call that asked for no reply, a connection lost). Fds a
  client sends unasked are closed on arrival (`close_received_fds`).
* The outgoing queue is bounded for signals (`OutgoingQueue`): while the bus
  daemon does not read, the queue would otherwise grow without end.

`mux.system.dbus_service_bus` overrides the rest of the parts listed: the
ObjectManager's signals and the reply of a method that returns no fd.
"""

import array
import asyncio
import collections
import contextlib
import functools
import inspect
import logging
import os
import re
import socket
from dataclasses import dataclass
from typing import Any

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.aio import message_bus as aio_message_bus
from dbus_fast.message_bus import BaseMessageBus

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DbusFastPrivate:
    """A private part of dbus-fast that mux relies on."""

    name: str
    expected: str  # what mux expects to find
    why: str


# The table: every private attribute or method of dbus-fast used anywhere in mux.
DBUS_FAST_PRIVATES: tuple[DbusFastPrivate, ...] = (
    DbusFastPrivate(
        "aio.MessageBus._writer",
        "a connected bus's _MessageWriter",
        "the one place where outgoing messages wait and are written: its socket and queue"
        " are replaced (below)",
    ),
    DbusFastPrivate(
        "aio.message_bus._MessageWriter.sock",
        "the connection's socket.socket, used only through send() and sendmsg()",
        "wrapped by `_PatientSocket`: EAGAIN becomes a short write, unsent fds are kept",
    ),
    DbusFastPrivate(
        "aio.message_bus._MessageWriter.messages",
        "a collections.deque of (marshalled bytes, fds, future), used only through"
        " append(), popleft() and its truth value",
        "replaced by `OutgoingQueue`, which counts its bytes and drops signals past a bound",
    ),
    DbusFastPrivate(
        "BaseMessageBus._emit_interface_added",
        "a method (self, path, interface) called by export()",
        "overridden by `ObjectManagerBus`: an exported interface is not announced (the"
        " objects it serves are, from the ObjectManager's path)",
    ),
    DbusFastPrivate(
        "BaseMessageBus._emit_interface_removed",
        "a method (self, path, removed_interfaces) called by unexport()",
        "overridden by `ObjectManagerBus`, as _emit_interface_added",
    ),
    DbusFastPrivate(
        "BaseMessageBus._introspect_export_path",
        "a method (self, path) returning the introspection.Node Introspect answers with",
        "overridden by `ObjectManagerBus`: the objects it serves (mux's panes and windows)"
        " are added to it",
    ),
    DbusFastPrivate(
        "BaseMessageBus._default_get_managed_objects_handler",
        "a method (self, msg, send_reply) answering GetManagedObjects of what is exported,"
        " through send_reply(message) or send_reply.send_error(exception)",
        "overridden by `ObjectManagerBus`: the objects it serves are added to the reply",
    ),
    DbusFastPrivate(
        "BaseMessageBus._make_method_handler",
        "a method (self, interface, method) called by export(), returning each method's"
        " handler (msg, send_reply)",
        "overridden by `ObjectManagerBus`: a method that returns no fd skips the fd scan",
    ),
    DbusFastPrivate(
        "BaseMessageBus._negotiate_unix_fd",
        "a bool attribute, read by the handler of a method that is no coroutine to decide"
        " whether its result is scanned for fds",
        "cleared by `ObjectManagerBus` while such a handler runs: the scan walks every"
        " variant of a reply (5 ms for ListPanes of 500 panes)",
    ),
)


class DbusFastChanged(RuntimeError):
    """The installed dbus-fast lacks a private part mux relies on (DBUS_FAST_PRIVATES)."""


def _takes(function: Any, parameters: list[str]) -> bool:
    try:
        return list(inspect.signature(function).parameters) == parameters
    except (TypeError, ValueError):
        return False


@functools.cache
def _writer_uses_of_its_queue() -> frozenset[str] | None:
    """The methods dbus-fast's writer calls on its queue (None: its source is unreadable).
    The writer is the only user of `self.messages` in its module; reading the module's
    text is quick enough for every muxctl run (inspect.getsource is not)."""
    path = getattr(aio_message_bus, "__file__", None)
    if path is None or not path.endswith(".py"):
        return None
    try:
        with open(path, encoding="utf-8") as module:
            source = module.read()
    except OSError:
        return None
    return frozenset(re.findall(r"self\.messages\.(\w+)", source))


def private_problems(bus: MessageBus) -> list[str]:
    """Each entry of DBUS_FAST_PRIVATES that `bus` (connected) or dbus-fast lacks, in words."""
    problems: list[str] = []
    writer = getattr(bus, "_writer", None)
    if writer is None:
        problems.append("aio.MessageBus._writer: missing (is the bus connected?)")
    else:
        if not isinstance(getattr(writer, "sock", None), socket.socket | _PatientSocket):
            problems.append("aio.message_bus._MessageWriter.sock: missing or not a socket")
        if not isinstance(getattr(writer, "messages", None), collections.deque):
            problems.append("aio.message_bus._MessageWriter.messages: missing or not a deque")
    uses = _writer_uses_of_its_queue()
    if uses is None or not uses <= {"append", "popleft"}:
        problems.append(
            "aio.message_bus._MessageWriter.messages: used through other methods than"
            f" append() and popleft() ({sorted(uses) if uses is not None else 'no source'})"
        )
    hooks = {
        "_emit_interface_added": ["self", "path", "interface"],
        "_emit_interface_removed": ["self", "path", "removed_interfaces"],
        "_make_method_handler": ["self", "interface", "method"],
        "_introspect_export_path": ["self", "path"],
        "_default_get_managed_objects_handler": ["self", "msg", "send_reply"],
    }
    for name, parameters in hooks.items():
        if not _takes(getattr(BaseMessageBus, name, None), parameters):
            problems.append(f"BaseMessageBus.{name}: missing or not a method {tuple(parameters)}")
    if not isinstance(getattr(bus, "_negotiate_unix_fd", None), bool):
        problems.append("BaseMessageBus._negotiate_unix_fd: missing or not a bool")
    return problems


# -- a full socket ----------------------------------------------------------------


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


# -- a bounded queue -----------------------------------------------------------------

# Signals stop joining the outgoing queue past this many bytes. A slow bus
# daemon catches up long before (a socket buffer is a few hundred KiB); one
# that stopped reading would otherwise make muxd grow without end.
SIGNAL_QUEUE_BOUND = 4 << 20

# Byte 1 of every D-Bus message is its type (D-Bus specification, "Message Format").
_SIGNAL_TYPE = MessageType.SIGNAL.value

QueuedMessage = tuple[bytearray, list[int] | None, "asyncio.Future[None] | None"]


class OutgoingQueue(collections.deque[QueuedMessage]):
    """dbus-fast's queue of marshalled messages waiting for the socket, bounded for signals.

    Why only signals: a method reply or error is what a caller waits for (dropping
    it would leave the caller hanging until its timeout, and some replies carry
    an fd or a durable-snapshot promise), and replies come one per call, so the
    callers bound them. Signals are announcements that a client can recover by
    reading the properties again; they are what piles up when the bus daemon
    stops reading (a title change per output chunk). So a signal that would take
    the queue past `bound` bytes is dropped, and one line is logged per episode
    (an episode ends when the queue has drained). An empty queue takes any one
    message: the bound limits the backlog, not the size of a message. The
    message being written (already out of the queue) is not counted.
    """

    def __init__(self, waiting: collections.deque[QueuedMessage], bound: int) -> None:
        super().__init__()
        self.bound = bound
        self.queued_bytes = 0
        self.dropping = False
        self.dropped = 0
        for message in waiting:  # queued before us: kept, whatever they are
            super().append(message)
            self.queued_bytes += len(message[0])

    def append(self, message: QueuedMessage) -> None:
        data, _fds, sent = message
        size = len(data)
        if self and data[1] == _SIGNAL_TYPE and self.queued_bytes + size > self.bound:
            self._drop(sent)
            return
        super().append(message)
        self.queued_bytes += size

    def popleft(self) -> QueuedMessage:
        message = super().popleft()
        self.queued_bytes -= len(message[0])
        if not self:
            self.dropping = False
        return message

    def _drop(self, sent: "asyncio.Future[None] | None") -> None:
        self.dropped += 1
        if not self.dropping:
            self.dropping = True
            log.warning(
                "the bus is not reading: signals are dropped while %d bytes wait to be sent",
                self.queued_bytes,
            )
        if sent is not None and not sent.done():
            sent.set_result(None)  # as if sent: a signal has no one waiting for it


# -- the connection --------------------------------------------------------------

# An fd handed over in a reply that has not gone out after this long never will.
UNSENT_FD_EXPIRY_SECONDS = 60.0


def _writer(bus: MessageBus) -> Any:
    writer = getattr(bus, "_writer", None)
    if writer is None:
        raise DbusFastChanged(
            "dbus-fast's MessageBus has no _writer: not connected, or dbus-fast changed"
            " (see DBUS_FAST_PRIVATES in mux.system.dbus_adapter)"
        )
    return writer


def tolerate_full_socket(
    bus: MessageBus, *, signal_queue_bound: int = SIGNAL_QUEUE_BOUND
) -> MessageBus:
    """Call after connect(); returns the bus. Raises DbusFastChanged if dbus-fast changed."""
    problems = private_problems(bus)
    if problems:
        raise DbusFastChanged("dbus-fast changed: " + "; ".join(problems))
    writer = _writer(bus)
    if not isinstance(writer.sock, _PatientSocket):
        writer.sock = _PatientSocket(writer.sock)
    if not isinstance(writer.messages, OutgoingQueue):
        writer.messages = OutgoingQueue(writer.messages, signal_queue_bound)
    return bus


def outgoing_queue(bus: MessageBus) -> OutgoingQueue:
    """The bounded queue `tolerate_full_socket` gave `bus`."""
    queue = _writer(bus).messages
    if not isinstance(queue, OutgoingQueue):
        raise RuntimeError("this bus connection was not prepared by tolerate_full_socket")
    return queue


def close_after_sending(bus: MessageBus, fd: int) -> None:
    """`fd` goes out in a reply about to be sent; close it once it is sent."""
    writer = getattr(bus, "_writer", None)
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
