"""What `muxctl attach` draws of a whole window: every pane's emulated screen in its
region of the terminal, the border lines between regions (docs/windows.md#the-window-view).

Each pane's output is a byte stream for a terminal of its region's size; it is fed to
an emulator of this client's (avt, used directly: muxctl may not import mux.terminal),
and `render` turns what changed on those screens into escape sequences for the real
terminal. The client composes, not muxd: each client pays for its own rendering (one
emulator per pane it shows, the diffing, the drawing) and muxd stays lean, only relaying
output as it does for one pane.

The drawing never writes outside the terminal, nor in the last column of its last row
(a terminal may scroll when that cell is written). Every run of coloured cells ends with
a reset, so between two renders the terminal's pen is the default one.
"""

import codecs
from collections.abc import Iterable

# avt re-exports Vt without declaring it; its typed home is avt._avt.
from avt._avt import Cell, Color, Line, Pen, Vt

from mux.protocol.combining import composed
from mux.protocol.dec_graphics import GraphicsTranslator
from mux.protocol.modes import ScreenModes
from mux.protocol.regions import Rect, Regions, border_cells, focus_border_cells
from muxctl.status_line import fit

FEED_SLICE_CHARS = 16384  # avt is slower on very long strings (see mux.terminal.screen)
RESET = "\x1b[0m"
CLEAR = "\x1b[H\x1b[2J"
HIDE_CURSOR = "\x1b[?25l"
SHOW_CURSOR = "\x1b[?25h"
STATUS_STYLE = "\x1b[0;30;42m"  # black on green, as tmux's status line
FOCUS_COLOUR = "\x1b[32m"  # green: the focused pane's border

# avt reports its internal failures as Rust panics, which reach Python as pyo3's
# PanicException: a BaseException. Only these pass through untouched.
_CONTROL_FLOW = (KeyboardInterrupt, SystemExit, GeneratorExit)

# The cursor as drawn: (row, column) on the terminal, 0-based, and whether it is shown.
CursorState = tuple[int, int, bool]
# Rows drawn over a pane's region, and the cursor in the region (copy mode's).
Cover = tuple[list[str], tuple[int, int]]


def cup(row: int, col: int) -> str:
    """Move the cursor to (row, col), 0-based."""
    return f"\x1b[{row + 1};{col + 1}H"


def _colour(color: Color | None, base: int) -> str:
    """SGR parameters of a colour: base 30 for the foreground, 40 for the background."""
    if isinstance(color, Color.Indexed):
        index = color[0]
        if index < 8:
            return str(base + index)
        if index < 16:
            return str(base + 60 + index - 8)
        return f"{base + 8};5;{index}"
    if isinstance(color, Color.RGB):
        return f"{base + 8};2;{color[0]};{color[1]};{color[2]}"
    return ""


def sgr(pen: Pen) -> str:
    """The SGR sequence selecting `pen` after a reset; "" for the default pen."""
    if pen.is_default():
        return ""
    flags = (
        (pen.bold, "1"),
        (pen.faint, "2"),
        (pen.italic, "3"),
        (pen.underline, "4"),
        (pen.blink, "5"),
        (pen.inverse, "7"),
        (pen.strikethrough, "9"),
    )
    params = [code for on, code in flags if on]
    params.extend(
        part
        for part in (_colour(pen.foreground, 30), _colour(pen.background, 40))
        if part  # (None: the default colour)
    )
    return f"\x1b[{';'.join(params)}m" if params else ""


def row_form(cells: Iterable[Cell], width: int) -> str:
    """One row of cells as drawn in `width` columns: runs of one pen each (a coloured
    run ends with a reset), clipped to the width (a wide character that would cross
    the edge becomes a space), padded with default spaces so old content is erased."""
    parts: list[str] = []
    run: list[str] = []
    run_sgr = ""
    col = 0

    def flush() -> None:
        if run:
            text = "".join(run)
            parts.append(f"{run_sgr}{text}{RESET}" if run_sgr else text)
            run.clear()

    for cell in cells:
        if col >= width:
            break
        cell_width = cell.width
        if cell_width == 0:  # the continuation of a wide character
            continue
        char = cell.char
        if cell_width > 1 and col + cell_width > width:
            char, cell_width = " ", 1
        cell_sgr = sgr(cell.pen)
        if cell_sgr != run_sgr:
            flush()
            run_sgr = cell_sgr
        run.append(char)
        col += cell_width
    if col < width:
        if run_sgr:
            flush()
            run_sgr = ""
        run.append(" " * (width - col))
    flush()
    return "".join(parts)


