"""Signals as bytes on a pipe, for a select loop (muxctl attach, the window view): each
watched signal's number is written to the pipe, whose read end the loop watches."""

import contextlib
import os
import signal
from collections.abc import Iterator, Sequence

WATCHED_SIGNALS = (signal.SIGWINCH, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _noted(signum: int, frame: object) -> None:
    """The wake-up fd carries the signal to the loop; nothing else to do here."""


@contextlib.contextmanager
def signal_wakeups(signals: Sequence[signal.Signals] = WATCHED_SIGNALS) -> Iterator[int]:
    """The read end of a pipe that gets a byte, the signal's number, for each of
    `signals`; the handlers and wake-up fd are as they were afterwards."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    previous_handlers = {s: signal.signal(s, _noted) for s in signals}
    previous_wakeup = signal.set_wakeup_fd(wake_write)
    try:
        yield wake_read
    finally:
        signal.set_wakeup_fd(previous_wakeup)
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)
        os.close(wake_read)
        os.close(wake_write)


def pending_signals(wake_fd: int) -> bytes:
    """The numbers of the signals that came since the last call (b"": none after all)."""
    try:
        return os.read(wake_fd, 64)
    except BlockingIOError:
        return b""
