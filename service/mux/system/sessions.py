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


def kill_sessions(session_ids: Collection[int]) -> dict[int, int]:
    """SIGKILL every process left in each session, with one read of the process table
    (a read per session was quadratic: 2000 panes closed at once held the loop for
    tens of seconds); returns how many were signalled in each."""
    wanted = [sid for sid in session_ids if sid > 1]  # (0 would be the caller's own group)
    members = sessions_members(wanted)
    for pids in members.values():
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    if not os.path.isdir(_PROC):
        # No process table to read: at least each leader's own group.
        for sid in wanted:
            with contextlib.suppress(OSError):
                os.killpg(sid, signal.SIGKILL)
    return {sid: len(members.get(sid, ())) for sid in session_ids}
