"""Whether muxd's stderr goes to the systemd journal (which stamps each line itself)."""

import os
import sys


def stderr_is_the_journal() -> bool:
    """JOURNAL_STREAM names the journal's socket as dev:inode (systemd.exec(5))."""
    try:
        device, inode = (int(part) for part in os.environ["JOURNAL_STREAM"].split(":"))
        st = os.fstat(sys.stderr.fileno())
    except (KeyError, ValueError, OSError):
        return False
    return (st.st_dev, st.st_ino) == (device, inode)
