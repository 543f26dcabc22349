"""Graceful upgrade: muxd re-executes itself in place and the panes never notice.

The pid stays the same (systemd's MainPID, the panes' parent). What must
survive the execve stays open across it: the PTY masters, the instance lock,
the attach socket; the panes' processes stay our children. The live state
goes to the new program in a memfd named on its command line (`--resume-from
FD`). If the exec fails, every fd is made close-on-exec again and the old
program goes on serving.
"""

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from mux.federation.ledger import RelayedRecord
from mux.panes.exits import ExitWatcher
from mux.panes.handover import TableRecord
from mux.protocol.exit_status import EX_CONFIG
from mux.state.schema import PaneSnapshot

# Re-exported until the daemon and the upgrader import it from mux.system.muxd_command.
from mux.system.muxd_command import muxd_argv

log = logging.getLogger(__name__)

# Blocked from just before the exec until the new program has handlers for them:
# a SIGTERM in between would otherwise kill it without a clean stop.
BLOCKED_ACROSS_EXEC = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}

HANDOVER_FORMAT = 1
RESUME_FLAG = "--resume-from"
CHECK_HANDOVER_FLAG = "--check-handover"
# Below the 25 s that gdbus, busctl and libdbus wait for a reply by default.
PREFLIGHT_SECONDS = 20.0


class UpgradeError(Exception):
    pass


class KeptPane(BaseModel):
    """A pane of the last session that could not be restored, kept for repair."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pane: PaneSnapshot
    window: int
    reason: str


class Handover(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, ser_json_bytes="base64", val_json_bytes="base64"
    )

    format: int
    generation: int  # how many upgrades this service has been through
    snapshot_generation: int  # the last snapshot written
    lock_fd: int
    state_lock_fd: int | None = None  # absent from a muxd before the state-directory lock
    attach_fd: int | None
    attach_owned_path: str | None  # where muxd bound it itself, to remove at stop
    private_bus_pid: int | None
    table: TableRecord
    # What the session keeper knows of the last session (ListRestoreProblems, and
    # whether saving is off because the file on disk could not be read).
    unrestored: list[KeptPane] = []
    session_problem: str = ""
    saving_disabled: bool = False
    # The hub's id towards its satellites and the spawns it relayed (docs/federation.md).
    hub_id: bytes = b""
    relayed: list[RelayedRecord] = []
    # The open-files limit (soft, hard) the panes' programs get, when muxd raised its
    # own (mux.system.open_files): the one the first muxd was started with.
    children_open_files: tuple[int, int] | None = None


async def preflight(argv: list[str], exits: ExitWatcher, handover_json: str) -> None:
    """Does the program we are about to become start, and does it read the state it
    would be given? Checked before anything is torn down, so that a broken
    installation, a configuration that no longer loads or a handover format it
    does not know leaves this muxd serving."""
    loop = asyncio.get_running_loop()
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as errors:
        given.write(handover_json.encode())
        given.seek(0)
        try:
            process = subprocess.Popen(
                [*argv, CHECK_HANDOVER_FLAG],
                stdin=given,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                cwd="/",
            )
        except OSError as e:
            raise UpgradeError(f"the new muxd cannot be run ({e.strerror})") from None
        ended: asyncio.Future[int] = loop.create_future()

        def exited(status: int) -> None:
            if not ended.done():  # not after a timeout gave up on it
                ended.set_result(status)

        exits.watch(process, exited)
        try:
            status = await asyncio.wait_for(ended, PREFLIGHT_SECONDS)
        except TimeoutError:
            process.kill()
            raise UpgradeError("the new muxd did not answer its check in time") from None
        errors.seek(0)
        detail = errors.read().decode(errors="replace").strip()
    if status == 0:
        return
    log.error("the new muxd's check failed (status %d): %s", status, detail)
    if status == EX_CONFIG:
        raise UpgradeError("the configuration no longer loads ('muxctl doctor' says why)")
    raise UpgradeError(f"the new muxd does not start (status {status}; the log says why)")


def exec_with(handover: Handover, keep_fds: Iterable[int]) -> None:
    """Become the new muxd; returns only if the exec failed (after undoing)."""
    memfd = _anonymous_file()
    try:
        os.write(memfd, handover.model_dump_json().encode())
        os.lseek(memfd, 0, os.SEEK_SET)
        kept = [fd for fd in keep_fds if fd >= 0]
        for fd in kept:
            os.set_inheritable(fd, True)
        signal.pthread_sigmask(signal.SIG_BLOCK, BLOCKED_ACROSS_EXEC)
        try:
            argv = [*muxd_argv(), RESUME_FLAG, str(memfd)]
            log.info("upgrading: exec %s", " ".join(argv))
            sys.stdout.flush()
            sys.stderr.flush()
            os.execv(argv[0], argv)
        except OSError as e:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, BLOCKED_ACROSS_EXEC)
            for fd in kept:
                os.set_inheritable(fd, False)
            raise UpgradeError(f"exec of the new muxd failed: {e.strerror}") from None
    finally:
        os.close(memfd)


def _anonymous_file() -> int:
    """An inheritable fd on a file no one else can open: a memfd, or an unlinked temp file."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("mux-handover", 0)
    fd, path = tempfile.mkstemp(prefix="mux-handover-")
    os.unlink(path)
    os.set_inheritable(fd, True)
    return fd


def write_outcome(path: Path, generation: int, error: str) -> None:
    """What `muxctl upgrade` reads to know whether the exec happened (error empty)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    outcome = {"generation": generation, "error": error, "at": time.time()}
    temporary.write_text(json.dumps(outcome))
    os.replace(temporary, path)


def read_handover(fd: int) -> Handover:
    try:
        with os.fdopen(fd, "rb") as f:
            return parse_handover(f.read())
    except OSError as e:
        raise UpgradeError(f"the previous muxd's state cannot be read: {e.strerror}") from None


def parse_handover(data: bytes) -> Handover:
    try:
        handover = Handover.model_validate_json(data)
    except (ValueError, ValidationError) as e:
        raise UpgradeError(f"the previous muxd's state cannot be read: {e}") from None
    if handover.format != HANDOVER_FORMAT:
        raise UpgradeError(
            f"the previous muxd's state is format {handover.format}, "
            f"this muxd reads {HANDOVER_FORMAT}"
        )
    return handover
