"""One client of the attach protocol: the asyncio side of `mux.protocol.attach_conversation`.

A session is an asyncio Protocol on a connection accepted from mux.sock or on
the service's end of an `OpenAttach` socket pair. What may be said when is the
conversation's business (a `ServiceConversation`); the session does what the
client asks of its pane and keeps the two directions bounded
(docs/attach-protocol.md#backpressure).

Output reaches it straight from the pane's read path (before any screen
emulation) and goes into the transport's buffer; the buffer is bounded: once
it passes its high-water mark asyncio calls `pause_writing`, the session stops
queueing output, and when the client has read enough (`resume_writing`) it
sends one fresh repaint of the current screen instead of what it skipped. A
stopped client therefore costs at most one buffer, and never slows the pane
or other clients.

A client that handed over its terminal in HELLO
(docs/attach-protocol.md#the-terminal-handed-over) gets its output and
repaints written to that terminal instead, by a `TerminalWriter` bounded the
same way but sooner (`mux.attach.pacing`); the frames that end the conversation
follow only once the terminal has what came before them, so the client may then
write to it.

Input goes the other way with real backpressure: while the pane has more
than INPUT_PAUSE_BYTES of a client's input still unread, the session stops
reading that client, so nothing typed or pasted is dropped.

A connection from mux.sock must say HELLO in time, and only so many may be
waiting to: the hub keeps that account (mux.attach.awaiting_hello).

The session reaches its hub only through `SessionHost`: the hub depends on
the session, never the other way round.
"""

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol

from mux.attach.attachable import P
from mux.attach.pacing import Pacing, lag_bytes
from mux.attach.status_line import StatusLine
from mux.protocol import attach as proto
from mux.protocol.attach_conversation import (
    PANE_CLOSED,
    PROTOCOL_ERROR,
    VERSION_UNSUPPORTED,
    ClientFrame,
    ServiceConversation,
    ServiceFrame,
)
from mux.protocol.errors import MuxError, PreconditionFailed, short_name
from mux.protocol.paste import pasted
from mux.protocol.spawn_options import MAX_COLS, MAX_ROWS, check_size
from mux.system.terminal_writer import TerminalWriter

log = logging.getLogger(__name__)

INPUT_PAUSE_BYTES = 1 << 20
_SERIALS = itertools.count(1)
# How long the last output of an exited pane may take to reach a handed-over
# terminal before EXITED is sent all the same (the client then restores it).
FINAL_OUTPUT_SECONDS = 1.0


@dataclass
class ClientFacts:
    """What a client said of itself, and when it was last active: ListClients lists
    it, and the size rule (the client active last) reads it."""

    pid: int | None  # None: a socket OpenAttach made
    serial: int  # the order clients are listed in
    read_only: bool = False  # said in HELLO: it watches; no input, no resize
    glance: bool = False  # said in HELLO: a thumbnail (read-only): no use, no one looking
    size: tuple[int, int] | None = None  # its terminal's (its last RESIZE); None: not said
    status_rows: int = 0  # rows of its terminal kept from the pane (a status line)
    last_active: float = field(default_factory=time.monotonic)  # attach, resize or input


class SessionHost(Protocol[P]):
    """What a session needs of its hub: panes by id, and the book of who reads which."""

    def find(self, pane_id: int, client_pid: int | None) -> P:
        """Pane `pane_id` (0: the one used last) for this client; MuxError if refused."""
        ...

    def is_open(self, pane: P) -> bool: ...
    def subscribe(self, session: "AttachSession[P]", pane: P) -> None: ...
    def unsubscribe(self, session: "AttachSession[P]", pane: P) -> None: ...
    def mark_used(self, pane: P) -> None: ...
    def active(self, session: "AttachSession[P]", pane: P) -> MuxError | None:
        """The client attached, resized or typed: the pane takes its size (the client
        active last, docs/attach-protocol.md); the refusal when the pane refuses it."""
        ...

    def terminal_of(self, peer_pid: int, fd: int) -> TerminalWriter | None:
        """A writer to the terminal the client `peer_pid` holds as `fd`; None (said in
        the log) when it cannot be had: the output is then relayed in frames."""
        ...

    def greeted(self, session: "AttachSession[P]") -> None:
        """The client has said HELLO: no longer one of those waiting to."""
        ...

    def forget(self, session: "AttachSession[P]") -> None:
        """The session's connection is gone."""
        ...


