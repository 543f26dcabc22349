"""Starting a program on a new PTY: new session, controlling terminal, size, cwd, env.

Every check that can fail for a reason a person can fix (missing program,
missing directory, permissions) happens before the fork, so the error can say
exactly what was wrong; the messages name only what the client gave us.
"""

import fcntl
import os
import shutil
import stat
import struct
import subprocess
import termios
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mux.protocol.errors import SpawnFailed


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


def resolve_program(name: str, *, cwd: str, path: str | None) -> str:
    """The absolute path of the program `name` names, as execvp would find it."""
    if "/" in name:
        candidate = os.path.normpath(os.path.join(cwd, name))
        if not os.path.exists(candidate):
            raise SpawnFailed(f"the program {name} does not exist")
    else:
        found = shutil.which(name, path=path if path is not None else os.defpath)
        if found is None:
            raise SpawnFailed(f"the program '{name}' was not found in PATH")
        candidate = os.path.abspath(os.path.join(cwd, found))
    if os.path.isdir(candidate):
        raise SpawnFailed(f"{name} is a directory, not a program")
    if not os.access(candidate, os.X_OK):
        raise SpawnFailed(f"the program {name} is not executable (permission denied)")
    return candidate


def _take_controlling_terminal() -> None:
    # Runs in the child after setsid() and after the slave became fd 0.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@dataclass(frozen=True)
class StartedProcess:
    process: "subprocess.Popen[bytes]"
    master_fd: int


def start_on_pty(
    program: str,
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    rows: int,
    cols: int,
) -> StartedProcess:
    """Fork and exec `program` as the leader of a new session on a new PTY.

    The master is returned non-blocking and close-on-exec; no other fd of the
    service reaches the child (close_fds). The Popen object must be kept until
    the process is reaped, or subprocess's own cleanup would reap it behind our
    back.
    """
    master, slave = os.openpty()  # both non-inheritable
    try:
        set_window_size(slave, rows, cols)
        os.set_blocking(master, False)
        # preexec_fn is safe here: the service runs no threads of its own.
        process = subprocess.Popen(
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
    except PermissionError:
        os.close(master)
        raise SpawnFailed(
            f"the program {argv[0]} could not be started (permission denied)"
        ) from None
    except FileNotFoundError:
        os.close(master)
        raise SpawnFailed(f"the program {argv[0]} could not be started (not found)") from None
    except OSError as e:
        os.close(master)
        reason = os.strerror(e.errno).lower() if e.errno else "unknown reason"
        raise SpawnFailed(f"the program {argv[0]} could not be started ({reason})") from None
    except subprocess.SubprocessError:
        os.close(master)
        raise SpawnFailed(f"the program {argv[0]} could not be given its terminal") from None
    finally:
        os.close(slave)
    return StartedProcess(process=process, master_fd=master)
