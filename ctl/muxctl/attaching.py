"""The interactive client of the attach protocol behind `muxctl attach` and `muxctl new`.

One thread, one select loop over the terminal, the attach socket and a
signal wake-up pipe, every fd non-blocking: keys go to the pane as INPUT (up
to the detach key), OUTPUT and REPAINT go to the terminal, SIGWINCH becomes
RESIZE. Both directions are bounded: while the terminal has not taken
TERMINAL_BACKLOG_BYTES the socket is not read (the service then resyncs us
with a repaint), and while the service has not taken SERVICE_BACKLOG_BYTES of
input the keyboard is not read. Nothing can block the loop, so the detach key
and signals always work. When the service re-execs itself (an upgrade) it
says so, and the client reconnects to the same pane: pane ids survive an
upgrade. What may be said when is a `ClientConversation`'s business
(docs/attach-protocol.md#conversation).

A client on a terminal offers it to the service in HELLO: where the service
can open it (Linux), muxd writes the pane's output to the terminal itself, as
tmux's server does, and this loop carries only keys, sizes and the
conversation; elsewhere OUTPUT frames are relayed as before
(docs/attach-protocol.md#the-terminal-handed-over).
"""

import collections
import contextlib
import os
import select
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from mux.protocol import attach as proto
from mux.protocol.attach_conversation import (
    SERVICE_UPGRADING,
    ClientConversation,
    ClientFrame,
    ServiceFrame,
    State,
)
from mux.protocol.paste import BRACKET_CLOSE, BRACKET_OPEN
from mux.protocol.spawn_options import MAX_COLS, MAX_ROWS
from mux.system.socket_trust import UntrustedSocket, connect_trusted
from mux.window_keys import key_of
from muxctl.clipboard import PasteBuffer, paste_frame
from muxctl.errors import EXIT_FAILURE, EXIT_PRECONDITION, EXIT_USAGE, CtlError, SocketRefused
from muxctl.lone_status import LoneStatus, StatusSource
from muxctl.prefix_keys import WINDOW_SWITCHES, Command, DetachNow, Pasted, PrefixKeys, Typed
from muxctl.rawterm import RawTerminal, read_keys, window_size
from muxctl.signal_wakeup import pending_signals, signal_wakeups
from muxctl.terminal_out import TerminalOut

RECV_SIZE = 256 * 1024
TERMINAL_BACKLOG_BYTES = 1 << 20
SERVICE_BACKLOG_BYTES = 1 << 20
DETACH_TIMEOUT_SECONDS = 2.0
FLUSH_TIMEOUT_SECONDS = 2.0  # for the last output, once the attach has ended
RECONNECT_TIMEOUT_SECONDS = 15.0
DEFAULT_DETACH_KEY = "^\\"
DEFAULT_PREFIX_KEY = "^b"  # as tmux's

# ERROR codes (docs/attach-protocol.md#errors) as exit statuses (docs/muxctl.md#exit-statuses).
# Only a refusal while attached leaves an attach going; any other code (an
# unknown one included) ends it.
_EXIT_STATUS_OF_CODE = {"InvalidArgument": EXIT_USAGE, "PreconditionFailed": EXIT_PRECONDITION}
# Keys and sizes not yet sent are forgotten at a detach; the rest moved the conversation on.
_FORGETTABLE = frozenset({proto.FrameType.INPUT, proto.FrameType.RESIZE})
# Window commands typed in a pane shown alone: done once detached, by the caller.
LONE_PANE_COMMANDS = frozenset(
    {"split-horizontal", "split-vertical", "close", "close-window", "new-window"}
    | {"rename-window", "command-prompt"}
    | WINDOW_SWITCHES
)
# Copy mode, the chooser and the list of the keys, also done once detached; they send
# nothing, so a read-only client may use them.
COPY_COMMANDS = frozenset({"copy-mode", "copy-mode-page-up"})
DETACHED_MODES = COPY_COMMANDS | {"choose-tree", "list-keys"}


def parse_detach_key(text: str, what: str = "the detach key") -> bytes | None:
    """`^\\`, `^]`, `C-a`, `ctrl-b` or one character; `none` turns the key off."""
    try:
        return key_of(text)
    except ValueError:
        raise CtlError(
            f"cannot use {text!r} as {what}; give ^X (a control key), one character, or none",
            EXIT_USAGE,
        ) from None


@dataclass
class Outcome:
    """How an attach ended: what to tell the user, and muxctl's exit status."""

    message: str
    exit_status: int = 0
    to_stderr: bool = False
    # A window command typed behind the prefix key, for the caller once detached
    # (muxctl.prefix_keys: "split-horizontal", "split-vertical", "close").
    window_command: str | None = None


