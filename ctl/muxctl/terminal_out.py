"""What an attached client has for the terminal, written as the terminal takes it: never waiting
in the loop, bounded at the end."""

import os
import select
import time


class TerminalOut:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = bytearray()

    def add(self, data: bytes) -> None:
        self.pending += data

    def write(self) -> None:
        """As much as the terminal takes now (a PTY takes a few KiB per write)."""
        while self.pending:
            try:
                written = os.write(self.fd, self.pending)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.pending.clear()  # the terminal is gone; SIGHUP follows
                return
            del self.pending[:written]

    def flush(self, seconds: float) -> None:
        """What is left, for at most `seconds` (before the terminal is restored)."""
        deadline = time.monotonic() + seconds
        while self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [self.fd], [], left)[1]:
                return
            self.write()