class _Pane:
    """One pane's emulator, its decoder, and the rows last drawn of it."""

    __slots__ = ("cover", "decoder", "drawn", "graphics", "modes", "rect", "vt")

    def __init__(self, rect: Rect) -> None:
        self.rect = rect
        self.modes = ScreenModes()  # (what the emulator does not say: mouse, alt screen)
        self.cover: Cover | None = None  # drawn instead of the screen (copy mode)
        self.vt = self._blank()
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.graphics = GraphicsTranslator()  # (as muxd's screens: xterm's glyphs)
        self.drawn: dict[int, str] = {}  # region row -> its form as last drawn

    def _blank(self) -> Vt:
        # The raw output is muxd's to keep: the emulator keeps only the screen.
        return Vt(max(1, self.rect.cols), max(1, self.rect.rows), scrollback_limit=0)

    def reset(self) -> None:
        self.vt = self._blank()
        self.decoder.reset()
        self.graphics = GraphicsTranslator()
        self.modes = ScreenModes()

    def resize(self, rect: Rect) -> None:
        self.rect = rect
        size = (max(1, rect.cols), max(1, rect.rows))
        if self.vt.size != size:
            try:
                self.vt.resize(*size)
            except _CONTROL_FLOW:
                raise
            except BaseException:
                self.vt = self._blank()

    def lines(self) -> list[Line]:
        try:
            return self.vt.view()
        except _CONTROL_FLOW:
            raise
        except BaseException:
            self.vt = self._blank()
            return self.vt.view()

    def feed(self, data: bytes) -> None:
        self.modes.feed(data)
        text = composed(self.graphics.translate(self.decoder.decode(data)))
        try:
            for start in range(0, len(text), FEED_SLICE_CHARS):
                self.vt.feed_str(text[start : start + FEED_SLICE_CHARS])
        except _CONTROL_FLOW:
            raise
        except BaseException:
            # What a program prints must not end the attach (nor is there anywhere to
            # say so on a terminal being drawn): the pane's screen starts blank.
            self.vt = self._blank()


class WindowScreen:
    """What the terminal shows of a window: each visible pane's emulator drawn in its
    region, the borders between them, the focused pane's border highlighted and its cursor shown."""

    def __init__(self, rows: int, cols: int) -> None:
        self._size = (max(0, rows), max(0, cols))
        self._regions = Regions({}, ())
        self._focus = -1
        self._panes: dict[int, _Pane] = {}
        self._borders: dict[tuple[int, int], str] = {}  # the cells drawn, clipped
        self._focus_cells: set[tuple[int, int]] = set()
        self._changed: set[int] = set()  # panes fed or reset since the last render
        self._redraw = False  # everything, at the next render
        self._borders_stale = False
        self._covered = True  # panes and borders tile the terminal
        self._cursor: CursorState | None = None  # as last drawn
        self._status: str | None = None  # the status line's text (None: no status line)
        self._status_drawn: str | None = None

    @property
    def size(self) -> tuple[int, int]:
        """(rows, cols) of the terminal drawn on."""
        return self._size

    def set_layout(self, regions: Regions, focus: int, size: tuple[int, int]) -> None:
        """A new arrangement (or terminal size rows, cols): emulators are made for new panes,
        resized to their region for the others (a pane no longer in `regions` is dropped);
        everything is drawn again at the next render. The same arrangement and size again
        changes nothing (a new focus only redraws the borders and moves the cursor)."""
        size = (max(0, size[0]), max(0, size[1]))
        if regions == self._regions and size == self._size:
            if focus != self._focus:
                self._focus = focus
                self._focus_cells = focus_border_cells(regions, focus)
                self._borders_stale = True
            return
        self._regions, self._focus, self._size = regions, focus, size
        for pane in [pane for pane in self._panes if pane not in regions.panes]:
            del self._panes[pane]
            self._changed.discard(pane)
        for pane, rect in regions.panes.items():
            known = self._panes.get(pane)
            if known is None:
                self._panes[pane] = _Pane(rect)
            else:
                known.resize(rect)
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
        cursor = self._cursor_now()
        if not out and cursor == self._cursor:
            return b""
        self._cursor = cursor
        row, col, visible = cursor
        # The cursor hidden while rows are drawn (no flicker), the pen known to start with.
        head = "" if not out else HIDE_CURSOR if clear else HIDE_CURSOR + RESET
        tail = cup(row, col) + (SHOW_CURSOR if visible else HIDE_CURSOR)
        return (head + "".join(out) + tail).encode()

    def _draw_pane(self, pane: _Pane, out: list[str], cleared: bool) -> None:
        rect = pane.rect
        rows, cols = self._size
        width = min(rect.cols, cols - rect.left)
        height = min(rect.rows, rows - rect.top)
        if width <= 0 or height <= 0 or rect.top < 0 or rect.left < 0:
            return
        cover = pane.cover[0] if pane.cover is not None else None
        lines = pane.lines() if cover is None else []
        for row in range(min(height, len(cover) if cover is not None else len(lines))):
            top = rect.top + row
            # Never the terminal's last cell: writing it may scroll the terminal.
            edge = width - 1 if top == rows - 1 and rect.left + width == cols else width
            form = cover[row] if cover is not None else row_form(lines[row].cells, edge)
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
