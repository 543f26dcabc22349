"""Opening the terminal a connected client shows a pane on, to write to it directly
(docs/attach-protocol.md#the-terminal-handed-over).

The client names its own descriptor; the process is the one the kernel vouched
for at connect time (SO_PEERCRED), and the kernel checks again that we may look
at its descriptors (the same user). Opening `/proc/<pid>/fd/<n>` gives the
service an open file of its own on the same terminal: its own non-blocking
flag, so a slow or stopped terminal can never block muxd and muxd changes
nothing the client's descriptor is set to. Only a character device that is a
terminal is kept; O_NOCTTY keeps it from ever becoming muxd's controlling
terminal. Where there is no /proc (macOS) nothing is opened and the client
relays the output as before.
"""

import contextlib
import os
import stat


class NoPeerTerminal(Exception):
    """The client's descriptor could not be opened as a terminal; says why."""


def open_peer_terminal(pid: int, fd: int) -> int:
    """A new non-blocking, write-only descriptor of the terminal process `pid` holds
    as `fd`; NoPeerTerminal if it is not a terminal or cannot be opened."""
    path = f"/proc/{pid}/fd/{fd}"
    try:
        # Before opening: opening some devices does something (a tape rewinds).
        if not stat.S_ISCHR(os.stat(path).st_mode):
            raise NoPeerTerminal(f"descriptor {fd} of the client is not a terminal")
        opened = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise NoPeerTerminal(f"descriptor {fd} of the client: {e.strerror}") from None
    if not os.isatty(opened):
        with contextlib.suppress(OSError):
            os.close(opened)
        raise NoPeerTerminal(f"descriptor {fd} of the client is not a terminal")
    return opened
