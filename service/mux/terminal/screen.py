"""The emulated screen of one pane, behind a small interface so the emulator can be swapped.

Output is fed in batches (never byte by byte in front of clients): callers
append raw bytes with `feed` whenever it suits them, and the decoder keeps
UTF-8 sequences split across reads intact.

An emulator costs about 94 KiB for 80x24, so a screen only has one while
someone uses it: it is created on first use, and `hibernate` replaces it with
the escape sequences that recreate it (`dump`, a few KiB), fed into a fresh
emulator on the next use. avt's dump reproduces the whole state (cursor, pen,
modes, scroll region, charsets, alternate screen), so nothing is lost.
"""

import codecs
import time

# avt re-exports Vt without declaring it; its typed home is avt._avt.
from avt._avt import Vt


class Screen:
    __slots__ = ("_cols", "_decoder", "_dump", "_rows", "_vt", "last_used")

    def __init__(self, rows: int, cols: int) -> None:
        self._rows = rows
        self._cols = cols
        self._vt: Vt | None = None
        self._dump = ""  # the state while hibernating; "" is a blank screen
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.last_used = time.monotonic()

    @property
    def rows(self) -> int:
        return self._rows

    @property
    def cols(self) -> int:
        return self._cols

    @property
    def is_live(self) -> bool:
        return self._vt is not None

    def _live(self) -> Vt:
        self.last_used = time.monotonic()
        vt = self._vt
        if vt is None:
            # Scrollback lives in the raw-byte ring (`Scrollback`); emulator
            # lines cost about 2 KiB each, so the emulator keeps only the screen.
            vt = self._vt = Vt(self._cols, self._rows, scrollback_limit=0)
            if self._dump:
                vt.feed_str(self._dump)
                self._dump = ""
        return vt

    def hibernate(self) -> None:
        """Give the emulator's memory back; the next use recreates it exactly."""
        if self._vt is not None:
            self._dump = self._vt.dump()
            self._vt = None

    def feed(self, data: bytes) -> None:
        text = self._decoder.decode(data)
        if text:
            self._live().feed_str(text)

    def resize(self, rows: int, cols: int) -> None:
        if (rows, cols) != (self._rows, self._cols):
            self._live().resize(cols, rows)
            self._rows, self._cols = rows, cols

    def lines(self) -> list[str]:
        """The visible screen, one string a row, trailing blanks trimmed."""
        return [line.text.rstrip() for line in self._live().view()]

    def repaint(self) -> str:
        """Escape sequences that redraw this screen (cursor and colours included)."""
        return self._live().dump()
