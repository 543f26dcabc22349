"""The interactive client of the attach protocol behind `muxctl attach` and `muxctl new`.

One thread, one select loop over the terminal, the attach socket and a
signal wake-up pipe: keys go to the pane as INPUT (up to the detach key),
OUTPUT and REPAINT go to the terminal as they come, SIGWINCH becomes RESIZE.
When the service re-execs itself (an upgrade) it says so, and the client
reconnects to the same pane: pane ids survive an upgrade.
"""

import contextlib
import errno
import os
import selectors
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from mux.protocol import attach as proto
from muxctl.errors import EXIT_FAILURE, EXIT_PRECONDITION, EXIT_USAGE, CtlError
from muxctl.rawterm import RawTerminal, window_size, write_all

RECV_SIZE = 256 * 1024
DETACH_TIMEOUT_SECONDS = 2.0
RECONNECT_TIMEOUT_SECONDS = 15.0
DEFAULT_DETACH_KEY = "^\\"

# Attach-protocol error codes (service/mux/attach/session.py) and D-Bus error
# short names, as exit statuses (SPEC §7).
_EXIT_STATUS_OF_CODE = {"InvalidArgument": EXIT_USAGE, "PreconditionFailed": EXIT_PRECONDITION}
_UPGRADING = "ServiceUpgrading"
_WATCHED_SIGNALS = (signal.SIGWINCH, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def parse_detach_key(text: str) -> bytes | None:
    """`^\\`, `^]`, `C-a`, `ctrl-b` or one character; `none` turns detaching by key off."""
    if text.lower() == "none":
        return None
    lowered = text.lower()
    for prefix in ("^", "c-", "ctrl-", "ctrl+"):
        if lowered.startswith(prefix) and len(text) == len(prefix) + 1:
            char = text[-1].upper()
            if char == "?":
                return b"\x7f"
            if "@" <= char <= "_":
                return bytes([ord(char) ^ 0x40])
            break
    else:
        if len(text) == 1 and text.isascii():
            return text.encode()
    raise CtlError(
        f"cannot use {text!r} as the detach key; give ^X (a control key), one character, or none",
        EXIT_USAGE,
    )


@dataclass
class Outcome:
    """How an attach ended: what to tell the user, and muxctl's exit status."""

    message: str
    exit_status: int = 0
    to_stderr: bool = False


class _Gone(Exception):
    """The connection ended without a word from the service."""


class AttachClient:
    def __init__(
        self,
        socket_path: Path,
        pane_id: int,
        detach_key: bytes | None,
        input_fd: int = 0,
        output_fd: int = 1,
    ) -> None:
        self._path = socket_path
        self._pane = pane_id  # 0 until ATTACHED names it: the most recently used pane
        self._detach_key = detach_key
        self._in = input_fd
        self._out = output_fd
        self._sock: socket.socket | None = None
        self._decoder = proto.FrameDecoder()
        self._detaching_since: float | None = None
        self._reconnect = False
        self._attached = False
        self._notes: list[str] = []  # non-fatal refusals, shown after the terminal is back

    # -- connection ---------------------------------------------------------------

    def connect(self) -> None:
        """Connect and ask for the pane; CtlError when nothing listens."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(self._path))
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            raise CtlError("mux is not running (nothing listens on its attach socket)") from None
        except OSError as e:
            sock.close()
            raise CtlError(f"cannot connect to mux's attach socket: {e.strerror}") from None
        self._sock = sock
        self._attached = False
        self._decoder = proto.FrameDecoder()
        rows, cols = window_size(self._out)
        # Pipelined: the size first, so the first repaint is already at this size.
        self._send(proto.Hello(), proto.Resize(rows, cols), proto.Attach(self._pane))

    def _send(self, *frames: proto.Frame) -> None:
        assert self._sock is not None
        try:
            self._sock.sendall(b"".join(proto.encode(frame) for frame in frames))
        except OSError as e:
            if e.errno in (errno.EPIPE, errno.ECONNRESET):
                raise _Gone from None
            raise

    # -- the loop -------------------------------------------------------------------

    def run(self) -> Outcome:
        """Attached until detach, exit or loss; the terminal is raw only inside."""
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        previous_handlers = {s: signal.signal(s, _note_signal) for s in _WATCHED_SIGNALS}
        previous_wakeup = signal.set_wakeup_fd(wake_write)
        try:
            with RawTerminal(self._in, self._out):
                outcome = self._serve(wake_read)
        finally:
            signal.set_wakeup_fd(previous_wakeup)
            for signum, handler in previous_handlers.items():
                signal.signal(signum, handler)
            os.close(wake_read)
            os.close(wake_write)
            if self._sock is not None:
                self._sock.close()
        if self._notes:
            outcome.message = "\n".join([*self._notes, outcome.message])
        return outcome

    def _serve(self, wake_fd: int) -> Outcome:
        while True:
            try:
                return self._serve_connection(wake_fd)
            except _Gone:
                if self._detaching_since is not None:
                    return self._detached()
                if not self._reconnect:
                    return Outcome(
                        "mux went away (it stopped or crashed); the pane may be back once it is "
                        "restarted",
                        EXIT_FAILURE,
                        to_stderr=True,
                    )
            self._reconnect_after_upgrade()

    def _reconnect_after_upgrade(self) -> None:
        assert self._sock is not None
        self._sock.close()
        self._sock = None
        self._reconnect = False
        deadline = time.monotonic() + RECONNECT_TIMEOUT_SECONDS
        while True:
            try:
                self.connect()
                return
            except CtlError:
                if time.monotonic() > deadline:
                    raise CtlError("mux did not come back after its upgrade") from None
                time.sleep(0.05)

    def _serve_connection(self, wake_fd: int) -> Outcome:
        assert self._sock is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._sock, selectors.EVENT_READ, "socket")
            selector.register(self._in, selectors.EVENT_READ, "keys")
            selector.register(wake_fd, selectors.EVENT_READ, "signal")
            while True:
                timeout = None
                if self._detaching_since is not None:
                    timeout = self._detaching_since + DETACH_TIMEOUT_SECONDS - time.monotonic()
                    if timeout <= 0:
                        return self._detached()
                for key, _ in selector.select(timeout):
                    outcome = self._ready(key.data, wake_fd)
                    if outcome is not None:
                        return outcome

    def _ready(self, what: str, wake_fd: int) -> Outcome | None:
        if what == "socket":
            return self._from_service()
        if what == "keys":
            return self._from_keyboard()
        for signum in os.read(wake_fd, 64):
            outcome = self._on_signal(signum)
            if outcome is not None:
                return outcome
        return None

    def _from_keyboard(self) -> Outcome | None:
        try:
            data = os.read(self._in, 65536)
        except OSError:
            data = b""
        if not data:  # the terminal is gone
            return self._start_detach()
        key = self._detach_key
        cut = data.find(key) if key is not None else -1
        if cut < 0:
            self._send(proto.Input(data))
            return None
        if cut:
            self._send(proto.Input(data[:cut]))
        return self._start_detach()

    def _start_detach(self) -> Outcome | None:
        if self._detaching_since is None:
            self._detaching_since = time.monotonic()
            self._send(proto.Detach())
        return None

    def _on_signal(self, signum: int) -> Outcome | None:
        if signum == signal.SIGWINCH:
            self._send(proto.Resize(*window_size(self._out)))
            return None
        if signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            name = signal.Signals(signum).name
            with contextlib.suppress(OSError, _Gone):
                self._send(proto.Detach())
            return Outcome(f"[{name}: detached from pane {self._pane}]", 128 + signum)
        return None

    def _from_service(self) -> Outcome | None:
        assert self._sock is not None
        try:
            data = self._sock.recv(RECV_SIZE)
        except ConnectionResetError:
            data = b""
        if not data:
            raise _Gone
        self._decoder.receive_data(data)
        screen: list[bytes] = []
        try:
            while (frame := self._decoder.next_frame()) is not None:
                if isinstance(frame, proto.Output | proto.Repaint):
                    screen.append(frame.data)
                    continue
                if screen:
                    write_all(self._out, b"".join(screen))
                    screen.clear()
                outcome = self._control(frame)
                if outcome is not None:
                    return outcome
        except proto.ProtocolError as e:
            raise CtlError(f"mux sent something this muxctl does not understand: {e}") from None
        finally:
            if screen:
                write_all(self._out, b"".join(screen))
        return None

    def _control(self, frame: proto.Frame) -> Outcome | None:
        if isinstance(frame, proto.Attached):
            self._pane = frame.pane
            self._attached = True
        elif isinstance(frame, proto.Exited):
            return Outcome(f"[pane {self._pane} exited with status {frame.status}]")
        elif isinstance(frame, proto.Detached):
            return self._detached()
        elif isinstance(frame, proto.Error):
            return self._error(frame)
        return None

    def _error(self, error: proto.Error) -> Outcome | None:
        if error.code == _UPGRADING:
            self._reconnect = True
            return None
        if not self._attached or error.code in ("PaneClosed", "ServiceStopping", "ProtocolError"):
            status = _EXIT_STATUS_OF_CODE.get(error.code, EXIT_FAILURE)
            return Outcome(f"muxctl: {error.message}", status, to_stderr=True)
        self._notes.append(f"muxctl: {error.message}")
        return None

    def _detached(self) -> Outcome:
        return Outcome(
            f"[detached from pane {self._pane}; reattach with: muxctl attach {self._pane}]"
        )


def _note_signal(signum: int, frame: object) -> None:
    """The wake-up fd carries the signal to the loop; nothing else to do here."""
