"""The mouse in the window view (docs/windows.md#the-mouse), as tmux's `mouse on`: a
click focuses the pane under it, a border dragged resizes the split, the wheel scrolls
back through the pane's history (copy mode, ended by scrolling back down), a click on
a window of the status line shows it. A program
that asked for the mouse (vim's `mouse=a`, htop, mc) gets the events over its pane
instead, in its region's coordinates; one on the alternate screen that did not (less,
man) gets the wheel as arrow keys, as xterm's alternateScroll."""

from mux.protocol import attach as proto
from mux.protocol.border_drag import border_under
from mux.protocol.modes import ScreenModes
from mux.protocol.regions import Border, Rect
from muxctl.mouse import LEFT, WHEEL_UP, MouseEvent, for_program
from muxctl.pane_links import PaneLinks
from muxctl.status_line import window_at
from muxctl.view_commands import Done, ViewCommands
from muxctl.view_copy import ViewCopy
from muxctl.view_state import Shown
from muxctl.window_screen import WindowScreen

WHEEL_LINES = 5  # what a turn of the wheel scrolls copy mode by, as tmux's
WHEEL_ARROWS = 3  # the arrow keys a turn sends a program on the alternate screen


class ViewMouse:
    def __init__(
        self,
        shown: Shown,
        commands: ViewCommands,
        copy: ViewCopy,
        screen: WindowScreen,
        links: PaneLinks,
    ) -> None:
        self._shown = shown
        self._commands = commands
        self._copy = copy
        self._screen = screen
        self._links = links
        self._dragging: tuple[Border, int] | None = None  # the border, the line it is on
        self._held_by: int | None = None  # the pane whose program had the last press

    def on(self, event: MouseEvent) -> Done | None:
        """What the event does; a Done for the view to follow when a command came of it."""
        if self._dragging is not None:
            return self._drag(event)
        if self._held_by is not None and not event.wheel and not event.press:
            held = self._held_by  # (motion and the release go where the press went)
            if event.release:
                self._held_by = None
            self._to_program(held, event)
            return None
        self._held_by = None
        cell = (event.row, event.col)
        pane = self._pane_at(cell)
        if pane is None:
            return self._off_panes(event, cell)
        modes = self._screen.modes(pane) or ScreenModes()
        if self._copy.pane == pane:
            if event.wheel:
                self._copy.wheel(-WHEEL_LINES if event.button == WHEEL_UP else WHEEL_LINES)
            return None
        if modes.mouse_wanted and not self._links.read_only:
            done = self._commands.focus(pane) if event.press else None
            if event.press:
                self._held_by = pane
            self._to_program(pane, event)
            return done
        if event.press:
            return self._commands.focus(pane)
        if event.wheel and modes.on_alternate and not self._links.read_only:
            self._arrows(pane, modes, up=event.button == WHEEL_UP)
        elif event.wheel and event.button == WHEEL_UP:
            return self._commands.scroll_back(pane, WHEEL_LINES)
        return None

    def _off_panes(self, event: MouseEvent, cell: tuple[int, int]) -> Done | None:
        """On no pane: a press on a border starts dragging it (not while zoomed); one on a
        window of the status line shows that window."""
        shown = self._shown
        regions = shown.regions
        on_status = shown.status_parts and cell[0] == shown.size[0] - 1
        if event.press and event.button == LEFT and on_status:
            window = window_at(shown.status_parts, cell[1])
            return self._commands.show_window(window) if window is not None else None
        if event.press and event.button == LEFT and regions is not None:
            border = border_under(regions, cell) if self._shown.zoomed is None else None
            if border is not None:
                self._dragging = (border, border.left if border.vertical else border.top)
        return None

    def _drag(self, event: MouseEvent) -> Done | None:
        assert self._dragging is not None
        border, line = self._dragging
        if event.release or not event.motion:
            self._dragging = None
            return None
        to = event.col if border.vertical else event.row
        if to == line:
            return None
        self._dragging = (border, to)
        return self._commands.drag(border, to)

    def _pane_at(self, cell: tuple[int, int]) -> int | None:
        regions = self._shown.regions
        for pane, rect in regions.panes.items() if regions is not None else ():
            if _inside(rect, cell):
                return pane
        return None

    def _to_program(self, pane: int, event: MouseEvent) -> None:
        regions, link = self._shown.regions, self._links.get(pane)
        rect = regions.panes.get(pane) if regions is not None else None
        modes = self._screen.modes(pane)
        if rect is None or link is None or link.ended or modes is None:
            return
        # (a drag that leaves the region is reported at its edge)
        row = min(max(event.row - rect.top, 0), max(rect.rows - 1, 0))
        col = min(max(event.col - rect.left, 0), max(rect.cols - 1, 0))
        if report := for_program(event, modes, row, col):
            link.say(proto.Input(report))

    def _arrows(self, pane: int, modes: ScreenModes, *, up: bool) -> None:
        link = self._links.get(pane)
        if link is None or link.ended:
            return
        key = b"A" if up else b"B"
        arrow = (b"\x1bO" if modes.cursor_keys_application else b"\x1b[") + key
        link.say(proto.Input(arrow * WHEEL_ARROWS))


def _inside(rect: Rect, cell: tuple[int, int]) -> bool:
    row, col = cell
    return rect.top <= row < rect.top + rect.rows and rect.left <= col < rect.left + rect.cols
