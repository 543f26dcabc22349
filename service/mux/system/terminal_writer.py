"""Writing to a terminal from the event loop without ever waiting for it.

What the terminal does not take at once waits in a backlog, written whenever
the terminal is writable again. The writer only counts the backlog: how much
may wait is its owner's decision (an attach session stops adding output past
its buffer and repaints once the backlog is gone). A terminal that fails
(hung up, gone) ends the writer quietly: what was waiting is dropped, and
its owner learns of the loss from its client's connection.
"""

import asyncio
import contextlib
import os
from collections.abc import Callable


class TerminalWriter:
    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        """`fd`: non-blocking and the writer's own (closed by `close`)."""
        self._fd: int | None = fd
        self._loop = loop
        self._backlog = bytearray()
        self._watching = False
        self._on_drained: list[Callable[[], None]] = []

    @property
    def backlog(self) -> int:
        """Bytes written but not yet taken by the terminal."""
        return len(self._backlog)

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def write(self, data: bytes) -> None:
        if self._fd is None:
            return
        if self._backlog:
            self._backlog += data
            return
        written = self._write_now(data)
        if written is not None and written < len(data):
            self._backlog += data[written:]
            self._watch()

    def when_drained(self, callback: Callable[[], None], at_most: float | None = None) -> None:
        """Call `callback` once the backlog is empty (now, if it is). Without `at_most`
        it is never called if the terminal fails or the writer is closed first; with
        it, it is called once, after `at_most` seconds at the latest, whatever the
        terminal did."""
        if not self._backlog:
            callback()
            return
        if at_most is None:
            self._on_drained.append(callback)
            return

        def once() -> None:
            timer.cancel()
            with contextlib.suppress(ValueError):
                self._on_drained.remove(once)
            callback()

        timer = self._loop.call_later(at_most, once)
        self._on_drained.append(once)

    def discard(self) -> None:
        """Forget what waits: a detach does not wait for a slow terminal."""
        self._backlog.clear()
        self._on_drained.clear()
        self._unwatch()

    def close(self) -> None:
        self.discard()
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _write_now(self, data: bytes | bytearray) -> int | None:
        """What the terminal took of `data`; None once it has failed (and is closed)."""
        assert self._fd is not None
        try:
            return os.write(self._fd, data)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError:
            self.close()
            return None

    def _on_writable(self) -> None:
        while self._backlog and self._fd is not None:
            written = self._write_now(self._backlog)
            if not written:
                return  # full again (or failed: closed)
            del self._backlog[:written]
        self._unwatch()
        callbacks, self._on_drained = self._on_drained, []
        for callback in callbacks:
            callback()

    def _watch(self) -> None:
        if not self._watching and self._fd is not None:
            self._loop.add_writer(self._fd, self._on_writable)
            self._watching = True

    def _unwatch(self) -> None:
        if self._watching and self._fd is not None:
            self._loop.remove_writer(self._fd)
        self._watching = False
