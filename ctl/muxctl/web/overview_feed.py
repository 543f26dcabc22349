"""What every open overview page is sent (docs/web.md#the-overview): the panes, listed
again over D-Bus when muxd signals a change (muxctl.web.signal_watch), and their
screens, from a read-only watch of each running pane (muxctl.web.pane_watch): only the
screens that changed, at most one frame (FRAME_SECONDS) apart. It runs while at least
one page is open: with none, nothing of muxd is watched.

A page that reads slowly is not waited for: its next message carries the latest list
and the screens changed since it last read, each once (OverviewPage)."""

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from muxctl.errors import CtlError
from muxctl.web.pane_watch import PaneWatch
from muxctl.web.thumbnails import Rows

FRAME_SECONDS = 0.18  # a screen at most this often: a little over 5 a second
RELIST_SECONDS = 1.0  # at most this often, however often muxd signals
HOSTS_RELIST_SECONDS = 2.0  # with hosts' panes shown: their screens read this often

# The panes, and the screens' text of those not running (held, exited: not watched).
Lister = Callable[[], Awaitable[tuple[list[dict[str, Any]], dict[str, list[str]]]]]


class OverviewPage:
    """One open page's share: what it has not been sent yet."""

    def __init__(self) -> None:
        self.panes: list[dict[str, Any]] | None = None
        self.screens: dict[str, Rows] = {}  # by the pane's key
        self.error: str | None = None  # why there is no list (muxd away), if so
        self.ready = asyncio.Event()

    def take(self) -> dict[str, Any]:
        """The next message for the page: the list if it changed, the screens that did."""
        message: dict[str, Any] = {"type": "update", "error": self.error}
        if self.panes is not None:
            message["panes"] = self.panes
        message["screens"] = dict(self.screens)
        self.panes, self.screens, self.error = None, {}, None
        self.ready.clear()
        return message


class OverviewFeed:
    def __init__(
        self,
        list_panes: Lister,
        attach_socket: Path,
        signals: Callable[[Callable[[], None]], Any],
    ) -> None:
        """`list_panes()`: the panes, and the text of those not running;
        `signals(notify)`: a started watch of muxd's signals (with stop()), calling
        `notify` from its own thread."""
        self._list_panes = list_panes
        self._attach_socket = attach_socket
        self._signals = signals
        self._pages: set[OverviewPage] = set()
        self._panes: list[dict[str, Any]] = []
        self._texts: dict[str, Rows] = {}  # screens of unwatched panes, by key
        self._watches: dict[int, PaneWatch] = {}  # this mux's running panes, by id
        self._changed: set[str] = set()  # keys
        self._list_due = asyncio.Event()
        self._screens_due = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # -- pages ----------------------------------------------------------------------

    def open_page(self) -> OverviewPage:
        page = OverviewPage()
        page.panes = self._panes
        page.screens = {key: runs for key in self._shown() if (runs := self._runs(key))}
        if self._panes:
            page.ready.set()
        self._pages.add(page)
        if self._task is None:
            self._task = asyncio.create_task(self._run())
        return page

    async def close_page(self, page: OverviewPage) -> None:
        self._pages.discard(page)
        if not self._pages:
            await self.stop()

    async def stop(self) -> None:
        """Nothing watched any more (the server stops)."""
        self._pages.clear()
        if self._task is not None:
            task, self._task = self._task, None
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- the feed -------------------------------------------------------------------

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()

        def notify() -> None:  # (from the watch's thread)
            loop.call_soon_threadsafe(self._list_due.set)

        watch = self._signals(notify)
        self._list_due.set()
        try:
            await asyncio.gather(self._keep_listing(), self._keep_drawing())
        finally:
            await asyncio.to_thread(watch.stop)
            for pane_watch in self._watches.values():
                await pane_watch.stop()
            self._watches.clear()

    async def _keep_listing(self) -> None:
        while True:
            remote = any(p["host"] for p in self._panes)
            with contextlib.suppress(TimeoutError):  # (hosts' screens: read again anyway)
                await asyncio.wait_for(
                    self._list_due.wait(), HOSTS_RELIST_SECONDS if remote else None
                )
            self._list_due.clear()
            await self._list()
            await asyncio.sleep(RELIST_SECONDS)

    async def _list(self) -> None:
        try:
            panes, texts = await self._list_panes()
        except CtlError as e:  # (muxd away or upgrading, or a refusal: said, and again)
            for page in self._pages:
                page.error = str(e)
                page.ready.set()
            self._list_due.set()
            return
        self._panes = panes
        await self._watch(p for p in panes if p["state"] == "running" and not p["host"])
        listed = {p["key"] for p in panes}
        self._texts = {
            key: [[[line]] if line else [] for line in text]
            for key, text in texts.items()
            if key in listed
        }
        self._changed |= set(self._texts)
        for page in self._pages:
            page.panes = panes
            page.ready.set()
        self._screens_due.set()

    async def _watch(self, running: Any) -> None:
        """A watch for each running pane (again for one resized: a repaint at its new
        size), none for the others."""
        wanted = {p["id"]: (p["rows"], p["cols"]) for p in running}
        for pane, watch in list(self._watches.items()):
            if pane not in wanted or watch.ended or watch.size != wanted[pane]:
                await watch.stop()
                del self._watches[pane]
        for pane, size in wanted.items():
            if pane not in self._watches:
                watch = PaneWatch(self._attach_socket, pane, size, self._mark(pane))
                self._watches[pane] = watch
                watch.start()

    def _mark(self, pane: int) -> Callable[[], None]:
        def changed() -> None:
            self._changed.add(str(pane))
            self._screens_due.set()
            watch = self._watches.get(pane)
            if watch is not None and watch.ended:
                self._list_due.set()  # (exited, or muxd upgrading: list again)

        return changed

    async def _keep_drawing(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._screens_due.wait()
            self._screens_due.clear()
            drawn_at = loop.time()
            changed, self._changed = self._changed, set()
            screens = {}
            for key in changed:
                watch = self._watches.get(int(key)) if key.isdecimal() else None
                if watch is not None and watch.redraw() and watch.rows is not None:
                    screens[key] = watch.rows
                elif watch is None and key in self._texts:
                    screens[key] = self._texts[key]
            if screens:
                for page in self._pages:
                    page.screens.update(screens)
                    page.ready.set()
            await asyncio.sleep(FRAME_SECONDS - (loop.time() - drawn_at))  # (a frame apart)

    def _shown(self) -> list[str]:
        return [p["key"] for p in self._panes]

    def _runs(self, key: str) -> Rows | None:
        """The pane's thumbnail as last drawn."""
        watch = self._watches.get(int(key)) if key.isdecimal() else None
        if watch is not None:
            return watch.rows
        return self._texts.get(key)
