"""Starting a program on a new PTY: new session, controlling terminal, size, cwd, env.

Every check that can fail for a reason a person can fix (missing program,
missing directory, permissions) happens before the process is created, so the
error can say exactly what was wrong; the messages name only what the client
gave us.

On Linux the child is created with posix_spawn (vfork-fast, no Python code in
the child): POSIX_SPAWN_SETSID makes it a session leader before the file
actions run, so opening the PTY's slave as fd 0 makes it the controlling
terminal. posix_spawn has no chdir, so the parent changes its own working
directory around the call; that is safe because no other thread of the service
uses a relative path (the snapshot writer's paths are all absolute).
Elsewhere, subprocess with a preexec_fn that issues TIOCSCTTY.
"""

import contextlib
import fcntl
import os
import resource
import signal
import stat
import struct
import subprocess
import sys
import termios
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mux.protocol.errors import SpawnFailed
from mux.protocol.names import EXIT_STATUS_NOT_STARTED, EXIT_STATUS_UNKNOWN
from mux.system import proctree
from mux.system.open_files import SERVICE_OPEN_FILES


def set_window_size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def check_directory(cwd: str) -> None:
    try:
        st = os.stat(cwd)
    except FileNotFoundError:
        raise SpawnFailed(f"the directory {cwd} does not exist") from None
    except PermissionError:
        raise SpawnFailed(f"the directory {cwd} cannot be reached (permission denied)") from None
    except OSError:
        raise SpawnFailed(f"the directory {cwd} cannot be used") from None
    if not stat.S_ISDIR(st.st_mode):
        raise SpawnFailed(f"{cwd} is not a directory")
    if not os.access(cwd, os.X_OK):
        raise SpawnFailed(f"the directory {cwd} cannot be entered (permission denied)")


