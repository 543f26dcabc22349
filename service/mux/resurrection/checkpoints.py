"""Checkpoints: the opaque reference an application hands mux, one file per invocation.

`<state>/checkpoints/<invocation>.json`, written through the durable writer
(file and directory fsynced before the application is told), keyed by the
invocation identity of the launch (the same across a restore, since the
relaunched program continues that invocation). mux never interprets the
reference. A file that is unreadable, of an unknown format, or about another
invocation is a `CheckpointProblem`: the caller reports it; the file is left
untouched.

A checkpoint's generation is read, incremented and written as one step, one
writer at a time (threads of this process, then other processes), so
concurrent checkpoints of one invocation get distinct, increasing generations
and the one acknowledged last is the one on disk
(docs/resurrection-protocol.md#checkpoints-and-durability).
"""

import asyncio
import contextlib
import fcntl
import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TypeVar

from mux.system.durable import (
    REAL_OPS,
    DurableWriteError,
    FileOps,
    durable_remove,
    durable_write,
    remove_stale_temporaries_in,
)
from mux.system.json_file import KIB, JsonFileKind, MalformedJson, read_json_object
from mux.system.quarantine import quarantine
from mux.system.worker_threads import off_the_loop

FORMAT = 1
# A reference is at most 4 KiB of UTF-8, 24 KiB once escaped: the file is flat.
CHECKPOINT_FILE = JsonFileKind("the checkpoint file", 64 * KIB, max_depth=4)
_INVOCATION = re.compile(r"[0-9a-f]{32}")
_turns: dict[Path, threading.Lock] = {}  # one per checkpoint file, shared by every store
_turns_guard = threading.Lock()
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
_Written = TypeVar("_Written", bound=int | None)  # a generation, or None for a clear


@contextlib.contextmanager
def _turn(path: Path, step: str) -> Iterator[None]:
    """`path`'s read-increment-write (or removal) to itself. Its own lock file: the durable
    writer's lock, taken again from another descriptor, would wait for itself. Failing
    to take the turn is a DurableWriteError for `step`, as the write's own first step."""
    with _turns_guard:
        thread_turn = _turns.setdefault(path, threading.Lock())
    with thread_turn:
        try:
            fd = os.open(path.with_name(f".{path.name}.generation.lock"), _LOCK_FLAGS, 0o600)
        except OSError as e:
            raise DurableWriteError(path, step, e, replaced=False) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


class CheckpointProblem(Exception):
    """A checkpoint that cannot be given back; the message says why, without paths."""


class CheckpointQuarantined(CheckpointProblem):
    """The checkpoint file was malformed: it is in the quarantine now, as `moved_as`."""

    def __init__(self, message: str, moved_as: str) -> None:
        super().__init__(message)
        self.moved_as = moved_as


@dataclass(frozen=True)
class CheckpointRecord:
    invocation: str
    application: str
    reference: str
    generation: int


