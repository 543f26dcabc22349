"""Whether the peer on a launch's endpoint is the launch's current execution owner.

docs/resurrection-protocol.md#ownership: the peer's pid (SO_PEERCRED / LOCAL_PEERPID)
and uid (the service's).
An explicit launch accepts exactly the spawned pid. A shell launch accepts
only an immediate child of the shell that is in the terminal's foreground
process group: the program the user just started at the prompt, not a
background job, not a grandchild (a wrapper's child is not adopted). Failing
to find any of this out never grants ownership.
"""

import os
from collections.abc import Callable

from mux.protocol.resurrection import ErrorCode, Violation
from mux.system.proctree import ProcessInfo, process_info


def verify_owner(
    *,
    peer_pid: int | None,
    peer_uid: int,
    shell_launch: bool,
    launch_pid: int,
    foreground_group: Callable[[], int | None],
    inspect: Callable[[int], ProcessInfo | None] = process_info,
) -> None:
    """Raises Violation with the code to answer; returns when the peer owns the launch."""
    if peer_uid != os.getuid():
        raise Violation(ErrorCode.INVALID_HANDSHAKE, "a peer of another user")
    if peer_pid is None or peer_pid <= 0:
        raise Violation(ErrorCode.OWNERSHIP_VERIFICATION_UNAVAILABLE, "the peer's pid is unknown")
    if not shell_launch:
        if peer_pid != launch_pid:
            raise Violation(ErrorCode.OWNERSHIP_REJECTED, "not the launched process")
        return
    info = inspect(peer_pid)
    group = foreground_group()
    if info is None or group is None:
        raise Violation(
            ErrorCode.OWNERSHIP_VERIFICATION_UNAVAILABLE, "the peer or the terminal cannot be read"
        )
    if info.ppid != launch_pid:
        raise Violation(ErrorCode.OWNERSHIP_REJECTED, "not a child of the launched shell")
    if info.pgrp != group:
        raise Violation(ErrorCode.OWNERSHIP_REJECTED, "not in the terminal's foreground job")
