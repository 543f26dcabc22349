"""The processes of a pane's session, for ending them all when the pane is closed.

A pane's program leads its own session (its pid is the session id). Jobs it
started keep that session even in their own process groups, so a foreground
job that ignores SIGHUP is still found here after its shell is gone. A
process that called setsid() itself has left on purpose and is not touched.
"""

import contextlib
import os
import signal
from collections.abc import Collection

from mux.system.proctree import is_gone, read_all_stats

_PROC = "/proc"


def sessions_members(session_ids: Collection[int]) -> dict[int, list[int]]:
    """For each session id, its live (not zombie) pids. Linux; elsewhere none are known."""
    wanted = {sid for sid in session_ids if sid > 1 and sid != os.getsid(0)}
    found: dict[int, list[int]] = {sid: [] for sid in session_ids}
    if not wanted or not os.path.isdir(_PROC):
        return found
    for pid, stat in read_all_stats().items():
        if stat.session in wanted and not is_gone(stat):
            found[stat.session].append(pid)
    return found


def kill_session(session_id: int) -> int:
    """SIGKILL every process left in the session; returns how many were signalled."""
    if session_id <= 1:
        return 0  # no session of a pane's (0 would be the caller's own group)
    members = sessions_members([session_id])[session_id]
    for pid in members:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    if not os.path.isdir(_PROC):
        # No process table to read: at least the leader's own group.
        with contextlib.suppress(OSError):
            os.killpg(session_id, signal.SIGKILL)
    return len(members)
