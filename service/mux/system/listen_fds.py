"""The fds systemd hands a started service: LISTEN_FDS from fd 3, named by LISTEN_FDNAMES.

They are of two kinds. Sockets of mux.socket (socket activation), named after
the socket unit; and what muxd itself kept in the service manager's fd store
before it ended (FDSTORE=1 with FDNAME=, see mux.system.notify), named by muxd
with the prefix `KEPT`. Read once, at start, by `listen_fds`; each
part takes its own.
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

SD_LISTEN_FDS_START = 3

# The names muxd gives what it keeps in the fd store (lifecycle/fd_store.py).
KEPT = "kept-"
ATTACH_SOCKET = KEPT + "attach"


def pane_terminal(pane_id: int) -> str:
    return f"{KEPT}pane-{pane_id}"


def terminal_of(name: str) -> int | None:
    """The pane whose terminal `name` is (`pane_terminal`'s inverse); None if it is not one."""
    prefix = pane_terminal(0)[:-1]
    number = name[len(prefix) :] if name.startswith(prefix) else ""
    return int(number) if number.isdecimal() else None


def pane_endpoint(pane_id: int) -> str:
    return f"{KEPT}endpoint-{pane_id}"


def record_slot(slot: str) -> str:
    return f"{KEPT}record-{slot}"


def is_stored_name(name: str) -> bool:
    return name.startswith(KEPT)


@dataclass
class ListenFds:
    """What systemd handed over: socket-activation fds, and the fd store's by name
    (a name may hold several fds: a store kept twice under one name)."""

    activation: list[tuple[int, str]] = field(default_factory=list)
    stored: dict[str, list[int]] = field(default_factory=dict)

    def take(self, name: str) -> int | None:
        """The fd stored under `name`, now the caller's; None if there is none."""
        fds = self.stored.get(name)
        if not fds:
            return None
        fd = fds.pop(0)
        if not fds:
            del self.stored[name]
        return fd

    def leftovers(self) -> dict[str, list[int]]:
        """What no part took, to be closed and dropped from the store."""
        left, self.stored = self.stored, {}
        return left


def listen_fds(environ: Mapping[str, str] | None = None) -> ListenFds:
    """LISTEN_FDS for this process, every fd made close-on-exec; nothing when they were
    meant for another process (LISTEN_PID)."""
    env = os.environ if environ is None else environ
    found = ListenFds()
    try:
        if int(env.get("LISTEN_PID", "0")) != os.getpid():
            return found
        count = int(env.get("LISTEN_FDS", "0"))
    except ValueError:
        return found
    names = env.get("LISTEN_FDNAMES", "").split(":")
    for index, fd in enumerate(range(SD_LISTEN_FDS_START, SD_LISTEN_FDS_START + count)):
        try:
            os.set_inheritable(fd, False)
        except OSError:
            continue  # not open: nothing to take
        name = names[index] if index < len(names) else "unknown"
        if is_stored_name(name):
            found.stored.setdefault(name, []).append(fd)
        else:
            found.activation.append((fd, name))
    return found
