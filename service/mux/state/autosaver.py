"""Keeping `session.json` in step with the session, without ever losing a change.

Every change marks the session dirty; a write follows `debounce` seconds
later. Writes are serialized; a change that arrives during a write makes one
more write after it. `save_now` (the Snapshot method) writes at once and
answers with the generation once it is durable. `final` writes the last state
and stops: after it, nothing the stop does (panes closing) is saved. The
capture runs on the event loop, so it sees one consistent state; the
durable write itself (fsync) runs in a worker thread, which touches nothing
but absolute paths.
"""

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from mux.state.durable import DurableWriteError, durable_write
from mux.state.schema import Session

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.5


class QuiesceError(Exception):
    """A participant could not be brought to rest; the final snapshot is not taken."""


class Participant(Protocol):
    """A stateful part of the service whose state the snapshot captures."""

    def prepare_final_snapshot(self) -> None:
        """Come to rest (drain writers, freeze metadata) so that nothing late changes
        what the final snapshot captures; raise QuiesceError if that cannot be done."""


class Autosaver:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        path: Path,
        capture: Callable[[int], Session],
        *,
        generation: int,
        saved: Callable[[int], None],
        failed: Callable[[str], None],
        debounce: float = DEBOUNCE_SECONDS,
    ) -> None:
        self.path = path
        self.generation = generation
        self._loop = loop
        self._capture = capture
        self._saved = saved
        self._failed = failed
        self._debounce = debounce
        self._dirty = False
        self._stopped = False
        self._timer: asyncio.TimerHandle | None = None
        self._writer: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def mark_dirty(self) -> None:
        self._dirty = True
        if self._stopped:
            return
        if self._timer is None and self._writer is None:
            self._timer = self._loop.call_later(self._debounce, self._start_writer)

    def _start_writer(self) -> None:
        self._timer = None
        self._writer = asyncio.ensure_future(self._write_while_dirty())

    async def _write_while_dirty(self) -> None:
        try:
            while self._dirty and not self._stopped:
                self._dirty = False
                try:
                    await self._write()
                except DurableWriteError as e:
                    log.error("autosave failed: %s", e)
                    self._failed(str(e))
                    return  # the next change tries again
        finally:
            self._writer = None

    async def _write(self, prepare: Callable[[], None] | None = None) -> int:
        async with self._lock:  # no other write in flight from here
            if prepare is not None:
                prepare()  # and nothing between it and the capture yields
            generation = self.generation + 1
            session = self._capture(generation)
            data = session.model_dump_json(indent=1).encode() + b"\n"
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            await self._loop.run_in_executor(None, durable_write, self.path, data)
            self.generation = generation
        self._saved(generation)
        return generation

    async def save_now(self) -> int:
        """Write the current state; returns its generation once it is on disk."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._dirty = False
        return await self._write()

    def hold(self) -> None:
        """No writes until `release` (an upgrade's exec must not cut one in half)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._stopped = True

    def release(self) -> None:
        self._stopped = False
        if self._dirty:
            self.mark_dirty()

    async def final(self, participants: Sequence[Participant] = ()) -> int | None:
        """The last write, of the state as it is once every participant is at rest;
        later changes are not saved. A participant that cannot come to rest keeps
        the previous snapshot: better the last good state than a half-stopped one."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._stopped = True

        def quiesce() -> None:
            for participant in participants:
                participant.prepare_final_snapshot()

        try:
            return await self._write(prepare=quiesce)
        except QuiesceError as e:
            log.error("the final snapshot was not taken (%s); the previous one is kept", e)
            self._failed(f"the final snapshot was not taken: {e}")
            return None
        except DurableWriteError as e:
            log.error("the final snapshot failed, the previous one is kept: %s", e)
            self._failed(str(e))
            return None
