"""A pane watched for the overview: a read-only attach connection to muxd (it types
nothing, never resizes the pane, and starts no held pane), its output fed to an
emulator of this process's, so muxd only relays bytes and each thumbnail is drawn
from a screen that changed (docs/web.md#the-overview)."""

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from mux.protocol.regions import Rect
from muxctl.errors import CtlError
from muxctl.pane_link import PaneAttached, PaneEnded, PaneInterrupted, PaneLink, PaneOutput
from muxctl.pane_screen import PaneScreen
from muxctl.web.fd_ready import readable
from muxctl.web.thumbnails import Rows, rows_of_dump

READ_EVERY_SECONDS = 0.1  # half the overview's frame
ASKED_SIZE = (24, 80)  # (a read-only client's size only informs ListClients)


class PaneWatch:
    def __init__(
        self, attach_socket: Path, pane: int, size: tuple[int, int], changed: Callable[[], None]
    ) -> None:
        """`size`: the pane's (rows, cols) as listed; `changed` is called when its
        screen did, or when the watch ended."""
        self.pane = pane
        self.size = size
        self.ended = False
        self._attach_socket = attach_socket
        self._changed = changed
        self._screen: PaneScreen | None = None
        self._last_dump: str | None = None
        self.rows: Rows | None = None  # (None until the first repaint is drawn)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def redraw(self) -> bool:
        """Whether `rows`, the screen as the overview draws it, changed since the last
        call (output may change nothing that shows)."""
        if self._screen is None:
            return False
        dump = self._screen.dump()
        if dump == self._last_dump:
            return False
        self._last_dump = dump
        self.rows = rows_of_dump(dump, *self.size)
        return True

    async def _run(self) -> None:
        link = PaneLink(self._attach_socket, self.pane, ASKED_SIZE, glance=True)
        try:
            link.connect()
            link.write()
            while not link.ended:
                await readable(link.fileno())
                for event in link.receive():
                    self._take(event)
                # A thumbnail need not see every chunk as it comes: what comes meanwhile
                # waits in the socket and is read in one go (a busy pane wakes this
                # process 10 times a second, not at each of its writes).
                await asyncio.sleep(READ_EVERY_SECONDS)
        except CtlError:
            pass  # (muxd gone: the feed lists again, and watches what is there then)
        finally:
            link.close()
            self.ended = True
            self._changed()

    def _take(self, event: object) -> None:
        if isinstance(event, PaneAttached):
            self.size = (event.rows, event.cols)
            self._screen = PaneScreen(Rect(0, 0, event.rows, event.cols))
            self._last_dump = None
        elif isinstance(event, PaneOutput) and self._screen is not None:
            if event.repaint:
                self._screen.reset()
            self._screen.feed(event.data)
            self._changed()
        elif isinstance(event, PaneEnded | PaneInterrupted):
            pass  # (the link says it ended: the loop stops)
