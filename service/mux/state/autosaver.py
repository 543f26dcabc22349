"""Keeping `session.json` in step with the session, without ever losing a change.

Every change marks the session dirty; a write follows `debounce` seconds
later. Writes are serialized; a change that arrives during a write makes one
more write after it, paced: at least `debounce` seconds later, and late enough
that saving takes at most a tenth of the time (WRITING_SHARE) while changes
keep coming. `save_now` (the Snapshot method) writes at once and
answers with the generation once it is durable. `final` writes the last state
and stops: after it, nothing the stop does (panes closing) is saved. The
capture runs on the event loop, in steps between which the loop runs (so that
hundreds of panes' output and calls do not wait for it; which panes are saved
is settled at its start), except the final one: it sees one state at rest. The
durable write itself (fsync) runs in a worker thread where muxd may have one
(mux.system.worker_threads), touching
nothing but absolute paths (the pane spawner changes the process's cwd for
an instant around posix_spawn).
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Protocol

from mux.state.capture import CaptureSteps
from mux.state.schema import Session
from mux.state.session_file import session_bytes
from mux.system.durable import DurableWriteError, durable_write
from mux.system.memory import release_free_memory
from mux.system.steps import all_at_once, in_turns
from mux.system.worker_threads import WORKER_THREADS, off_the_loop

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.5
# While changes keep coming (hundreds of panes spawned one after another) the
# writes follow each other; one write of 2000 panes takes ~0.2 s of the loop,
# and back to back they held it most of the time: spawning 2000 panes took
# 5.2 ms a pane instead of 2.3, and the capture's short-lived objects, made
# among the panes' lasting ones, left the heap fragmented for good (15 KiB a
# pane instead of 6.3: bench/scale.py). Between two writes there is at least
# (1 - share) / share times what the last one took.
WRITING_SHARE = 0.1


class QuiesceError(Exception):
    """A participant could not be brought to rest; the final snapshot is not taken."""


class Participant(Protocol):
    """A stateful part of the service whose state the snapshot captures."""

    def prepare_final_snapshot(self) -> None:
        """Come to rest (drain writers, freeze metadata) so that nothing late changes
        what the final snapshot captures; raise QuiesceError if that cannot be done."""


RETRY_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)  # after a failed autosave, then every 30 s


class Stopped(Exception):
    """Saving is over (the final snapshot was taken) or held (an upgrade is under way)."""


# The pages a capture freed (its models and JSON: some KiB a pane) are given back
# after a save at most this often: malloc would keep them (a hundred idle panes'
# muxd kept 5 KiB a pane more after its first snapshot), but a trim of a large,
# fragmented heap takes 10-20 ms in which the loop's own allocations wait.
RELEASE_INTERVAL_SECONDS = 60.0


class Autosaver:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        path: Path,
        capture: Callable[[int], CaptureSteps],
        *,
        generation: int,
        saved: Callable[[int], None],
        failed: Callable[[str], None],
        debounce: float = DEBOUNCE_SECONDS,
        refresh: Callable[[], Awaitable[None]] | None = None,
        written: Callable[[Session, bytes], None] | None = None,
    ) -> None:
        """`refresh`: brings what `capture` reads up to date before each capture;
        `written(session, data)`: after each durable write, on the writer's thread (the
        history of snapshots keeps it there, mux.state.history)."""
        if not path.is_absolute():
            raise ValueError(f"the snapshot path must be absolute: {path}")
        self.path = path
        self.generation = generation
        self.last_error = ""  # until a write succeeds again: shown in the status
        self._loop = loop
        self._capture = capture
        self._refresh = refresh
        self._written = written
        self._saved = saved
        self._failed = failed
        self._debounce = debounce
        self._dirty = False
        self._stopped = False
        self._failures = 0
        self._timer: asyncio.TimerHandle | None = None
        self._writer: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._released_at: float | None = None  # (loop time) the last release_free_memory
        self._release_timer: asyncio.TimerHandle | None = None

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
            if not self._dirty or self._stopped:
                return
            self._dirty = False
            began = self._loop.time()
            try:
                await self._write()
            except Stopped:
                return
            except Exception as e:  # every failure is reported, and retried
                self._dirty = True
                self._report(e)
                delay = RETRY_SECONDS[min(self._failures, len(RETRY_SECONDS)) - 1]
                self._timer = self._loop.call_later(delay, self._start_writer)
                return
            if self._dirty and not self._stopped:  # changed meanwhile: one more, paced
                took = self._loop.time() - began
                pause = max(self._debounce, took * (1 - WRITING_SHARE) / WRITING_SHARE)
                self._timer = self._loop.call_later(pause, self._start_writer)
        finally:
            self._writer = None

    def _report(self, error: Exception) -> None:
        self._failures += 1
        message = str(error) if isinstance(error, DurableWriteError) else f"saving failed: {error}"
        self.last_error = message
        log.error("autosave failed: %s", message)
        self._failed(message)

    async def _write(
        self, prepare: Callable[[], None] | None = None, *, final: bool = False
    ) -> int:
        async with self._lock:  # no other write in flight from here
            if self._stopped and not final:
                raise Stopped("saving is held or over")
            if self._refresh is not None:
                await self._refresh()
            if prepare is not None:
                prepare()  # and nothing between it and the capture yields
            generation = self.generation + 1
            steps = self._capture(generation)
            if final:
                session = all_at_once(steps)
            else:
                session = await in_turns(steps)
                await asyncio.sleep(0)  # and once more before the JSON (3-8 ms for 500)
            data = session_bytes(session)
            written = self._written
            if written is None:
                del session  # its models (some KiB a pane) are not needed across the write

            def write() -> None:
                durable_write(self.path, data)
                if written is not None:
                    written(session, data)

            try:
                await off_the_loop(self._loop, write)
            except DurableWriteError as e:
                if e.replaced:  # the new content is there: its number is used up
                    self.generation = generation
                raise
            self.generation = generation
            self._failures = 0
            self.last_error = ""
        self._saved(generation)
        self._release_memory_now_and_then()
        return generation

    def _release_memory_now_and_then(self) -> None:
        """Now, or when the interval since the last release ends: a save within it is not
        skipped, since muxd may save nothing more for hours and keep what it freed."""
        if self._release_timer is not None:
            return  # one is coming
        now = self._loop.time()
        if self._released_at is None or now - self._released_at >= RELEASE_INTERVAL_SECONDS:
            self._release_memory()
        else:
            due = self._released_at + RELEASE_INTERVAL_SECONDS - now
            self._release_timer = self._loop.call_later(due, self._release_memory)

    def _release_memory(self) -> None:
        self._release_timer = None
        self._released_at = self._loop.time()
        if WORKER_THREADS:  # not awaited: nobody waits for it
            self._loop.run_in_executor(None, release_free_memory)
        else:
            release_free_memory()

    async def save_now(self) -> int:
        """Write the current state; returns its generation once it is on disk.
        Raises Stopped while an upgrade holds saving or after the final snapshot."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        dirty, self._dirty = self._dirty, False
        try:
            return await self._write()
        except BaseException:
            self._dirty = self._dirty or dirty
            raise

    async def hold(self) -> None:
        """No writes until `release`; returns once a write in flight has finished
        (an upgrade's exec must not cut one in half)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._stopped = True
        async with self._lock:
            pass

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
            return await self._write(prepare=quiesce, final=True)
        except QuiesceError as e:
            log.error("the final snapshot was not taken (%s); the previous one is kept", e)
            self._failed(f"the final snapshot was not taken: {e}")
        except Exception as e:  # the stop goes on whatever happened here
            self._report(e)
        return None
