"""Starting muxd in the background when neither a bus nor systemd will: the way a tmux
client starts its server (docs/muxctl.md#starting-the-service)."""

import os
from typing import TYPE_CHECKING

from mux.protocol.environment import without_service_variables
from mux.protocol.exit_status import EX_ALREADY_RUNNING
from mux.system.locks import holder_alive
from mux.system.muxd_command import muxd_argv
from mux.system.paths import Paths, RuntimeDirError, ensure_runtime_dir
from muxctl.errors import CtlError

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

MAX_STARTS = 5
LOG_ROTATE_BYTES = 1 << 20


class Starter:
    """A muxd this muxctl started, and where its log begins."""

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        try:
            ensure_runtime_dir(paths)
        except RuntimeDirError as e:
            raise CtlError(f"cannot start muxd: {e}") from None
        except OSError as e:
            raise CtlError(f"cannot create {paths.runtime}: {e.strerror}") from None
        _rotate(paths.daemon_log)
        log_fd = os.open(paths.daemon_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            self.log_offset = os.fstat(log_fd).st_size
            self.process = _spawn_daemon(log_fd)
        finally:
            os.close(log_fd)
        self.starts = 1

    def check_alive(self) -> None:
        """Raise if our muxd died — unless another muxd holds the instance lock.

        Several muxctl calls may start muxd at once; all but one muxd then exit
        ("already running"), and their muxctl waits for the winner instead.
        """
        if self.process.poll() is None or holder_alive(self.paths):
            return
        if self.process.returncode == EX_ALREADY_RUNNING and self.starts < MAX_STARTS:
            # The muxd that held the lock is gone without serving: start another.
            log_fd = os.open(self.paths.daemon_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                self.process = _spawn_daemon(log_fd)
            finally:
                os.close(log_fd)
            self.starts += 1
            return
        raise self._failure()

    def _failure(self) -> CtlError:
        lines: list[str] = []
        try:
            with open(self.paths.daemon_log, "rb") as log:
                log.seek(self.log_offset)
                text = log.read(8192).decode(errors="replace")
            lines = [line.strip() for line in text.splitlines() if line.strip()]
        except OSError:
            pass
        detail = (": " + "; ".join(lines[-5:])) if lines else ""
        status = self.process.returncode
        return CtlError(f"muxd exited with status {status} while starting{detail}")


def _rotate(log: "Path") -> None:
    """Keep the background muxd's log from growing without end: one old copy."""
    try:
        if log.stat().st_size > LOG_ROTATE_BYTES:
            log.replace(log.with_name(log.name + ".1"))
    except OSError:
        pass


def _spawn_daemon(log_fd: int) -> "subprocess.Popen[bytes]":
    """muxd in the background, detached from this terminal, logging to the runtime dir."""
    import subprocess  # only when muxctl starts muxd: it costs every call ~5 ms otherwise

    return subprocess.Popen(
        muxd_argv(),
        # muxctl may run under a supervisor of its own (a terminal's systemd
        # scope, say): its notify socket and journal stream are not muxd's.
        env=without_service_variables(os.environ),
        stdin=subprocess.DEVNULL,
        stdout=log_fd,
        stderr=log_fd,
        cwd="/",
        start_new_session=True,
        close_fds=True,
    )
