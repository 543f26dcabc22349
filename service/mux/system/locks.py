"""One muxd per user: an flock on `<runtime>/muxd.lock`, with the holder's pid in it.

muxd holds the lock for its whole life. muxctl never takes it, not even
briefly to probe (that could make a starting muxd believe another one runs):
it reads the pid instead.
"""

import os
from typing import IO, TYPE_CHECKING

from mux.system.paths import Paths

if TYPE_CHECKING:
    from pathlib import Path


class AlreadyLocked(Exception):
    pass


def take_instance_lock(paths: Paths) -> IO[bytes]:
    """Lock and keep the returned file open for as long as this muxd runs."""
    message = f"another muxd is already running for this user ({paths.runtime})"
    return _hold(paths.lock_file, message)


def take_state_lock(paths: Paths) -> IO[bytes]:
    """One muxd per state directory too: two muxd with different runtime directories
    (XDG_RUNTIME_DIR set differently) would otherwise write the same session file."""
    paths.state.mkdir(mode=0o700, parents=True, exist_ok=True)
    message = (
        f"another muxd already uses the state directory {paths.state} "
        "(with another runtime directory); two would overwrite each other's session"
    )
    return _hold(paths.state / "muxd.lock", message)


def _hold(path: "Path", message: str) -> IO[bytes]:
    """An exclusive flock on `path`, with our pid written in it; AlreadyLocked(message)."""
    import fcntl  # muxd's alone: muxctl only reads the pid (holder_alive)

    lock = open(path, "ab")  # noqa: SIM115 (held for the process lifetime)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise AlreadyLocked(message) from None
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n".encode())
    lock.flush()
    return lock


def holder_alive(paths: Paths) -> bool:
    """Whether the muxd named in the lock file still runs (a best guess, for waiting)."""
    try:
        pid = int(paths.lock_file.read_text().strip() or "0")
    except (OSError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"mux" in f.read()
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:  # no /proc (macOS): is there such a process at all?
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
