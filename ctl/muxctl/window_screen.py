"""What `muxctl attach` draws of a whole window: every pane's emulated screen in its
region of the terminal, the border lines between regions (docs/windows.md#the-window-view).

Each pane's output is a byte stream for a terminal of its region's size; it is fed to
an emulator of this client's (muxctl.pane_screen), and `render` turns what changed on
those screens into escape sequences for the real terminal. The client composes, not
muxd: each client pays for its own rendering (one emulator per pane it shows, the
diffing, the drawing) and muxd stays lean, only relaying output as it does for one pane.

The drawing never writes outside the terminal, nor in the last column of its last row
(a terminal may scroll when that cell is written). Every run of coloured cells ends with
a reset, so between two renders the terminal's pen is the default one.
"""

from collections.abc import Mapping

from mux.protocol.modes import KEYPAD, ScreenModes
from mux.protocol.regions import Regions, border_cells, focus_border_cells
from mux.protocol.status_row import STATUS_STYLE
from muxctl.pane_screen import RESET, Cover, PaneScreen, row_form
from muxctl.status_line import fit

CLEAR = "\x1b[H\x1b[2J"
HIDE_CURSOR = "\x1b[?25l"
SHOW_CURSOR = "\x1b[?25h"
FOCUS_COLOUR = "\x1b[32m"  # green: the focused pane's border

# The cursor as drawn: (row, column) on the terminal, 0-based, and whether it is shown.
CursorState = tuple[int, int, bool]
KeyModes = tuple[bool, bool]  # application cursor keys, application keypad


def cup(row: int, col: int) -> str:
    """Move the cursor to (row, col), 0-based."""
    return f"\x1b[{row + 1};{col + 1}H"


