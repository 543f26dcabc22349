"""The window the window view shows, as muxd has it (docs/windows.md#the-window-view):
its layout (ListWindows) placed on the terminal, a link to each pane of it, the status
line (ListPanes); asked for again after each command and every second."""

from typing import TYPE_CHECKING

from mux.protocol.layout import Leaf, Node, panes_of
from mux.protocol.regions import place
from muxctl.errors import CtlError, RemoteError
from muxctl.pane_links import PaneLinks
from muxctl.view_copy import ViewCopy
from muxctl.view_state import Shown
from muxctl.window_commands import find_window, plain_entries, status_of
from muxctl.window_screen import WindowScreen

if TYPE_CHECKING:
    from muxctl.client import MuxClient


class WindowGone(Exception):
    """The window's last pane closed."""


class ViewWindow:
    def __init__(
        self,
        client: "MuxClient",
        shown: Shown,
        links: PaneLinks,
        screen: WindowScreen,
        copy: ViewCopy,
        *,
        status: bool,
    ) -> None:
        """`status`: a status line on the terminal's last row."""
        self._client = client
        self._shown = shown
        self._links = links
        self._screen = screen
        self._copy = copy
        self._status = status
        self._screens: dict[int, tuple[int, int]] = {}  # read-only: each pane's own size

    def load(self) -> None:
        """The window of the pane shown (ListWindows), and the links and regions for it;
        WindowGone when it has ended."""
        shown = self._shown
        windows, found = find_window(self._client, shown.window, shown.focus)
        if found is None:
            raise WindowGone
        shown.follow(*found)
        if shown.zoomed is not None and shown.zoomed not in panes_of(found[1]):
            shown.zoomed = None
        watching = self._links.read_only
        panes = plain_entries(self._client, "ListPanes") if self._status or watching else []
        if watching:  # the panes keep the sizes their writers gave them
            self._screens = {int(p["id"]): (int(p["rows"]), int(p["cols"])) for p in panes}
        if self._status:
            state = "reattaching after an upgrade" if self._links.reattaching else ""
            state = "read-only" + (f", {state}" if state else "") if watching else state
            status = (shown.window, shown.pane, shown.zoomed is not None)
            text, shown.status_parts = status_of(windows, panes, status, state)
            self._screen.set_status(text)
        self.arrange()

    def arrange(self) -> None:
        """Regions for the terminal's size; links opened, closed and resized to match."""
        shown = self._shown
        assert shown.layout is not None
        tree: Node = Leaf(shown.zoomed) if shown.zoomed is not None else shown.layout
        rows, cols = shown.size
        shown.regions = place(tree, max(rows - self._status, 1), cols)
        self._links.match({pane: shown.size_of(pane) for pane in shown.regions.panes})
        self._screen.set_layout(shown.regions, shown.focus, shown.size, self._screens)
        self._copy.fit(shown.size_of)

    def refresh(self) -> None:
        """`load` again, once the window is known; while mux is between its two programs
        (an upgrade, off the bus), asked again the next time."""
        if not self._shown.window:
            return
        try:
            self.load()
        except (CtlError, RemoteError):
            if self._links.reattach_until is None:
                raise
            return
        self._links.upgrade_over()
