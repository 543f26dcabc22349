"""Graceful upgrade: muxd re-executes itself in place and the panes never notice.

The pid stays the same (systemd's MainPID, the panes' parent). What must
survive the execve stays open across it: the PTY masters, the instance lock,
the attach socket; the panes' processes stay our children. The live state
goes to the new program in a memfd named on its command line (`--resume-from
FD`). If the exec fails, every fd is made close-on-exec again and the old
program goes on serving.
"""

import asyncio
import logging
import os
import subprocess
import sys
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, ValidationError

from mux.panes.exits import ExitWatcher
from mux.panes.handover import TableRecord

log = logging.getLogger(__name__)

HANDOVER_FORMAT = 1
RESUME_FLAG = "--resume-from"
PREFLIGHT_SECONDS = 30.0


class UpgradeError(Exception):
    pass


class Handover(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, ser_json_bytes="base64", val_json_bytes="base64"
    )

    format: int
    lock_fd: int
    attach_fd: int | None
    private_bus_pid: int | None
    table: TableRecord


async def preflight(argv: list[str], exits: ExitWatcher) -> None:
    """Does the program we are about to become start at all? Checked before anything
    is torn down, so that a broken installation leaves this muxd serving."""
    loop = asyncio.get_running_loop()
    try:
        process = subprocess.Popen(
            [*argv, "--check"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd="/",
        )
    except OSError as e:
        raise UpgradeError(f"the new muxd cannot be run: {e.strerror}") from None
    assert process.stderr is not None
    ended: asyncio.Future[int] = loop.create_future()
    exits.watch(process, ended.set_result)
    try:
        status = await asyncio.wait_for(ended, PREFLIGHT_SECONDS)
    except TimeoutError:
        process.kill()
        raise UpgradeError("the new muxd did not answer --check in time") from None
    errors = process.stderr.read().decode(errors="replace").strip().splitlines()
    process.stderr.close()
    if status != 0:
        raise UpgradeError(f"the new muxd does not start: {(errors or ['no output'])[-1]}")


def muxd_argv() -> list[str]:
    # -P: never import from the working directory, whatever it holds.
    return [sys.executable, "-P", "-m", "mux"]


def exec_with(handover: Handover, keep_fds: Iterable[int]) -> None:
    """Become the new muxd; returns only if the exec failed (after undoing)."""
    memfd = os.memfd_create("mux-handover", 0)  # inheritable on purpose
    try:
        os.write(memfd, handover.model_dump_json().encode())
        os.lseek(memfd, 0, os.SEEK_SET)
        kept = [fd for fd in keep_fds if fd >= 0]
        for fd in kept:
            os.set_inheritable(fd, True)
        try:
            argv = [*muxd_argv(), RESUME_FLAG, str(memfd)]
            log.info("upgrading: exec %s", " ".join(argv))
            sys.stdout.flush()
            sys.stderr.flush()
            os.execv(argv[0], argv)
        except OSError as e:
            for fd in kept:
                os.set_inheritable(fd, False)
            raise UpgradeError(f"exec of the new muxd failed: {e.strerror}") from None
    finally:
        os.close(memfd)


def read_handover(fd: int) -> Handover:
    try:
        with os.fdopen(fd, "rb") as f:
            handover = Handover.model_validate_json(f.read())
    except (OSError, ValueError, ValidationError) as e:
        raise UpgradeError(f"the previous muxd's state cannot be read: {e}") from None
    if handover.format != HANDOVER_FORMAT:
        raise UpgradeError(
            f"the previous muxd's state is format {handover.format}, "
            f"this muxd reads {HANDOVER_FORMAT}"
        )
    return handover