def _is_program(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def resolve_program(name: str, *, cwd: str, path: str | None) -> str:
    """The absolute path of the program `name` names, found as execvp finds it.

    Relative names and PATH entries are taken from the pane's directory, not
    the service's; ".." is left to the kernel (it follows symlinks, text does not).
    """
    if "/" in name:
        candidate = os.path.join(cwd, name)
        if not os.path.exists(candidate):
            raise SpawnFailed(f"the program {name} does not exist")
        if os.path.isdir(candidate):
            raise SpawnFailed(f"{name} is a directory, not a program")
        if not os.access(candidate, os.X_OK):
            raise SpawnFailed(f"the program {name} is not executable (permission denied)")
        return candidate
    denied = False
    for entry in (os.defpath if path is None else path).split(os.pathsep):
        candidate = os.path.join(cwd, entry or ".", name)  # an empty entry is "."
        if _is_program(candidate):
            return candidate
        denied = denied or (os.path.isfile(candidate) and not os.access(candidate, os.X_OK))
    if denied:
        raise SpawnFailed(f"the program '{name}' is not executable (permission denied)")
    raise SpawnFailed(f"the program '{name}' was not found in PATH")


def _take_controlling_terminal() -> None:
    # Runs in the child after setsid() and after the slave became fd 0.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    limits = SERVICE_OPEN_FILES.for_children()
    if limits is not None:
        resource.setrlimit(resource.RLIMIT_NOFILE, limits)


def _give_back_open_files_limit(pid: int) -> None:
    """The program gets the open-files limit muxd was started with. posix_spawn sets
    no limits, so this comes right after the exec: the program's first instants (a
    shell's start-up) may still see muxd's, before it can have opened many files;
    lowering muxd's own around the spawn instead would fail the snapshot writer's
    files in that moment once hundreds of panes hold the low numbers."""
    limits = SERVICE_OPEN_FILES.for_children()
    if limits is not None:
        with contextlib.suppress(OSError):  # gone already
            resource.prlimit(pid, resource.RLIMIT_NOFILE, limits)


# Dispositions a program must not inherit: Python ignores SIGPIPE and SIGXFSZ,
# and an ignored signal stays ignored across exec.
_DEFAULT_SIGNALS = frozenset(signal.Signals) - {signal.SIGKILL, signal.SIGSTOP}


class ChildProcess:
    """A child we reap ourselves; `returncode` is the exit code, or minus the signal."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return self.returncode
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


class NoProcess:
    """The process of a pane that has none: one that could not be restored holds its
    place (mux.panes.placeholder). Pid 0 names no process; nothing signals, reaps or
    waits for it."""

    pid = 0
    returncode: int | None = EXIT_STATUS_NOT_STARTED

    def poll(self) -> int | None:
        return self.returncode


class ForeignProcess:
    """A pane's program that is not our child: a restarted muxd re-adopted it after
    a crash (its parent is now the service manager, which reaps it). Its exit is
    seen (the exit watcher's pidfd wakes `poll`), its status never: `returncode`
    is then EXIT_STATUS_UNKNOWN."""

    def __init__(self, pid: int, start_ticks: int) -> None:
        self.pid = pid
        self._start_ticks = start_ticks
        self.returncode: int | None = None

    @classmethod
    def adopt(cls, pid: int, start_ticks: int | None) -> "ForeignProcess | None":
        """The process `pid` if it is still the one that started at `start_ticks`."""
        if start_ticks is None or proctree.start_ticks(pid) != start_ticks:
            return None
        return cls(pid, start_ticks)

    def poll(self) -> int | None:
        # Ended, or a zombie, or its pid another process's: start_ticks tells all three.
        if self.returncode is None and proctree.start_ticks(self.pid) != self._start_ticks:
            self.returncode = EXIT_STATUS_UNKNOWN
        return self.returncode


@dataclass(frozen=True)
class StartedProcess:
    process: "ChildProcess | subprocess.Popen[bytes]"
    master_fd: int


def _spawn_failed(argv0: str, error: OSError) -> SpawnFailed:
    if isinstance(error, PermissionError):
        reason = "permission denied"
    elif isinstance(error, FileNotFoundError):
        reason = "the program or its interpreter was not found"
    elif error.errno:
        reason = os.strerror(error.errno).lower()
    else:
        reason = "unknown reason"
    return SpawnFailed(f"the program {argv0} could not be started ({reason})")


def _posix_spawn_on(
    slave_path: str, program: str, argv: Sequence[str], env: Mapping[str, str], cwd: str
) -> ChildProcess:
    # Every fd of the service is close-on-exec (PEP 446, and the start-up sweep
    # in mux.system.fds), so only these three reach the program.
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, slave_path, os.O_RDWR, 0),
        (os.POSIX_SPAWN_DUP2, 0, 1),
        (os.POSIX_SPAWN_DUP2, 0, 2),
    ]
    here = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            os.chdir(cwd)
        except OSError:
            raise SpawnFailed(f"the directory {cwd} cannot be entered") from None
        pid = os.posix_spawn(
            program,
            list(argv),
            dict(env),
            file_actions=actions,
            setsid=True,
            setsigmask=(),
            setsigdef=_DEFAULT_SIGNALS,
        )
    finally:
        os.fchdir(here)
        os.close(here)
    _give_back_open_files_limit(pid)
    return ChildProcess(pid)


def _popen_on(
    slave: int, program: str, argv: Sequence[str], env: Mapping[str, str], cwd: str
) -> "subprocess.Popen[bytes]":
    # preexec_fn is safe here: off Linux the service runs no other thread
    # (mux.state.autosaver writes on the loop there).
    return subprocess.Popen(
        list(argv),
        executable=program,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
        preexec_fn=_take_controlling_terminal,  # noqa: PLW1509
        close_fds=True,
    )


def start_on_pty(
    program: str,
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    rows: int,
    cols: int,
) -> StartedProcess:
    """Start `program` as the leader of a new session on a new PTY.

    The master is returned non-blocking and close-on-exec. With subprocess, the
    Popen object must be kept until the process is reaped, or subprocess's own
    cleanup would reap it behind our back.
    """
    master, slave = os.openpty()  # both non-inheritable
    try:
        set_window_size(slave, rows, cols)
        os.set_blocking(master, False)
        process: ChildProcess | subprocess.Popen[bytes]
        if sys.platform == "linux":
            process = _posix_spawn_on(os.ttyname(slave), program, argv, env, cwd)
        else:
            process = _popen_on(slave, program, argv, env, cwd)
    except OSError as e:
        os.close(master)
        raise _spawn_failed(argv[0], e) from None
    except subprocess.SubprocessError:
        os.close(master)
        raise SpawnFailed(f"the program {argv[0]} could not be given its terminal") from None
    except SpawnFailed:
        os.close(master)
        raise
    finally:
        os.close(slave)
    return StartedProcess(process=process, master_fd=master)
