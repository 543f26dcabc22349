"""One attach connection of the window view: a pane of the window on screen, its
output for the view's emulators, keys and sizes for it.

The view composes the window itself (each pane in its region), so nothing here
offers the terminal to the service: the pane's output comes in OUTPUT and REPAINT
frames (docs/attach-protocol.md). What may be said when is the
`ClientConversation`'s business, as for a single pane (muxctl.attaching).
"""

import socket
from dataclasses import dataclass
from pathlib import Path

from mux.protocol import attach as proto
from mux.protocol.attach_conversation import SERVICE_UPGRADING, ClientConversation, ClientFrame
from muxctl.attaching import Gone, Outgoing, connect_attach_socket
from muxctl.clipboard import paste_frame

RECV_SIZE = 256 * 1024


@dataclass(frozen=True)
class PaneOutput:
    data: bytes
    repaint: bool  # a whole screen follows: the emulator starts blank


@dataclass(frozen=True)
class PaneAttached:
    pane: int  # (asked for 0, "the last used pane": this one)
    rows: int = 0  # its size now (the repaint that follows is drawn at it)
    cols: int = 0


@dataclass(frozen=True)
class PaneEnded:
    """The conversation is over: `why` for the user ("exited with status 0")."""

    why: str


@dataclass(frozen=True)
class PaneInterrupted:
    """mux re-execs itself (an upgrade): the same pane is there to attach to again, on
    a new connection, a moment later."""


PaneEvent = PaneOutput | PaneAttached | PaneEnded | PaneInterrupted


class PaneLink:
    def __init__(
        self,
        socket_path: Path,
        pane: int,
        size: tuple[int, int],
        *,
        read_only: bool = False,
        glance: bool = False,
    ) -> None:
        """`read_only`: it watches (HELLO says so): muxd takes no input and no size of it.
        `glance`: a thumbnail's (read-only too): no use of the pane, no one looking."""
        self.pane = pane
        self._read_only = read_only
        self._glance = glance
        self._path = socket_path
        self._size = size
        self._sock: socket.socket | None = None
        self._conversation = ClientConversation()
        self.outgoing = Outgoing()
        self.ended = False
        self._upgrading = False  # the service said so: its going away is not an end
        self._takes_paste = False  # WELCOME said so

    def connect(self) -> None:
        """Connect and ask for the pane at its size (pipelined, as muxctl.attaching)."""
        sock = connect_attach_socket(self._path)  # (checked as a lone pane's: the same keys)
        sock.setblocking(False)
        self._sock = sock
        rows, cols = self._size
        hello = proto.Hello(read_only=self._read_only or self._glance, glance=self._glance)
        for frame in (hello, proto.Resize(rows, cols), proto.Attach(self.pane)):
            self.say(frame)

    def fileno(self) -> int:
        assert self._sock is not None
        return self._sock.fileno()

    def say(self, frame: ClientFrame) -> None:
        if not self.ended and self._conversation.allows(frame):
            self.outgoing.add(frame.kind, self._conversation.send(frame))

    def paste(self, text: str) -> None:
        if text:
            self.say(paste_frame(text, self._takes_paste))

    def resize(self, rows: int, cols: int) -> None:
        if (rows, cols) != self._size:
            self._size = (rows, cols)
            self.say(proto.Resize(rows, cols))

    def write(self) -> None:
        if self._sock is not None and not self.ended:
            try:
                self.outgoing.write_to(self._sock)
            except Gone:
                # Nothing more can go; the end itself is read from the socket (receive),
                # which says so to the view: a link ended here would never be read again.
                self.outgoing = Outgoing()

    def receive(self) -> list[PaneEvent]:
        """What the service said since the last call (its socket is readable); nothing
        once closed."""
        if self._sock is None:
            return []
        try:
            data = self._sock.recv(RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return []
        except OSError:
            data = b""
        if not data:
            self.ended = True
            return [PaneInterrupted() if self._upgrading else PaneEnded("mux went away")]
        self._conversation.receive_data(data)
        events: list[PaneEvent] = []
        try:
            while (frame := self._conversation.next_event()) is not None:
                event = self._event(frame)
                if event is not None:
                    events.append(event)
        except proto.ProtocolError as e:
            self.ended = True
            events.append(PaneEnded(f"mux sent something this muxctl does not understand: {e}"))
        return events

    def _event(self, frame: proto.Frame) -> PaneEvent | None:
        if isinstance(frame, proto.Output):
            return PaneOutput(frame.data, repaint=False)
        if isinstance(frame, proto.Welcome):
            self._takes_paste = frame.paste
            return None
        if isinstance(frame, proto.Repaint):
            return PaneOutput(frame.data, repaint=True)
        if isinstance(frame, proto.Attached):
            self.pane = frame.pane
            return PaneAttached(frame.pane, frame.rows, frame.cols)
        if isinstance(frame, proto.Exited):
            self.ended = True
            return PaneEnded(f"exited with status {frame.status}")
        if isinstance(frame, proto.Detached):
            self.ended = True
            return PaneEnded("detached")
        if isinstance(frame, proto.Error) and frame.code == SERVICE_UPGRADING:
            self._upgrading = True  # (the connection closes next)
            return None
        if isinstance(frame, proto.Error) and frame.code not in ("InvalidArgument", "Unavailable"):
            self.ended = True
            return PaneEnded(frame.message)
        return None  # WELCOME, ATTACHED, a refused key or size

    def detach(self) -> None:
        self.outgoing.drop_unsent()
        self.say(proto.Detach())
        self.write()

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self.ended = True
