"""The ssh side of one link: the master connection, and the commands run through it.

The master (`ssh -M -N`, mux.federation.ssh) is started in a session of its own,
without a terminal; its stderr is read all along (the last few KiB are kept),
since ssh says there why a login or a forward was refused. `ended` is set when
it exits: the link is down then.
"""

import asyncio
import contextlib
import logging
import socket
from collections.abc import Sequence
from pathlib import Path

from mux.federation.ssh import (
    Failure,
    LinkFailure,
    classify,
    forward_argv,
    last_line,
    master_argv,
    where_argv,
)
from mux.protocol.hosts import Where, WhereError, parse_where

log = logging.getLogger(__name__)

STDERR_KEPT = 8192
POLL_SECONDS = 0.01
STOP_SECONDS = 2.0
SSH_FAILED = 255  # ssh's exit status for its own failures; else the remote command's
COMMAND_NOT_FOUND = 127
TERM_AGAIN_SECONDS = 0.25


class SshMaster:
    def __init__(self, ssh: Sequence[str], destination: str, directory: Path, label: str) -> None:
        """`directory`: the host's runtime dir, where the control socket is; `label`:
        the host's name, for the log."""
        self._ssh = list(ssh)
        self._destination = destination
        self._dir = directory
        self.control = directory / "ssh"
        self._label = label
        self._process: asyncio.subprocess.Process | None = None
        self._stderr = bytearray()
        self._reader: asyncio.Task[None] | None = None
        self.ended = asyncio.Event()

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process is not None else None

    def stderr(self) -> str:
        """What ssh said last, with the host's runtime dir hidden (a private path)."""
        return self._stderr.decode(errors="replace").replace(str(self._dir), "<host dir>")

    def failure(self) -> Failure:
        return classify(self._destination, self.stderr())

    async def start(self) -> None:
        """Started and authenticated once its control socket answers; LinkFailure if
        ssh exits first."""
        argv = master_argv(self._ssh, self._destination, str(self.control))
        log.debug("host %s: %s", self._label, argv)
        self._process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # no terminal, no signal meant for muxd's group
        )
        self._reader = asyncio.get_running_loop().create_task(self._read_stderr(self._process))
        while not _answers(self.control):
            if self._process.returncode is not None or self.ended.is_set():
                await self._reader
                raise LinkFailure(self.failure())
            await asyncio.sleep(POLL_SECONDS)

    async def where(self, muxctl: str) -> Where:
        """Ask the satellite where its mux serves (starting it there if needed)."""
        argv = where_argv(self._ssh, self._destination, str(self.control), muxctl)
        status, out, err = await self._run(argv)
        err = err.replace(str(self._dir), "<host dir>")
        if status == SSH_FAILED:  # ssh's own failure: a login, a host key, the network
            raise LinkFailure(classify(self._destination, err))
        if status == COMMAND_NOT_FOUND:
            why = f"mux is not installed on {self._destination} (muxctl: command not found)"
            raise LinkFailure(Failure(why, False))
        if status != 0:
            why = f"muxctl where on {self._destination} failed (status {status}): {last_line(err)}"
            raise LinkFailure(Failure(why, False))
        try:
            return parse_where(out)
        except WhereError as e:
            log.warning("host %s: muxctl where printed %r", self._label, out[:500])
            why = f"muxctl where on {self._destination} answered oddly: {e}"
            raise LinkFailure(Failure(why, False)) from None

    async def forward(self, forwards: Sequence[tuple[str, str]]) -> None:
        """Forward each (local socket, remote socket) through the master."""
        argv = forward_argv(self._ssh, self._destination, str(self.control), forwards)
        status, _, err = await self._run(argv)
        if status != 0:
            raise LinkFailure(
                classify(self._destination, err.replace(str(self._dir), "<host dir>"))
            )

    async def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            await _end(process)
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader
            self._reader = None
        self.control.unlink(missing_ok=True)

    async def _read_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        while line := await process.stderr.readline():
            log.debug("host %s: ssh: %s", self._label, line.decode(errors="replace").rstrip())
            self._stderr += line
            del self._stderr[:-STDERR_KEPT]
        await process.wait()
        self.ended.set()

    async def _run(self, argv: list[str]) -> tuple[int, str, str]:
        log.debug("host %s: %s", self._label, argv)
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = await process.communicate()
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise
        assert process.returncode is not None
        return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


async def _end(process: asyncio.subprocess.Process) -> None:
    """SIGTERM, again every quarter second (ssh can miss one that comes just before it
    waits), SIGKILL after STOP_SECONDS."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STOP_SECONDS
    while process.returncode is None and loop.time() < deadline:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), TERM_AGAIN_SECONDS)
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


def _answers(path: Path) -> bool:
    if not path.is_socket():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True