class Gone(Exception):
    """The connection ended without a word from the service."""


class Outgoing:
    """Frames for the service, written as the socket takes them."""

    def __init__(self) -> None:
        self._frames: collections.deque[tuple[proto.FrameType, bytes]] = collections.deque()
        self._offset = 0  # of the first frame, partly written
        self.size = 0

    def add(self, kind: proto.FrameType, data: bytes) -> None:
        self._frames.append((kind, data))
        self.size += len(data)

    def drop_unsent(self) -> None:
        """Forget the keys and sizes not yet begun (the framing stays whole)."""
        begun = 1 if self._offset else 0
        frames = list(self._frames)
        kept = frames[:begun] + [f for f in frames[begun:] if f[0] not in _FORGETTABLE]
        self._frames = collections.deque(kept)
        self.size = sum(len(data) for _, data in kept) - self._offset

    def write_to(self, sock: socket.socket) -> None:
        while self._frames:
            _, first = self._frames[0]
            try:
                sent = sock.send(memoryview(first)[self._offset :])
            except BlockingIOError:
                return
            except OSError:
                raise Gone from None
            self._offset += sent
            self.size -= sent
            if self._offset < len(first):
                return
            self._frames.popleft()
            self._offset = 0


class AttachClient:
    def __init__(
        self,
        socket_path: Path,
        pane_id: int,
        keys: PrefixKeys,
        input_fd: int = 0,
        output_fd: int = 1,
        *,
        read_only: bool = False,
        buffer: PasteBuffer | None = None,
        status: StatusSource | None = None,
    ) -> None:
        """`read_only`: watch only (docs/attach-protocol.md#several-clients-and-read-only-ones):
        keys other than the detach key and the prefix's `d` are not sent. `buffer`:
        what the prefix's `]` pastes (copy mode's). `status`: the text of a status line
        on the terminal's last row (None: none)."""
        self._status = LoneStatus(status) if status is not None else None
        self._read_only = read_only
        self._buffer = buffer or PasteBuffer()
        self._takes_paste = False  # WELCOME said so
        self._path = socket_path
        self._pane = pane_id  # 0 until ATTACHED names it: the most recently used pane
        self._keys = keys
        self._window_command: str | None = None
        self._in = input_fd
        self._out = output_fd
        self._sock: socket.socket | None = None
        self._conversation = ClientConversation()
        self._to_service = Outgoing()
        self._terminal = TerminalOut(output_fd)
        self._keys_open = True
        self._detaching_since: float | None = None
        self._reconnect_until: float | None = None
        self._opened = False  # on a connection OpenAttach made: nothing to reconnect to
        self._notes: list[str] = []  # refusals, shown after the terminal is back

    @property
    def pane(self) -> int:
        """The pane shown (0 until the service has named the one used last)."""
        return self._pane

    # -- connection ---------------------------------------------------------------

    def connect(self, opened: socket.socket | None = None) -> None:
        """Connect and ask for the pane; CtlError when nothing listens. `opened`: a
        connection OpenAttach made, already attached (a host's pane, through the hub):
        used as it is, and never reconnected (an upgrade there ends the attach)."""
        if opened is not None:
            self._opened = True
            opened.setblocking(False)
            self._sock = opened
            self._conversation = ClientConversation(opened_attached=True)
            self._to_service = Outgoing()
            if self._status is not None:  # (HELLO again, to ask for the status line)
                self._say(self._hello(terminal_fd=None))
            self._say(self._resize_frame())
            return
        sock = connect_attach_socket(self._path)
        sock.setblocking(False)
        self._sock = sock
        self._conversation = ClientConversation()
        self._to_service = Outgoing()
        hello = self._hello(terminal_fd=self._out if os.isatty(self._out) else None)
        # Pipelined: the size first, so the first repaint is already at this size.
        for frame in (hello, self._resize_frame(), proto.Attach(self._pane)):
            self._to_service.add(frame.kind, self._conversation.send(frame))

    def _hello(self, terminal_fd: int | None) -> proto.Hello:
        """HELLO: the terminal offered, read-only or not, a status line asked for."""
        if self._status is not None:
            self._status.on = False  # (until WELCOME says the service keeps it)
            self._status.again()
        status = self._status is not None and window_size(self._out)[0] > 1
        return proto.Hello(terminal_fd=terminal_fd, read_only=self._read_only, status=status)

    def _say(self, frame: ClientFrame) -> None:
        """Queue `frame`, unless the conversation has gone past it (the service ended it,
        or we said DETACH): keys and sizes then have nowhere to go."""
        if self._conversation.allows(frame):
            self._to_service.add(frame.kind, self._conversation.send(frame))

    def _resize_frame(self) -> proto.Resize:
        rows, cols = window_size(self._out)
        return proto.Resize(min(rows, MAX_ROWS), min(cols, MAX_COLS))

    # -- the loop -------------------------------------------------------------------

    def run(self) -> Outcome:
        """Attached until detach, exit or loss; the terminal is raw only inside."""
        try:
            with signal_wakeups() as wake_fd, RawTerminal(self._in, self._out):
                # Typed after the command that ended the last attach (or its question):
                # keys for this one, sent after its ATTACH.
                if ahead := self._keys.take_ahead():
                    self._typed(ahead)
                outcome = self._serve(wake_fd)
                if self._status is not None and self._status.on:
                    self._terminal.add(LoneStatus.given_back(window_size(self._out)[0]))
                self._terminal.flush(FLUSH_TIMEOUT_SECONDS)
        finally:
            if self._sock is not None:
                self._sock.close()
        if self._notes:
            outcome.message = "\n".join([*self._notes, outcome.message])
        return outcome

    def _serve(self, wake_fd: int) -> Outcome:
        while True:
            try:
                return self._serve_connection(wake_fd)
            except Gone:
                if self._detaching_since is not None:
                    return self._detached()
                until = self._reconnect_until
                if until is None:
                    return Outcome(
                        "mux went away (it stopped or crashed); the pane may be back once it is "
                        "restarted",
                        EXIT_FAILURE,
                        to_stderr=True,
                    )
            self._reconnect(until)

    def _reconnect(self, until: float) -> None:
        """Back to the same pane after an upgrade (the new muxd accepts on the same socket)."""
        assert self._sock is not None
        self._sock.close()
        self._sock = None
        if self._status is not None and self._status.on:
            rows, cols = window_size(self._out)
            self._terminal.add(self._status.saying("reattaching after an upgrade", rows, cols))
            self._terminal.flush(FLUSH_TIMEOUT_SECONDS)
        while True:
            try:
                self.connect()
                return
            except SocketRefused:
                raise  # not mux coming back: a socket that is not the user's
            except CtlError:
                if time.monotonic() > until:
                    raise CtlError("mux did not come back after its upgrade") from None
                time.sleep(0.05)

    def _serve_connection(self, wake_fd: int) -> Outcome:
        sock = self._sock
        assert sock is not None
        sock_fd = sock.fileno()
        while True:
            readable = [wake_fd]
            writable = []
            if len(self._terminal.pending) < TERMINAL_BACKLOG_BYTES:
                readable.append(sock_fd)
            if self._terminal.pending:
                writable.append(self._out)
            if self._to_service.size:
                writable.append(sock_fd)
            reading_keys = (
                self._keys_open
                and self._detaching_since is None
                and self._to_service.size < SERVICE_BACKLOG_BYTES
            )
            if reading_keys:
                readable.append(self._in)
            timeout = None if self._status is None else self._status.due_in()
            if self._detaching_since is not None:
                timeout = self._detaching_since + DETACH_TIMEOUT_SECONDS - time.monotonic()
                if timeout <= 0:
                    return self._detached()
            ready_to_read, ready_to_write, _ = select.select(readable, writable, [], timeout)
            if self._status is not None and self._status.due_in() == 0:
                self._look_at_status(self._status)
            if self._out in ready_to_write:
                self._terminal.write()
            if sock_fd in ready_to_write:
                self._to_service.write_to(sock)
            for fd in ready_to_read:
                if fd == sock_fd:
                    outcome = self._from_service()
                elif fd == wake_fd:
                    outcome = self._on_signals(wake_fd)
                else:
                    outcome = self._from_keyboard()
                if outcome is not None:
                    return outcome

    def _look_at_status(self, status: LoneStatus) -> None:
        if (frame := status.frame(self._pane, window_size(self._out)[1])) is not None:
            self._say(frame)

    def _from_keyboard(self) -> Outcome | None:
        data = read_keys(self._in)
        if data is None:
            return None
        if not data:  # the terminal is gone
            self._keys_open = False
            return self._start_detach()
        return self._typed(data)

    def _typed(self, data: bytes) -> Outcome | None:
        # A command done once detached stops the keys: those after it are its own.
        hands_on = DETACHED_MODES if self._read_only else DETACHED_MODES | LONE_PANE_COMMANDS
        for event in self._keys.feed(data, until=hands_on):
            if isinstance(event, DetachNow) or (
                isinstance(event, Command) and event.name == "detach"
            ):
                return self._start_detach()
            if isinstance(event, Command) and event.name in DETACHED_MODES:
                self._window_command = event.name  # (the caller's, once detached)
                return self._start_detach()
            if self._read_only:
                # Nothing is sent. (No bell either: muxd may be writing to this terminal
                # itself, and a BEL inside its OSC sequence would end that.)
                continue
            if isinstance(event, Typed):
                self._say(proto.Input(event.data))
            elif isinstance(event, Pasted) and self._takes_paste:  # (bracketed if asked)
                self._say(proto.Paste(event.data))
            elif isinstance(event, Pasted):  # (as the terminal sent it: the program asked)
                self._say(proto.Input(BRACKET_OPEN + event.data + BRACKET_CLOSE))
            elif event.name == "paste" and self._buffer.text:
                self._say(paste_frame(self._buffer.text, self._takes_paste))
            elif event.name in LONE_PANE_COMMANDS:
                # Done once detached, by the caller, which then shows the window.
                self._window_command = event.name
                return self._start_detach()
        return None

    def _start_detach(self) -> Outcome | None:
        if self._detaching_since is None:
            self._detaching_since = time.monotonic()
            # Input the service has not taken yet is dropped: detaching must not
            # wait for a pane that reads nothing.
            self._to_service.drop_unsent()
            self._say(proto.Detach())
        return None

    def _on_signals(self, wake_fd: int) -> Outcome | None:
        for signum in pending_signals(wake_fd):
            if signum == signal.SIGWINCH:
                self._say(self._resize_frame())
                if self._status is not None:
                    self._status.again()  # (fitted to the new width)
            elif signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                name = signal.Signals(signum).name
                self._to_service.drop_unsent()
                self._say(proto.Detach())
                if self._sock is not None:
                    with contextlib.suppress(Gone):
                        self._to_service.write_to(self._sock)  # best effort, never waits
                if signum == signal.SIGHUP:
                    self._terminal.pending.clear()  # the terminal is gone
                return Outcome(f"[{name}: detached from pane {self._pane}]", 128 + signum)
        return None

    def _from_service(self) -> Outcome | None:
        assert self._sock is not None
        try:
            data = self._sock.recv(RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return None
        except ConnectionResetError:
            data = b""
        if not data:
            raise Gone
        self._conversation.receive_data(data)
        try:
            while (frame := self._conversation.next_event()) is not None:
                if isinstance(frame, proto.Output | proto.Repaint):
                    self._terminal.add(frame.data)
                    continue
                outcome = self._control(frame)
                if outcome is not None:
                    return outcome
        except proto.ProtocolError as e:
            raise CtlError(f"mux sent something this muxctl does not understand: {e}") from None
        if self._terminal.pending:
            self._terminal.write()  # most often it all goes at once: no extra select
        return None

    def _control(self, frame: ServiceFrame) -> Outcome | None:
        # When WELCOME says the service writes to our terminal, the output simply comes
        # no more in frames, and the loop has nothing to write.
        if isinstance(frame, proto.Welcome):
            self._takes_paste = frame.paste
            if self._status is not None:
                self._status.on = frame.status
        elif isinstance(frame, proto.Attached):
            self._pane = frame.pane
            if self._status is not None:
                self._status.again()
            self._reconnect_until = None
        elif isinstance(frame, proto.Exited):
            return Outcome(f"[pane {self._pane} exited with status {frame.status}]")
        elif isinstance(frame, proto.Detached):
            return self._detached()
        elif isinstance(frame, proto.Error):
            return self._error(frame)
        return None

    def _error(self, error: proto.Error) -> Outcome | None:
        if error.code == SERVICE_UPGRADING and not self._opened:
            # Also covers a connection the old muxd accepted just before its exec.
            self._reconnect_until = time.monotonic() + RECONNECT_TIMEOUT_SECONDS
            return None
        if self._conversation.service_state is State.ATTACHED:  # a refusal: it goes on
            self._notes.append(f"muxctl: {error.message}")
            return None
        status = _EXIT_STATUS_OF_CODE.get(error.code, EXIT_FAILURE)
        return Outcome(f"muxctl: {error.message}", status, to_stderr=True)

    def _detached(self) -> Outcome:
        if self._window_command is not None:
            return Outcome("", window_command=self._window_command)
        return Outcome(
            f"[detached from pane {self._pane}; reattach with: muxctl attach {self._pane}]"
        )


def connect_attach_socket(path: Path) -> socket.socket:
    """A connection to mux's attach socket at `path`, once the socket, its directory and
    the process serving it have been found to be the user's (mux.system.socket_trust):
    every key typed goes there. SocketRefused when they are not, before anything is sent;
    CtlError when nothing listens."""
    try:
        return connect_trusted(path)
    except UntrustedSocket as refusal:
        raise SocketRefused(refusal) from None
    except (FileNotFoundError, ConnectionRefusedError):
        raise CtlError("mux is not running (nothing listens on its attach socket)") from None
    except OSError as e:
        raise CtlError(f"cannot connect to mux's attach socket: {e.strerror}") from None
