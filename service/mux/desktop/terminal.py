"""Opening a terminal attached to a pane: what a notification's or a search result's
activation does (docs/desktop.md#opening-a-pane).

The terminal is `terminal_command` from the configuration, an argv prefix, or
the first of the usual ones found on PATH; `muxctl attach ID` follows it as
separate arguments. Nothing is ever given to a shell.
"""

import asyncio
import contextlib
import logging
import os
import shutil
from collections.abc import Callable, Sequence

from mux.system.muxd_command import muxctl_argv
from mux.system.tasks import BackgroundTasks

log = logging.getLogger(__name__)

# In order: the freedesktop proposal, Debian's alternative, then the big desktops'.
KNOWN_TERMINALS: tuple[tuple[str, ...], ...] = (
    ("xdg-terminal-exec",),
    ("x-terminal-emulator", "-e"),
    ("gnome-terminal", "--"),
    ("konsole", "-e"),
    ("xterm", "-e"),
)


def terminal_prefix(
    configured: Sequence[str] | None, which: Callable[[str], str | None] = shutil.which
) -> list[str] | None:
    """The argv prefix that runs a command in a new terminal; None when there is none."""
    if configured:
        return list(configured)
    for candidate in KNOWN_TERMINALS:
        if which(candidate[0]) is not None:
            return list(candidate)
    return None


class TerminalOpener:
    def __init__(self, configured: Sequence[str] | None) -> None:
        self._configured = list(configured) if configured else None
        self._tasks = BackgroundTasks()

    def open_attached(self, pane_id: int) -> bool:
        """Start a terminal attached to the pane; False (and a log line) when there is
        no terminal to start."""
        prefix = terminal_prefix(self._configured)
        if prefix is None:
            log.warning("no terminal to open pane %d in: set terminal_command", pane_id)
            return False
        argv = [*prefix, *muxctl_argv(), "attach", str(pane_id)]
        self._tasks.spawn(self._run(argv, pane_id))
        return True

    async def _run(self, argv: list[str], pane_id: int) -> None:
        log.info("opening pane %d in a terminal: %s", pane_id, argv)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True,
                cwd=os.path.expanduser("~"),
            )
        except OSError as e:
            log.warning("could not open a terminal for pane %d: %s", pane_id, e.strerror)
            return
        with contextlib.suppress(asyncio.CancelledError):
            status = await process.wait()  # reaped here, whenever the terminal closes
            if status != 0:
                log.info("the terminal of pane %d exited with status %d", pane_id, status)