class AttachSession(asyncio.Protocol, Generic[P]):
    def __init__(
        self,
        host: SessionHost[P],
        peer_pid: int | None,
        buffer_limit: int,
        attach_to: P | None = None,
        user: str | None = None,
    ) -> None:
        """`attach_to`: a pane to attach to once connected (OpenAttach: no HELLO, no ATTACH)."""
        self.peer_pid = peer_pid
        self.client = ClientFacts(peer_pid, next(_SERIALS))
        self.user = user  # the bus connection that opened it (OpenAttach), else None
        self.peer = f"pid {peer_pid}" if peer_pid is not None else "(OpenAttach)"
        self.pane: P | None = None
        self._host = host
        self._buffer_limit = buffer_limit
        self._conversation = ServiceConversation(opened_attached=attach_to is not None)
        self._transport: asyncio.Transport | None = None
        self._attach_on_connect = attach_to
        self._pacing = Pacing(self._show_screen, self._lag_bytes, self._when_drained)
        self._terminal: TerminalWriter | None = None  # the client's, handed over in HELLO
        self._status = StatusLine(self._write_output, self._live_pane)

    # -- asyncio.Protocol -------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        if self._conversation.is_over:  # ended (the service stopping) before it was connected
            transport.close()
            return
        transport.set_write_buffer_limits(high=self._buffer_limit, low=self._buffer_limit // 4)
        pane, self._attach_on_connect = self._attach_on_connect, None
        if pane is not None:
            self._attach(pane)

    def data_received(self, data: bytes) -> None:
        self._conversation.receive_data(data)
        try:
            while (frame := self._conversation.next_event()) is not None:
                self._handle(frame)
        except proto.ProtocolError as e:
            self.fail(PROTOCOL_ERROR, str(e))

    def eof_received(self) -> bool:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.close()
        self._host.forget(self)

    def pause_writing(self) -> None:
        if self._pacing.fell_behind() and self.pane is not None:
            log.info("attach client %s fell behind on pane %d", self.peer, self.pane.id)

    def resume_writing(self) -> None:
        self._pacing.caught_up()

    # -- frames from the client ---------------------------------------------------

    def _handle(self, frame: ClientFrame) -> None:
        if isinstance(frame, proto.Input | proto.Paste):
            self._input(frame)
        elif isinstance(frame, proto.Attach):
            self._attach_by_id(frame.pane)
        elif isinstance(frame, proto.Resize):
            self._resize(frame.rows, frame.cols)
        elif isinstance(frame, proto.Status):
            self._status.set_text(frame.data.decode(errors="replace"))
        elif isinstance(frame, proto.Detach):
            self._unsubscribe()
            self._send(proto.Detached())
            self.close()
        else:
            self._hello(frame)

    def _hello(self, hello: proto.Hello) -> None:
        self._host.greeted(self)
        if hello.version != proto.PROTOCOL_VERSION:
            self.fail(
                VERSION_UNSUPPORTED,
                f"this mux speaks attach protocol version {proto.PROTOCOL_VERSION}, "
                f"not {hello.version}",
            )
            return
        if self._terminal is not None:  # a repeated HELLO says anew what the client offers
            self._terminal.close()
        self.client.read_only = hello.read_only or hello.glance
        self.client.glance = hello.glance
        self._status.asked(hello.status)
        self.client.status_rows = 0
        fd, pid = hello.terminal_fd, self.peer_pid
        self._terminal = None if fd is None or pid is None else self._host.terminal_of(pid, fd)
        welcome = proto.Welcome(
            terminal=self._terminal is not None, paste=True, status=hello.status
        )
        self._send(welcome)

    def _attach_by_id(self, pane_id: int) -> None:
        try:
            pane = self._host.find(pane_id, self.peer_pid)
        except MuxError as e:
            self._refuse(e)
            return
        self._unsubscribe()
        self._attach(pane)

    def _attach(self, pane: P) -> None:
        """Repaint, then the live stream: no await in between, so no output falls
        between the screen the client is shown and the first OUTPUT frame."""
        if not self._host.is_open(pane):  # closed since OpenAttach was answered
            self.fail(PANE_CLOSED, f"pane {pane.id} was closed")
            return
        self._host.active(self, pane)  # (a size refused is logged)
        self._send(proto.Attached(pane.id, pane.rows, pane.cols))
        if not pane.is_live:
            self._send_repaint(pane)
            self._send(proto.Exited(pane.exit_status))
            self.close()
            return
        # A client already behind (on another pane) gets its repaint once it
        # has read what is queued, like any client that fell behind.
        self._pacing.behind = self._pacing.paused
        if not self._pacing.behind:
            self._send_repaint(pane)
        self.pane = pane
        self._host.subscribe(self, pane)

    def _input(self, frame: proto.Input | proto.Paste) -> None:
        pane = self.pane
        if pane is None:  # exited, its EXITED on the way (the conversation is ATTACHED still)
            return
        if self.client.read_only:
            self._refuse(PreconditionFailed("this client is read-only: its keys are not sent"))
            return
        self._host.active(self, pane)
        try:
            pasting = isinstance(frame, proto.Paste)
            pane.send_input(pasted(frame.data, pane.pastes_bracketed) if pasting else frame.data)
        except MuxError as e:
            if pane.is_live:  # after an exit, EXITED says it all
                self._refuse(e)
            return
        self._host.mark_used(pane)
        if pane.input_backlog_bytes > INPUT_PAUSE_BYTES and self._transport is not None:
            self._transport.pause_reading()
            pane.when_input_drained(self._resume_reading)

    def _resume_reading(self) -> None:
        if not self._conversation.is_over and self._transport is not None:
            self._transport.resume_reading()

    def _resize(self, rows: int, cols: int) -> None:
        try:
            check_size("rows", rows, MAX_ROWS)
            check_size("cols", cols, MAX_COLS)
        except MuxError as e:
            self._refuse(e)
            return
        self.client.status_rows = self._status.resize(rows)
        self.client.size = (rows, cols)  # also what the next ATTACH applies
        if self.pane is None:
            return
        # (its clients get a repaint: AttachHub.pane_changed; a watcher's size is listed)
        if (refused := self._host.active(self, self.pane)) is not None:
            self._refuse(refused)

    # -- to the client --------------------------------------------------------------

    def output(self, data: bytes) -> None:
        """The pane printed `data` (an output sink: the hot path)."""
        if self._pacing.behind:
            self._pacing.skip(len(data))
            return
        if not (data := self._status.stream(data)):
            return  # (all of it the start of a sequence, kept until the rest comes)
        self._write_output(data)
        if (terminal := self._terminal) is not None and terminal.backlog > self._lag_bytes():
            self.pause_writing()
            terminal.when_drained(self.resume_writing)

    def _lag_bytes(self) -> int:
        pane = self.pane
        return lag_bytes(pane.rows * pane.cols if pane is not None else 0, self._buffer_limit)

    def _show_screen(self) -> None:
        if self.pane is not None and not self._conversation.is_over:
            self._send_repaint(self.pane)

    def _when_drained(self, callback: Callable[[], None]) -> None:
        if self._terminal is not None:
            self._terminal.when_drained(callback)
        else:
            callback()

    def _send(self, frame: ServiceFrame) -> None:
        self._write(self._conversation.send(frame))

    def _write(self, data: bytes) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    def _send_repaint(self, pane: P) -> None:
        repaint = self._status.repainted(pane.repaint(), pane)
        if self._terminal is not None:
            self._terminal.discard()  # a repaint redraws all: what waits is out of date
            self._terminal.write(repaint)
        else:
            self._write(self._conversation.send_repaint(repaint))

    def _live_pane(self) -> P | None:
        """The pane whose output the client is sent live now."""
        live = not self._pacing.behind and not self._conversation.is_over
        return self.pane if live else None

    def _write_output(self, data: bytes) -> None:
        """`data` to the client's terminal after what it was sent (not skipped)."""
        if self._terminal is not None:
            self._terminal.write(data)
        elif self._transport is not None and not self._transport.is_closing():
            self._transport.write(self._conversation.send_output(data))

    def repaint(self) -> None:
        if self.pane is not None and not self._pacing.behind and not self._conversation.is_over:
            self._send_repaint(self.pane)

    def pane_exited(self, pane: P) -> None:
        if self._pacing.behind:
            self._send_repaint(pane)  # the final screen, not what was skipped
        self._unsubscribe()
        self._after_terminal(proto.Exited(pane.exit_status))

    def _after_terminal(self, last: ServiceFrame) -> None:
        """Send `last` and close, once a handed-over terminal has what came before it."""

        def send_last() -> None:
            if not self._conversation.is_over:  # (the client may have left meanwhile)
                self._send(last)
            self.close()

        if self._terminal is None or self._transport is None:
            send_last()
        else:
            self._transport.pause_reading()  # the pane is gone: nothing said now matters
            self._terminal.when_drained(send_last, at_most=FINAL_OUTPUT_SECONDS)

    def pane_closed(self, pane: P) -> None:
        self._unsubscribe()
        self.fail(PANE_CLOSED, f"pane {pane.id} was closed")

    def _refuse(self, error: MuxError) -> None:
        """A request refused; the connection goes on (a code clients do not know as a
        refusal would end it for them, so it ends here too)."""
        self._send(proto.Error(short_name(error.dbus_name), error.message))
        if self._conversation.is_over:
            self.close()

    def fail(self, code: str, message: str) -> None:
        """An error the connection ends with."""
        log.info("attach client %s: %s: %s", self.peer, code, message)
        if not self._conversation.is_over:  # else it has ended already (or is gone)
            self._send(proto.Error(code, message))
        self.close()

    def close(self) -> None:
        """Close once what is queued has been written (what waits for a handed-over
        terminal is dropped: the client takes its terminal back now)."""
        self._conversation.close()
        self._pacing.stop()
        if self._transport is not None:
            self._transport.close()
        if self._terminal is not None:
            self._terminal.close()
        self._unsubscribe()  # last: a pane that fails here leaves the client closed all the same

    def _unsubscribe(self) -> None:
        pane, self.pane = self.pane, None
        if pane is not None:
            self._host.unsubscribe(self, pane)