class WindowScreen:
    """What the terminal shows of a window: each visible pane's emulator drawn in its
    region, the borders between them, the focused pane's border highlighted and its cursor shown."""

    def __init__(self, rows: int, cols: int) -> None:
        self._size = (max(0, rows), max(0, cols))
        self._regions = Regions({}, ())
        self._focus = -1
        self._panes: dict[int, PaneScreen] = {}
        self._screens: dict[int, tuple[int, int]] = {}  # (set_layout's)
        self._borders: dict[tuple[int, int], str] = {}  # the cells drawn, clipped
        self._focus_cells: set[tuple[int, int]] = set()
        self._changed: set[int] = set()  # panes fed or reset since the last render
        self._redraw = False  # everything, at the next render
        self._borders_stale = False
        self._covered = True  # panes and borders tile the terminal
        self._cursor: CursorState | None = None  # as last drawn
        self._status: str | None = None  # the status line's text (None: no status line)
        self._status_drawn: str | None = None
        self._key_modes: KeyModes = (False, False)  # the terminal's, as last set

    @property
    def size(self) -> tuple[int, int]:
        """(rows, cols) of the terminal drawn on."""
        return self._size

    def set_layout(
        self,
        regions: Regions,
        focus: int,
        size: tuple[int, int],
        screens: Mapping[int, tuple[int, int]] | None = None,
    ) -> None:
        """A new arrangement (or terminal size rows, cols): emulators are made for new panes,
        resized to their region for the others (a pane no longer in `regions` is dropped);
        everything is drawn again at the next render. The same arrangement and size again
        changes nothing (a new focus only redraws the borders and moves the cursor).
        `screens`: panes whose emulator is not their region's size but this (rows, cols)
        (a read-only view's: the panes keep the size their writers gave them)."""
        size = (max(0, size[0]), max(0, size[1]))
        screens = dict(screens or {})
        if regions == self._regions and size == self._size and screens == self._screens:
            if focus != self._focus:
                self._focus = focus
                self._focus_cells = focus_border_cells(regions, focus)
                self._borders_stale = True
            return
        self._regions, self._focus, self._size, self._screens = regions, focus, size, screens
        for pane in [pane for pane in self._panes if pane not in regions.panes]:
            del self._panes[pane]
            self._changed.discard(pane)
        for pane, rect in regions.panes.items():
            known = self._panes.get(pane)
            if known is None:
                self._panes[pane] = PaneScreen(rect, screens.get(pane))
            else:
                known.resize(rect, screens.get(pane))
        rows, cols = size
        self._borders = {
            cell: char
            for cell, char in border_cells(regions).items()
            if 0 <= cell[0] < rows and 0 <= cell[1] < cols
        }
        self._focus_cells = focus_border_cells(regions, focus)
        area = len(self._borders) + sum(
            max(0, min(rect.rows, rows - rect.top)) * max(0, min(rect.cols, cols - rect.left))
            for rect in regions.panes.values()
        )
        status = cols if self._status is not None else 0
        self._covered = area + status >= rows * cols  # (regions never overlap)
        self._redraw = True

    def set_status(self, text: str | None) -> None:
        """The status line on the terminal's last row (None: none; the layout's regions
        then leave that row to it). Drawn at the next render when it changed."""
        self._status = text

    def set_cover(self, pane: int, cover: Cover | None) -> None:
        """Rows (each as wide as the region, drawn) and a cursor in the region, drawn over
        `pane` instead of its screen (copy mode); None: its screen again."""
        known = self._panes.get(pane)
        if known is not None and known.cover != cover:
            known.cover = cover
            self._changed.add(pane)

    def has_corner(self, pane: int) -> bool:
        """Whether `pane`'s region holds the terminal's last cell (never drawn: a row
        drawn over it must leave that cell out)."""
        known = self._panes.get(pane)
        rows, cols = self._size
        rect = known.rect if known is not None else None
        return rect is not None and (rect.top + rect.rows, rect.left + rect.cols) == (rows, cols)

    def modes(self, pane: int) -> ScreenModes | None:
        """The modes `pane`'s program set (mouse reporting, the alternate screen...);
        None for a pane not shown."""
        known = self._panes.get(pane)
        return known.modes if known is not None else None

    def reset(self, pane: int) -> None:
        """A repaint of `pane` follows: its emulator starts blank (what is on the
        terminal stays until the repaint's rows are drawn over it)."""
        known = self._panes.get(pane)
        if known is not None:
            known.reset()
            self._changed.add(pane)

    def feed(self, pane: int, data: bytes) -> None:
        """Output of `pane` (UTF-8; a sequence split across calls is kept); an unknown
        pane's is ignored."""
        known = self._panes.get(pane)
        if known is not None and data:
            known.feed(data)
            self._changed.add(pane)

    def render(self) -> bytes:
        """Escape sequences that bring the terminal from what the last render drew to what
        is to be drawn now: only the rows of regions whose cells changed (compare each pane row's
        rendered form with what was drawn last), the borders when the layout or focus changed,
        then the cursor moved to the focused pane's cursor (absolute CUP, offset by its region)
        and shown, or hidden when that pane's cursor is hidden. b"" when nothing changed."""
        # After a new layout that leaves cells to no pane and no border, the terminal
        # is cleared so that nothing of the old one stays there.
        return self._draw(clear=self._redraw and not self._covered)

    def full(self) -> bytes:
        """Everything drawn again (after the terminal was cleared): \\x1b[H\\x1b[2J + all
        (the pen reset first, so the clear uses the default background)."""
        self._redraw = True
        return self._draw(clear=True)

    # -- drawing ------------------------------------------------------------------------

    def _draw(self, clear: bool) -> bytes:
        out: list[str] = [RESET, CLEAR] if clear else []
        redraw = self._redraw
        panes = self._panes if redraw else self._changed
        for pane in sorted(panes):
            known = self._panes[pane]
            if redraw:
                known.drawn.clear()
            self._draw_pane(known, out, clear)
        if redraw or self._borders_stale:
            self._draw_borders(out)
        self._draw_status(out, redraw)
        self._changed.clear()
        self._redraw = self._borders_stale = False
        cursor, keys = self._cursor_now(), self._key_modes_now()
        if not out and cursor == self._cursor and keys == self._key_modes:
            return b""
        self._cursor = cursor
        row, col, visible = cursor
        # The cursor hidden while rows are drawn (no flicker), the pen known to start with.
        head = "" if not out else HIDE_CURSOR if clear else HIDE_CURSOR + RESET
        tail = cup(row, col) + (SHOW_CURSOR if visible else HIDE_CURSOR)
        if keys != self._key_modes:  # (rawterm.RESET_MODES sets both back at the end)
            self._key_modes = keys
            tail += ("\x1b[?1h" if keys[0] else "\x1b[?1l") + ("\x1b=" if keys[1] else "\x1b>")
        return (head + "".join(out) + tail).encode()

    def _key_modes_now(self) -> KeyModes:
        """The cursor-key and keypad modes the focused pane's program set, for the
        terminal to send its keys in that form, as tmux does (none under a cover: copy
        mode and the chooser read keys of their own)."""
        pane = self._panes.get(self._focus)
        if pane is None or pane.cover is not None:
            return (False, False)
        return (pane.modes.cursor_keys_application, KEYPAD in pane.modes.enabled)

    def _draw_pane(self, pane: PaneScreen, out: list[str], cleared: bool) -> None:
        rect = pane.rect
        rows, cols = self._size
        width = min(rect.cols, cols - rect.left)
        height = min(rect.rows, rows - rect.top)
        if width <= 0 or height <= 0 or rect.top < 0 or rect.left < 0:
            return
        cover = pane.cover[0] if pane.cover is not None else None
        lines = pane.lines() if cover is None else []
        for row in range(min(height, len(cover)) if cover is not None else height):
            top = rect.top + row
            # Never the terminal's last cell: writing it may scroll the terminal.
            edge = width - 1 if top == rows - 1 and rect.left + width == cols else width
            if cover is not None:
                form = cover[row]
            else:  # (a screen smaller than its region: blank below it)
                form = row_form(lines[row].cells, edge) if row < len(lines) else " " * edge
            if pane.drawn.get(row) == form:
                continue
            pane.drawn[row] = form
            if edge <= 0 or (cleared and form == " " * edge):
                continue  # blank already
            out.append(cup(top, rect.left) + form)

    def _draw_status(self, out: list[str], redraw: bool) -> None:
        rows, cols = self._size
        text = self._status
        if text is None or rows <= 0 or (text == self._status_drawn and not redraw):
            return
        self._status_drawn = text
        width = max(cols - 1, 0)  # (never the terminal's last cell: it may scroll)
        out.append(cup(rows - 1, 0) + STATUS_STYLE + fit(text, width) + RESET)

    def _draw_borders(self, out: list[str]) -> None:
        rows, cols = self._size
        previous: tuple[int, int] | None = None
        coloured = False
        for cell in sorted(self._borders):
            row, col = cell
            if (row, col) == (rows - 1, cols - 1):
                continue
            if previous != (row, col - 1):
                out.append(cup(row, col))
            focused = cell in self._focus_cells
            if focused != coloured:
                out.append(FOCUS_COLOUR if focused else RESET)
                coloured = focused
            out.append(self._borders[cell])
            previous = cell
        if coloured:
            out.append(RESET)

    def _cursor_now(self) -> CursorState:
        """Where the focused pane's cursor is on the terminal; hidden without one."""
        rows, cols = self._size
        pane = self._panes.get(self._focus)
        rect = pane.rect if pane is not None else None
        if pane is None or rect is None or rect.rows <= 0 or rect.cols <= 0:
            return (0, 0, False)
        if rows <= 0 or cols <= 0 or rect.top >= rows or rect.left >= cols:
            return (0, 0, False)
        if pane.cover is not None:
            row, col = pane.cover[1]
            return (min(rect.top + row, rows - 1), min(rect.left + col, cols - 1), True)
        cursor = pane.vt.cursor
        # avt's column is one past the last after a write to it (a wrap pending).
        row = min(rect.top + min(cursor.row, rect.rows - 1), rows - 1)
        col = min(rect.left + min(cursor.col, rect.cols - 1), cols - 1)
        return (row, col, cursor.visible)
