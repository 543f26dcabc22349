"""muxd's log on stderr: whether that is the systemd journal (which stamps each line
itself), and the logging set up for it."""

import logging
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


def log_to_stderr(level: str | int) -> None:
    """Log lines at `level` and above to stderr, stamped unless the journal stamps them."""
    stamp = "" if stderr_is_the_journal() else "%(asctime)s "
    logging.basicConfig(
        level=level, format=stamp + "%(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    # What the format does not show is not gathered for each line (the logging
    # HOWTO's "Optimization"): a spawn logs twice, and logging was 8% of muxd's time
    # spawning and killing panes (py-spy), the caller's frame lookup a part of it.
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
