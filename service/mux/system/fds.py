"""File descriptors inherited from whoever started muxd."""

import contextlib
import os


def make_inherited_fds_close_on_exec() -> None:
    """Mark every fd above 2 close-on-exec, so none can leak into a pane.

    Whatever started muxd (a shell, a terminal, systemd) may have left fds open
    without FD_CLOEXEC. Those mux wants to keep (socket activation) are used
    in-process; nothing needs them to cross an exec except a deliberate
    re-exec, which clears the flag itself on the fds it hands over.
    """
    try:
        names = os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd")
    except OSError:
        names = [str(fd) for fd in range(3, 1024)]
    for name in names:
        fd = int(name)
        if fd <= 2:
            continue
        # An OSError: closed already (the listing's own fd) or not an fd.
        with contextlib.suppress(OSError):
            os.set_inheritable(fd, False)
