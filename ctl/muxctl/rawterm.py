"""The user's terminal while `muxctl attach` runs: raw mode, its size, and putting it back.

`RawTerminal` is a context manager: whatever way the attach ends (detach, the
pane's exit, the service gone, a signal, an exception), leaving it restores
the terminal's settings and resets the modes a pane's program may have left
switched on (alternate screen, mouse reporting, bracketed paste, a hidden
cursor, a scroll region...), so the shell the user returns to works.
"""

import contextlib
import fcntl
import os
import select
import struct
import termios
import time
import tty
from collections.abc import Iterator
from types import TracebackType
from typing import Any

# Leave the alternate screen (1047: without restoring some saved cursor), reset
# the pen, the charset, wrap, insert, cursor visibility, cursor-key and keypad
# modes, every mouse-reporting mode, focus events and bracketed paste. The
# scroll region and origin mode (each of which homes the cursor) are reset
# between a save and a restore of the cursor.
RESET_MODES = (
    b"\x1b[?1047l\x1b[0m\x1b(B\x1b[?7h\x1b[4l\x1b[?25h\x1b[?1l\x1b>"
    b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l"
    b"\x1b[?1004l\x1b[?2004l"
    b"\x1b7\x1b[r\x1b[?6l\x1b8"
)


RESET_TIMEOUT_SECONDS = 1.0


def window_size(fd: int) -> tuple[int, int]:
    """(rows, cols) of the terminal on `fd`; (24, 80) when it does not say."""
    try:
        rows, cols, _, _ = struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, bytes(8)))
    except OSError:
        return 24, 80
    return (rows or 24), (cols or 80)


def read_keys(fd: int, most: int = 65536) -> bytes | None:
    """What was typed on the (readable) terminal `fd`, `most` bytes at most (the rest
    stays there): None when nothing is there after all, b"" when the terminal is gone
    (end of file, or an error reading it)."""
    try:
        return os.read(fd, most)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError:
        return b""


def write_within(fd: int, data: bytes, seconds: float) -> None:
    """Write `data` to a non-blocking `fd`, giving up after `seconds` (a stalled terminal)."""
    deadline = time.monotonic() + seconds
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
            continue
        except (BlockingIOError, InterruptedError):
            pass
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([], [fd], [], left)[1]:
            return


@contextlib.contextmanager
def held_raw(fd: int) -> Iterator[None]:
    """Raw mode from one part of an attach to the next (the pane shown alone, a question
    below it, copy mode, the window view), each of which sets it again itself: keys
    typed between two of them wait for the next as they were typed — not echoed, no
    Ctrl-C made a signal, no Enter made a line feed. Blocking, as the parts' writes
    outside the loops expect (which end their lines with CR LF); the settings come
    back at the end."""
    try:
        saved = termios.tcgetattr(fd)
        tty.setraw(fd, termios.TCSANOW)
    except termios.error:
        yield  # (not a terminal: nothing to hold)
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


class RawTerminal:
    """Raw mode, and both fds non-blocking (the attach loop must never block)."""

    def __init__(self, input_fd: int, output_fd: int) -> None:
        self.input_fd = input_fd
        self.output_fd = output_fd
        self._saved: list[Any] | None = None
        self._blocking: list[tuple[int, bool]] = []

    def __enter__(self) -> "RawTerminal":
        self._saved = termios.tcgetattr(self.input_fd)
        tty.setraw(self.input_fd, termios.TCSANOW)
        # Both may be one open file shared with the shell: restored in reverse.
        for fd in (self.input_fd, self.output_fd):
            self._blocking.append((fd, os.get_blocking(fd)))
            os.set_blocking(fd, False)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.restore()

    def restore(self) -> None:
        """Idempotent; never raises (the terminal may be gone: SIGHUP)."""
        saved, self._saved = self._saved, None
        if saved is None:
            return
        with contextlib.suppress(OSError):
            write_within(self.output_fd, RESET_MODES, RESET_TIMEOUT_SECONDS)
        while self._blocking:
            fd, blocking = self._blocking.pop()
            with contextlib.suppress(OSError):
                os.set_blocking(fd, blocking)
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(self.input_fd, termios.TCSANOW, saved)
