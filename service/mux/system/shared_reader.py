"""One event-loop reader shared by many file descriptors, serving a bounded number a turn.

Why: asyncio runs, in one turn of its loop, the callback of every descriptor that
was ready when it looked. With hundreds of busy terminals that is hundreds of reads
and emulator batches before the loop looks at anything else — after any pause (a
full collection, a long reply) every pane is ready, and the next turn holds the loop
for all of them while a typed key or a D-Bus call waits. Here the busy descriptors
sit in an epoll set of their own, whose one descriptor is the loop's reader; each
turn serves ready ones a batch at a time until `turn_seconds` have passed. Their
epoll registration is level triggered: a descriptor still ready after its callback
is reported again, and the kernel hands out the ready ones in turn (each one
reported goes to the back of its ready list), so no descriptor waits more than a
few turns.

What must answer at once (a terminal someone is watching live) stays a reader of its
own on the loop. Where there is no epoll (macOS), descriptors are read by the loop
directly, as before.
"""

import asyncio
import select
import time
from collections.abc import Callable

# A terminal read and its emulation take 40-400 µs (profiled under bench/load.py):
# batches of 8 until 2 ms have passed keep a turn near 2-5 ms of the loop.
BATCH = 8
TURN_SECONDS = 0.002


class SharedReader:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        batch: int = BATCH,
        turn_seconds: float = TURN_SECONDS,
    ) -> None:
        self.loop = loop  # (its descriptors' other readers and writers are the loop's own)
        self._batch = batch
        self._turn_seconds = turn_seconds
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._poller: select.epoll | None = None  # opened with the first descriptor

    def add_reader(self, fd: int, callback: Callable[[], None]) -> None:
        """Call `callback` when `fd` is readable, in turn with the others."""
        if not hasattr(select, "epoll"):
            self.loop.add_reader(fd, callback)
            return
        poller = self._poller
        if poller is None:
            poller = self._poller = select.epoll()
            self.loop.add_reader(poller.fileno(), self._serve)
        if fd in self._callbacks:
            poller.modify(fd, select.EPOLLIN)
        else:
            poller.register(fd, select.EPOLLIN)
        self._callbacks[fd] = callback

    def remove_reader(self, fd: int) -> None:
        """Stop reading `fd` (before it is closed: an epoll set keeps a descriptor
        whose file is still open elsewhere)."""
        if self._poller is None:
            self.loop.remove_reader(fd)
            return
        if self._callbacks.pop(fd, None) is not None:
            self._poller.unregister(fd)

    @property
    def descriptors(self) -> int:
        """How many descriptors are read in turn here. (Not __len__: an empty reader
        would be false, and `reader or loop` would quietly pick the loop.)"""
        return len(self._callbacks)

    def close(self) -> None:
        poller, self._poller = self._poller, None
        if poller is not None:
            self.loop.remove_reader(poller.fileno())
            poller.close()
        self._callbacks.clear()

    def _serve(self) -> None:
        # A whole batch is served once polled: one reported and left unserved would
        # go to the back of the kernel's ready list without its turn.
        deadline = time.monotonic() + self._turn_seconds
        while (poller := self._poller) is not None:
            events = poller.poll(0, self._batch)
            for fd, _ in events:
                callback = self._callbacks.get(fd)
                if callback is not None:  # (removed by an earlier callback of this turn)
                    self._call(fd, callback)
            if len(events) < self._batch or time.monotonic() >= deadline:
                return

    def _call(self, fd: int, callback: Callable[[], None]) -> None:
        """As the loop runs a reader: a failing callback is reported, and the others of
        its turn still run."""
        try:
            callback()
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as e:
            self.loop.call_exception_handler(
                {"message": f"reading descriptor {fd} failed", "exception": e}
            )


# What reads descriptors: a SharedReader or the loop itself (both take
# `add_reader(fd, callback)` and `remove_reader(fd)`).
Readers = SharedReader | asyncio.AbstractEventLoop


def in_turn(loop: asyncio.AbstractEventLoop, shared: SharedReader | None) -> Readers:
    """Where descriptors that may wait their turn are read: `shared`, else (None) the
    loop's own readers."""
    return loop if shared is None else shared


class SwitchingReader:
    """One descriptor's reader, in turn through a SharedReader or promptly on the loop
    itself, switched while it reads (None for `shared`: always on the loop)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, shared: SharedReader | None) -> None:
        self._loop = loop
        self._in_turn = in_turn(loop, shared)
        self._prompt = False
        self._reading: tuple[int, Callable[[], None]] | None = None

    @property
    def _readers(self) -> Readers:
        return self._loop if self._prompt else self._in_turn

    def start(self, fd: int, callback: Callable[[], None]) -> None:
        self._readers.add_reader(fd, callback)
        self._reading = (fd, callback)

    def stop(self) -> None:
        reading, self._reading = self._reading, None
        if reading is not None:
            self._readers.remove_reader(reading[0])

    def read_promptly(self, prompt: bool) -> None:
        reading = self._reading
        if prompt == self._prompt:
            return
        self.stop()
        self._prompt = prompt
        if reading is not None:
            self.start(*reading)
