"""One pane's screen as the window view draws it (muxctl.window_screen): the pane's output
fed to an emulator of this client's (avt, used directly: muxctl may not import
mux.terminal), with xterm's DEC graphics glyphs and combining marks composed as muxd's
screens have them, and each row turned into what draws it: runs of one pen each.
"""

import codecs
from collections.abc import Iterable

# avt re-exports Vt without declaring it; its typed home is avt._avt.
from avt._avt import Cell, Line, Pen, Vt

from mux.protocol.combining import composed
from mux.protocol.dec_graphics import GraphicsTranslator
from mux.protocol.modes import ScreenModes
from mux.protocol.pen_sgr import sgr_params
from mux.protocol.regions import Rect

FEED_SLICE_CHARS = 16384  # avt is slower on very long strings (see mux.terminal.screen)
RESET = "\x1b[0m"

# avt reports its internal failures as Rust panics, which reach Python as pyo3's
# PanicException: a BaseException. Only these pass through untouched.
_CONTROL_FLOW = (KeyboardInterrupt, SystemExit, GeneratorExit)

# Rows drawn over a pane's region, and the cursor in the region (copy mode's).
Cover = tuple[list[str], tuple[int, int]]


def sgr(pen: Pen) -> str:
    """The SGR sequence selecting `pen` after a reset; "" for the default pen."""
    params = sgr_params(pen)
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


class PaneScreen:
    """One pane's emulator, its decoder, and the rows last drawn of it."""

    __slots__ = ("cover", "decoder", "drawn", "graphics", "modes", "rect", "screen", "vt")

    def __init__(self, rect: Rect, screen: tuple[int, int] | None = None) -> None:
        """`screen`: the pane's own size (rows, cols) when it is not its region's (a
        read-only view draws it clipped to its region)."""
        self.rect = rect
        self.screen = screen
        self.modes = ScreenModes()  # (what the emulator does not say: mouse, alt screen)
        self.cover: Cover | None = None  # drawn instead of the screen (copy mode)
        self.vt = self._blank()
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.graphics = GraphicsTranslator()  # (as muxd's screens: xterm's glyphs)
        self.drawn: dict[int, str] = {}  # region row -> its form as last drawn

    @property
    def size(self) -> tuple[int, int]:
        """The emulator's (cols, rows), as avt says them."""
        rows, cols = self.screen or (self.rect.rows, self.rect.cols)
        return max(1, cols), max(1, rows)

    def _blank(self) -> Vt:
        # The raw output is muxd's to keep: the emulator keeps only the screen.
        return Vt(*self.size, scrollback_limit=0)

    def reset(self) -> None:
        self.vt = self._blank()
        self.decoder.reset()
        self.graphics = GraphicsTranslator()
        self.modes = ScreenModes()

    def resize(self, rect: Rect, screen: tuple[int, int] | None = None) -> None:
        self.rect, self.screen = rect, screen
        size = self.size
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

    def dump(self) -> str:
        """avt's dump of the screen (the web view's thumbnails read their rows from it);
        after an internal failure of avt, the dump of a blank screen."""
        try:
            return str(self.vt.dump())
        except _CONTROL_FLOW:
            raise
        except BaseException:
            self.vt = self._blank()
            return str(self.vt.dump())

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
