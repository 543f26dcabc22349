"""Reaping children as they exit, without threads and without zombies.

Linux: one pidfd per child, readable when it exits. Elsewhere (macOS): a
SIGCHLD handler that polls the watched children.
"""

import asyncio
import functools
import os
import signal
from collections.abc import Callable
from typing import Protocol

from mux.system.shared_reader import SharedReader, in_turn

ExitCallback = Callable[[int], None]  # receives the status: exit code or -signal


class Reapable(Protocol):
    """A child process: subprocess.Popen or mux.panes.process.ChildProcess."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...


def _pidfd_works() -> bool:
    """pidfd_open exists since Linux 5.3; seccomp filters may still refuse it."""
    if not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


class ExitWatcher:
    def __init__(
        self, loop: asyncio.AbstractEventLoop, shared_reader: SharedReader | None = None
    ) -> None:
        """`shared_reader`: where the pidfds are watched (None: on the loop itself)."""
        self._loop = loop
        self._readers = in_turn(loop, shared_reader)
        self._watched: dict[int, tuple[Reapable, ExitCallback, int | None]] = {}
        self._deferred: list[tuple[Reapable, ExitCallback]] = []
        self._sigchld_installed = False
        self._use_pidfd: bool | None = None  # found out at the first watch
        self._paused = False  # (an upgrade leaving the bus: `pause`)

    def _pidfds(self) -> bool:
        if self._use_pidfd is None:
            self._use_pidfd = _pidfd_works()
            if not self._use_pidfd:
                self._install_sigchld()
        return self._use_pidfd

    def _install_sigchld(self) -> None:
        if not self._sigchld_installed:
            self._loop.add_signal_handler(signal.SIGCHLD, self._poll_all)
            self._sigchld_installed = True

    def watch(self, process: Reapable, callback: ExitCallback) -> None:
        pidfd: int | None = None
        if self._pidfds():
            try:
                pidfd = os.pidfd_open(process.pid)
            except OSError:  # out of fds, say: fall back to SIGCHLD for this one
                self._install_sigchld()
            else:
                if not self._paused:
                    self._readers.add_reader(pidfd, functools.partial(self._poll_one, process.pid))
        self._watched[process.pid] = (process, callback, pidfd)
        if pidfd is None:
            # It may have exited before the handler knew of it. Checked on the
            # next turn of the loop, so a method reply goes out before the exit.
            self._loop.call_soon(self._poll_one, process.pid)

    def watch_later(self, process: Reapable, callback: ExitCallback) -> None:
        """Watch `process` from `watch_deferred` on (a resumed table's programs: their
        exits are reported once every observer is in place)."""
        self._deferred.append((process, callback))

    def watch_deferred(self) -> None:
        deferred, self._deferred = self._deferred, []
        for process, callback in deferred:
            self.watch(process, callback)

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self) -> None:
        """No exit is reaped or reported until `resume`. An upgrade pauses before it
        leaves the bus: an exit reported after that would reach no one, and the next
        muxd, handed the pane as exited, would not report it again; paused, the pane is
        handed over running and the next muxd reaps and reports it."""
        if self._paused:
            return
        self._paused = True
        for _, _, pidfd in self._watched.values():
            if pidfd is not None:
                self._readers.remove_reader(pidfd)

    def resume(self) -> None:
        """The upgrade failed: exits are reaped again, those of the pause at once."""
        if not self._paused:
            return
        self._paused = False
        for pid, (_, _, pidfd) in self._watched.items():
            if pidfd is not None:
                self._readers.add_reader(pidfd, functools.partial(self._poll_one, pid))
        self._loop.call_soon(self._poll_all)

    def _poll_one(self, pid: int) -> None:
        entry = self._watched.get(pid)
        if entry is None or self._paused:
            return
        process, callback, pidfd = entry
        status = process.poll()  # waitpid(WNOHANG); negative for a signal
        if status is None:
            return
        del self._watched[pid]
        if pidfd is not None:
            self._readers.remove_reader(pidfd)
            os.close(pidfd)
        callback(status)

    def _poll_all(self) -> None:
        for pid in list(self._watched):
            self._poll_one(pid)

    def close(self) -> None:
        for _, _, pidfd in self._watched.values():
            if pidfd is not None:
                self._readers.remove_reader(pidfd)
                os.close(pidfd)
        self._watched.clear()