class CheckpointStore:
    def __init__(
        self, directory: Path, ops: FileOps = REAL_OPS, quarantine_dir: Path | None = None
    ) -> None:
        """`ops`: the system calls of durable writes (replaced in fault-injection tests);
        `quarantine_dir`: where malformed files go (None: they are left where they are)."""
        self.directory = directory
        self._ops = ops
        self._quarantine_dir = quarantine_dir

    def remove_unfinished_writes(self) -> list[str]:
        """The temporary files of checkpoint writes a killed muxd cut short, removed.
        Only at a cold start, before any endpoint can write: otherwise they would stay
        for good (343 after 664 kills in bench/kill_storm.py); the files themselves are
        whole either way."""
        return remove_stale_temporaries_in(self.directory)

    def path_for(self, invocation: str) -> Path:
        if not _INVOCATION.fullmatch(invocation):
            raise CheckpointProblem("the launch has no valid invocation identity")
        return self.directory / f"{invocation}.json"

    def write(self, invocation: str, application: str, reference: str) -> int:
        """Durably on disk when it returns (blocking: run it off the event loop)."""
        path = self.path_for(invocation)
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as e:
            raise DurableWriteError(path, "preparing its directory", e, replaced=False) from None
        with _turn(path, "preparing its directory"):
            try:
                generation = self.read(invocation).generation + 1
            except (CheckpointProblem, FileNotFoundError):
                generation = 1
            record = {
                "format": FORMAT,
                "invocation": invocation,
                "application": application,
                "reference": reference,
                "generation": generation,
            }
            durable_write(path, json.dumps(record).encode() + b"\n", ops=self._ops)
        return generation

    def clear(self, invocation: str) -> None:
        path = self.path_for(invocation)
        with _turn(path, "removing it"):
            durable_remove(path, ops=self._ops)

    def read(self, invocation: str) -> CheckpointRecord:
        """FileNotFoundError when there is none; CheckpointProblem when it is unusable."""
        path = self.path_for(invocation)
        try:
            value = read_json_object(path, CHECKPOINT_FILE)
        except MalformedJson as e:
            self._malformed(path, e.problem)
        if value.get("format") != FORMAT:
            raise CheckpointProblem("the checkpoint file has a format this mux does not know")
        record = CheckpointRecord(
            invocation=value.get("invocation"),  # type: ignore[arg-type]
            application=value.get("application"),  # type: ignore[arg-type]
            reference=value.get("reference"),  # type: ignore[arg-type]
            generation=value.get("generation"),  # type: ignore[arg-type]
        )
        if not (
            isinstance(record.application, str)
            and isinstance(record.reference, str)
            and isinstance(record.generation, int)
            and not isinstance(record.generation, bool)
        ):
            self._malformed(path, "missing fields")
        if record.invocation != invocation:
            raise CheckpointProblem("the checkpoint file belongs to another invocation")
        return record

    def _malformed(self, path: Path, problem: str) -> NoReturn:
        message = f"the checkpoint file is corrupt ({problem})"
        if self._quarantine_dir is None:
            raise CheckpointProblem(message)
        moved = quarantine(path, self._quarantine_dir, message)
        raise CheckpointQuarantined(message, moved.name)


def _tell_nobody(generation: int | None) -> None:
    """Where a finished launch's last writes report their generation."""


class CheckpointWriter:
    """One launch's checkpoint writes, off the event loop and one at a time, so `changed`
    hears the generations (None: cleared) in the order they reached the disk; `idle` once
    none is in flight (the final snapshot waits for that)."""

    # Every pane has a writer and most never write: no instance dict, nothing made ahead.
    __slots__ = ("_changed", "_idle", "_in_flight", "_loop", "_turn", "invocation", "store")

    def __init__(
        self,
        store: CheckpointStore,
        invocation: str,
        loop: asyncio.AbstractEventLoop,
        changed: Callable[[int | None], None],
    ) -> None:
        self.store = store
        self.invocation = invocation
        self._loop = loop
        self._changed = changed
        self._in_flight = 0
        self._turn: asyncio.Lock | None = None  # made at the first write
        # Made only while someone waits: an Event is 0.8 KiB, and every pane has a writer.
        self._idle: asyncio.Event | None = None

    async def write(self, application: str, reference: str) -> int:
        """The generation written; DurableWriteError, CheckpointProblem or OSError if it
        is not durable."""
        return await self._in_turn(
            lambda: self.store.write(self.invocation, application, reference)
        )

    async def clear(self) -> None:
        def clear() -> None:
            self.store.clear(self.invocation)

        await self._in_turn(clear)

    def stop_telling(self) -> None:
        """Its launch is over: a write still in flight tells nobody. (The endpoint's
        callback is its own bound method: a cycle otherwise, left for the collector
        by every pane that ends.)"""
        self._changed = _tell_nobody

    async def idle(self) -> None:
        if not self._in_flight:
            return
        if self._idle is None:
            self._idle = asyncio.Event()
        await self._idle.wait()

    async def _in_turn(self, write: Callable[[], _Written]) -> _Written:
        self._in_flight += 1
        try:
            if self._turn is None:
                self._turn = asyncio.Lock()
            async with self._turn:
                written = await off_the_loop(self._loop, write)
                self._changed(written)
                return written
        finally:
            self._in_flight -= 1
            if not self._in_flight and self._idle is not None:
                self._idle.set()  # (its waiters hold it; the next wait makes another)
                self._idle = None
