"""After a crash: what a restarted muxd takes back from the service manager's fd store.

The record (mux.lifecycle.fd_store writes it) is a graceful upgrade's handover
(mux.lifecycle.upgrade.Handover) with less history, whose fd numbers mean
nothing any more: the fds come back by name in LISTEN_FDS. `readopted_state`
puts the two together into the handover this muxd resumes from, as after an
upgrade; the panes' programs, no longer our children, are re-adopted by
mux.panes.pane_handover.readopted. What was handed back and not taken
(a pane the record does not know, say) is closed and dropped from the store
(`drop_leftovers`); the programs whose terminals that hung up are ended before
the snapshot starts their panes again (`end_hung_up`).
"""

import asyncio
import contextlib
import logging
import os
import signal
import time
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError

from mux.lifecycle.upgrade import HANDOVER_FORMAT, Handover
from mux.panes.handover import PaneRecord
from mux.state.schema import Session
from mux.system.listen_fds import (
    ATTACH_SOCKET,
    ListenFds,
    pane_endpoint,
    pane_terminal,
    record_slot,
    terminal_of,
)
from mux.system.notify import Supervisor
from mux.system.proctree import start_ticks
from mux.system.record_slots import SLOT_NAMES, RecordSlots, read_latest

log = logging.getLogger(__name__)

CRASH_RECORD_FORMAT = 1
# How much of each pane's history the record keeps: it is rewritten each second
# while output moves, for every pane (the screen itself is always whole).
CRASH_HISTORY_BYTES = 16 * 1024
GONE_POLL_SECONDS = 0.02


class CrashRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int
    muxd_pid: int
    saved_at: float
    handover: Handover


def crash_record(handover: Handover) -> bytes:
    record = CrashRecord(
        format=CRASH_RECORD_FORMAT, muxd_pid=os.getpid(), saved_at=time.time(), handover=handover
    )
    return record.model_dump_json().encode()


@dataclass(frozen=True)
class Readopted:
    """What a crashed muxd left: the handover to resume from, and the record's slots
    (still in the store: the new muxd goes on writing them)."""

    handover: Handover
    slots: RecordSlots


def readopted_state(inherited: ListenFds, lock_fds: tuple[int, int]) -> Readopted | None:
    """The handover to resume from after a crash, with the fds systemd handed back in
    place; None when there is no intact record (a cold start: the snapshot restores)."""
    slots = [inherited.take(record_slot(s)) for s in SLOT_NAMES]
    present = [fd for fd in slots if fd is not None]
    latest = read_latest(present)
    if latest is None or len(present) != len(slots):
        for fd in present:
            os.close(fd)
        if present:
            log.error(
                "the re-adoption record kept by systemd is damaged: starting from the snapshot"
            )
        return None
    try:
        record = CrashRecord.model_validate_json(latest[0])
    except (ValueError, ValidationError) as e:
        log.error("the re-adoption record cannot be read (%s): starting from the snapshot", e)
        record = None
    if record is None or not _readable(record):
        for fd in present:
            os.close(fd)
        return None
    handover = record.handover
    attach_fd = inherited.take(ATTACH_SOCKET)
    table = handover.table.model_copy(
        update={"panes": [_with_fds(pane, inherited) for pane in handover.table.panes], "reap": []}
    )
    log.info(
        "muxd %d ended without a stop; re-adopting %d of its %d panes (record of %.1f s before)",
        record.muxd_pid,
        sum(pane.master_fd is not None for pane in table.panes),
        len(table.panes),
        max(0.0, time.time() - record.saved_at),
    )
    resumed = handover.model_copy(
        update={
            "table": table,
            # The upgrades this service went through (the record counts the next one).
            "generation": max(0, handover.generation - 1),
            "lock_fd": lock_fds[0],
            "state_lock_fd": lock_fds[1],
            "attach_fd": attach_fd,
            "attach_owned_path": handover.attach_owned_path if attach_fd is not None else None,
            # It ran in mux.service's cgroup, which systemd ended with the crash.
            "private_bus_pid": None,
        }
    )
    return Readopted(resumed, RecordSlots((present[0], present[1]), latest[1]))


def _readable(record: CrashRecord) -> bool:
    if record.format == CRASH_RECORD_FORMAT and record.handover.format == HANDOVER_FORMAT:
        return True
    log.error("the re-adoption record is of another format: starting from the snapshot")
    return False


def _with_fds(pane: PaneRecord, inherited: ListenFds) -> PaneRecord:
    master = inherited.take(pane_terminal(pane.id))
    endpoint = pane.endpoint
    if endpoint is not None:
        fd = inherited.take(pane_endpoint(pane.id))
        endpoint = endpoint.model_copy(update={"fd": fd}) if fd is not None else None
    return pane.model_copy(update={"master_fd": master, "endpoint": endpoint})


def drop_leftovers(inherited: ListenFds, supervisor: Supervisor) -> set[int]:
    """Close what the store handed back and no part took, and drop it from the store.
    Returns the panes whose terminal this hung up (with no record, say)."""
    hung_up: set[int] = set()
    for name, fds in inherited.leftovers().items():
        log.info("the fd store kept %s, which nothing here knows: closed", name)
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        supervisor.remove_fds(name)
        if (pane_id := terminal_of(name)) is not None:
            hung_up.add(pane_id)
    return hung_up


async def end_hung_up(session: Session, pane_ids: set[int], grace: float) -> None:
    """End the programs of the snapshot's panes `pane_ids`, whose terminals were just
    hung up: `grace` seconds to go by themselves, as at a stop, then SIGKILL. The
    snapshot restores those panes next, which it refuses to do while the program
    it would start again still runs."""
    programs = {
        (pane.pid, pane.start_ticks)
        for pane in session.panes
        if pane.id in pane_ids and pane.pid is not None and pane.start_ticks is not None
    }
    running = await _until_gone(programs, grace)
    for pid, _ in running:
        log.warning("pid %d outlived the hang-up of its terminal: killed", pid)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    await _until_gone(running, grace)


async def _until_gone(programs: set[tuple[int, int]], seconds: float) -> set[tuple[int, int]]:
    """Wait up to `seconds` for the (pid, start time) `programs` to end; those that run on."""
    deadline = time.monotonic() + seconds
    while True:
        running = {p for p in programs if start_ticks(p[0]) == p[1]}
        if not running or time.monotonic() >= deadline:
            return running
        await asyncio.sleep(GONE_POLL_SECONDS)
